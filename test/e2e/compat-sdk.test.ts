// The SDKs' own flows (docs/compatibility.md): the update flow of the ginger-php and ginger-python
// READMEs (GET, change, PUT the whole order), the same through PHP's json_decode/json_encode and
// through the plugin SDK (which drops some members), order_url after creating with a transaction,
// the payment method checked before its details, and customer_message on failed transactions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, validOrder, type TestService, type ApiResponse } from '../helpers/service.ts';
import { expectRejectedIn, limitedProject, type Expect } from '../helpers/rejects.ts';
import { payOrder } from '../helpers/pay.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const expectRejected = (call: () => Promise<ApiResponse>, e: Expect) => expectRejectedIn(t.db, call, e);
const get = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

/** A plugin's card order: customer with additional addresses, client, extra, order lines, webhook_url. */
const shopOrder = () =>
  cardOrder({
    customer: {
      ...validOrder().customer,
      address_type: 'customer',
      additional_addresses: [
        { address_type: 'customer', postal_code: '12345', country: 'UA', street: 'Soborna', city: 'Poltava' },
        { address_type: 'billing', postal_code: '1234567', country: 'NL', street: 'Donauweg', city: 'Amsterdam', housenumber: '10' },
      ],
    },
    client: {
      user_agent: 'PHPUnit Tests',
      platform_name: 'PHPSTORM',
      platform_version: '1',
      plugin_name: 'ginger-plugin-sdk',
      plugin_version: '1.0.0',
    },
    extra: { sw_order_id: '501' },
    order_lines: [
      { type: 'physical', merchant_order_line_id: '5', name: 'Milk', quantity: 1, amount: 100, vat_percentage: 5000, currency: 'EUR' },
    ],
    webhook_url: 'https://shop.example/webhook',
  });

/** What PHP's json_decode($json, true) then json_encode() makes of a body: every empty object becomes []. */
function phpRoundTrip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(phpRoundTrip);
  if (v && typeof v === 'object') {
    const entries = Object.entries(v);
    return entries.length ? Object.fromEntries(entries.map(([k, x]) => [k, phpRoundTrip(x)])) : [];
  }
  return v;
}

/** The plugin SDK's updateOrder: removeKeysRecursive of events, is_capturable, order_id, project_id and flags. */
function pluginSdkBody(v: unknown): unknown {
  const dropped = new Set(['events', 'is_capturable', 'order_id', 'project_id', 'flags']);
  if (Array.isArray(v)) return v.map(pluginSdkBody);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !dropped.has(k))
        .map(([k, x]) => [k, pluginSdkBody(x)]),
    );
  return v;
}

const created = async (body: unknown = shopOrder()) => {
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
};

test('README update flow: GET the order, change description, PUT it all back (case 3)', async () => {
  const o = await created();
  const order = await get(o.id);
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, { ...order, description: 'New Order Description' });
  assert.equal(res.status, 200, res.text);
  const after = await get(o.id);
  assert.equal(after.description, 'New Order Description');
  const { description: _d, modified: _m, ...rest } = after;
  const { description: _d0, modified: _m0, ...restBefore } = order;
  assert.deepEqual(rest, restBefore, 'nothing else changed');
});

test("update flow through PHP's json_decode/json_encode: [] for the empty objects", async () => {
  const o = await created(cardOrder({ extra: {} }));
  const order = phpRoundTrip(await get(o.id)) as Record<string, Json>;
  assert.deepEqual(order.extra, [], 'the PHP client really sends []');
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, { ...order, merchant_order_id: 'shop-1001-b' });
  assert.equal(res.status, 200, res.text);
  assert.equal((await get(o.id)).merchant_order_id, 'shop-1001-b');
});

test("plugin SDK update flow: the creation answer, members dropped, an additional address's country changed", async () => {
  const o = await created(); // the answer holds the one-time setup_token: sending it back is no change
  const body = pluginSdkBody(o) as Record<string, Json>;
  body.customer.additional_addresses[1].country = 'QQ';
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, body);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.customer.additional_addresses[1].country, 'QQ');
  assert.equal((await get(o.id)).customer.additional_addresses[1].country, 'QQ');
});

test('PUT changes customer, order_lines, extra, the URLs and references, and keeps what it leaves out', async () => {
  const o = await created();
  const change = {
    customer: {
      ...o.customer,
      first_name: 'Anne-Marie',
      postal_code: '1012ab',
      phone_numbers: [''],
      email_address: 'anne@example.nl',
      merchant_customer_id: 'c-77',
    },
    order_lines: [{ name: 'Tea', quantity: 3, amount: 665 }],
    extra: { cart: 'c-2' },
    return_url: 'https://shop.example/back',
    failure_url: 'https://shop.example/failed',
    webhook_url: 'https://shop.example/hook-2',
    merchant_order_id: 'shop-2002',
  };
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, change);
  assert.equal(res.status, 200, res.text);
  const after = await get(o.id);
  assert.equal(after.customer.first_name, 'Anne-Marie');
  assert.equal(after.customer.postal_code, '1012AB', 'validated and normalised as on creation');
  assert.equal(after.customer.phone_numbers, undefined);
  for (const k of ['order_lines', 'extra', 'return_url', 'failure_url', 'webhook_url', 'merchant_order_id'] as const)
    assert.deepEqual(after[k], change[k], k);
  assert.equal(after.description, o.description, 'a field left out keeps its value');
  // the columns search and reports read follow the new customer
  const [row] = await t.db.query<{ customer_email: string; merchant_customer_id: string }>(
    'SELECT customer_email, merchant_customer_id FROM orders WHERE id = $1',
    [o.id],
  );
  assert.deepEqual({ ...row }, { customer_email: 'anne@example.nl', merchant_customer_id: 'c-77' });
});

const readOnlyChanges: Array<[name: string, change: (o: Json) => Record<string, unknown>, field: string]> = [
  ['amount', (o) => ({ ...o, amount: o.amount + 1 }), 'amount'],
  ['currency', (o) => ({ ...o, currency: 'USD' }), 'currency'],
  ['client', (o) => ({ ...o, client: { ...o.client, plugin_version: '9' } }), 'client'],
  ['created', (o) => ({ ...o, created: '2020-01-01T00:00:00+00:00' }), 'created'],
];

/** The order as GET answered it, as much of it as the changes below touch. */
type SentOrder = Record<string, unknown> & { transactions: Record<string, unknown>[] };

/** What the service keeps up to date: a client's stale copy of it is ignored, whatever its value. */
const serverKept: Array<[name: string, change: (o: SentOrder) => Record<string, unknown>]> = [
  ['status', (o) => ({ ...o, status: 'completed' })],
  ['a transaction status', (o) => ({ ...o, transactions: [{ ...o.transactions[0], status: 'completed' }] })],
  ['a transaction added', (o) => ({ ...o, transactions: [...o.transactions, o.transactions[0]] })],
  ['flags', (o) => ({ ...o, flags: [] })],
  ['refunded_amount', (o) => ({ ...o, refunded_amount: 5 })],
  ['modified', (o) => ({ ...o, modified: '2020-01-01T00:00:00+00:00' })],
];
for (const [name, change] of serverKept) {
  test(`PUT: a stale ${name} is ignored, the merchant's change is taken`, async () => {
    const o = await created();
    const before = await get(o.id);
    const res = await t.api('PUT', `/v1/orders/${o.id}/`, { ...change(before), description: 'gift wrapped' });
    assert.equal(res.status, 200, res.text);
    const after = await get(o.id);
    assert.equal(after.description, 'gift wrapped');
    assert.equal(after.status, before.status);
    assert.deepEqual(after.flags, before.flags);
    assert.equal(after.transactions.length, before.transactions.length);
    assert.equal(after.transactions[0].status, before.transactions[0].status);
  });
}
for (const [name, change, field] of readOnlyChanges) {
  test(`PUT: a changed read-only field (${name}) -> 400 ValidationError naming ${field}, nothing changed`, async () => {
    const o = await created();
    const before = await get(o.id);
    const res = await expectRejected(() => t.api('PUT', `/v1/orders/${o.id}/`, { ...change(before), description: 'x' }), { field });
    assert.match(res.body.error.value, /read-only/);
    assert.deepEqual(await get(o.id), before);
  });
}

test('PUT: a wrong type in a merchant field and an unknown field are refused by name', async () => {
  const o = await get((await created()).id);
  await expectRejected(() => t.api('PUT', `/v1/orders/${o.id}/`, { ...o, order_lines: { name: 'Tea' } }), { field: 'order_lines' });
  await expectRejected(() => t.api('PUT', `/v1/orders/${o.id}/`, { ...o, customer: { ...o.customer, address_type: 'shipping' } }), {
    field: 'customer.address_type',
  });
  await expectRejected(() => t.api('PUT', `/v1/orders/${o.id}/`, { ...o, descripton: 'typo' }), { field: 'descripton' });
});

test('PUT of a final order is refused with 409, whatever it holds', async () => {
  const paid = await payOrder(t);
  assert.equal(paid.status, 'completed');
  const res = await t.api('PUT', `/v1/orders/${paid.id}/`, { ...paid, description: 'late' });
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.type, 'ValidationError');
});

test('order_url on an order created with a transaction, showing that transaction (case 5); gone once paid', async () => {
  const o = await created();
  assert.equal(o.order_url, `${t.url}/pay/${o.id}/`);
  const page = await fetch(o.order_url);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.ok(
    html.includes(`/pay/${o.id}/transactions/${o.transactions[0].id}/card/`),
    "the order page holds the transaction's own card form",
  );
  const paid = await payOrder(t);
  assert.equal(paid.order_url, undefined, 'a paid order has nothing left to pay');
});

test('payment_method is checked before its details (case 6)', async () => {
  const unknown = await expectRejected(
    () => t.api('POST', '/v1/orders/', cardOrder({}, { payment_method: 'tikkie', payment_method_details: { issuer_id: 'INGBNL2A' } })),
    { field: 'transactions[0].payment_method' },
  );
  assert.match(unknown.body.error.value, /payment method tikkie is not known/);
  const limited = await limitedProject(t);
  const inactive = await expectRejected(
    () =>
      t.api('POST', '/v1/orders/', cardOrder({}, { payment_method: 'wallet-a-pay', payment_method_details: { issuer_id: 'x' } }), {
        key: limited.api_key,
      }),
    { status: 403, type: 'Forbidden', field: 'transactions[0].payment_method' },
  );
  assert.match(inactive.body.error.value, /wallet-a-pay is not active/);
  // a known, active method still refuses details it does not take, by name
  await expectRejected(() => t.api('POST', '/v1/orders/', cardOrder({}, { payment_method_details: { issuer_id: 'x' } })), {
    field: 'transactions[0].payment_method_details.issuer_id',
  });
  const o = await created(validOrder());
  await expectRejected(
    () => t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'tikkie', payment_method_details: { issuer_id: 'x' } }),
    {
      field: 'payment_method',
    },
  );
});

const failures: Array<[pan: string, locale: string | undefined, status: string, message: RegExp]> = [
  ['4000000000000002', 'nl_NL', 'declined', /^Je betaling is geweigerd\./],
  ['4000000000000002', undefined, 'declined', /^Your payment was declined\./],
  ['4000000000000127', 'en-GB', 'declined', /^Your card could not be used\./],
  ['4000000000000119', 'nl', 'error', /^Je betaling kon niet worden voltooid\./],
  ['4000000000000119', 'ja', 'error', /^Your payment could not be completed\./],
];
for (const [pan, locale, status, message] of failures) {
  test(`customer_message on a ${status} transaction, in locale ${locale ?? '(none)'} (case 7)`, async () => {
    const customer = { ...validOrder().customer, locale };
    if (!locale) delete (customer as Record<string, unknown>).locale;
    const o = await payOrder(t, { customer }, { pan });
    const [txn] = o.transactions;
    assert.equal(txn.status, status);
    assert.ok(txn.reason, 'reason stays beside it');
    assert.match(txn.customer_message, message);
  });
}

test('no customer_message on a transaction that did not fail', async () => {
  const o = await payOrder(t);
  assert.equal(o.status, 'completed');
  assert.equal(o.transactions[0].status, 'accepted');
  assert.equal(o.transactions[0].customer_message, undefined);
});
