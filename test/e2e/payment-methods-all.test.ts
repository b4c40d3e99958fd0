// Every payment method of the table (docs/payment-methods.md), not a sample: each outcome of each
// method's page writes the order's webhook (outbox) per status change, captures and refunds send
// theirs, search and the CSV report find each method by its name, the ledger check passes; and each
// method's currency, amount and field rules are broken one by one (status and error body).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { methodInfo, SANDBOX_METHODS, type SandboxMethod } from '../../src/domain/payment-methods.ts';
import { bnplLines, csrfIn, sandboxCustomer } from '../helpers/methods.ts';
import { expectRejectedIn } from '../helpers/rejects.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
let shop: { project_id: string; api_key: string };
before(async () => {
  t = await startTestService();
  // a project of its own, so that search and the report see exactly this file's orders
  shop = await t.newProject();
  await setActiveMethods(t.svc.ctx, shop.project_id, 'all');
});
after(async () => t?.close());

const customer = sandboxCustomer({
  get url() {
    return t.url;
  },
});
const api = (method: string, path: string, body?: unknown) => t.api(method, path, body, { key: shop.api_key });
const outbox = async (id: string) =>
  (await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [id])).map((r) => r.status);
const get = async (id: string) => (await api('GET', `/v1/orders/${id}/`)).body;

/** An order of the method within all its rules: its first currency, a country it serves, order lines for BNPL. */
const orderOf = (method: SandboxMethod, over: Record<string, unknown> = {}) => {
  const info = methodInfo(method);
  return validOrder({
    amount: 2995,
    currency: info.currencies[0] ?? 'EUR',
    customer: { ...validOrder().customer, locale: 'en_GB', country: info.countries?.[0] ?? 'NL' },
    failure_url: 'https://shop.example/failed',
    webhook_url: 'https://shop.example/hook',
    ...(info.kind === 'bnpl' ? { order_lines: bnplLines.map((l) => ({ ...l, currency: info.currencies[0] })) } : {}),
    transactions: [{ payment_method: method, ...(method === 'ideal' ? { payment_method_details: { issuer_id: 'INGBNL2A' } } : {}) }],
    ...over,
  });
};
async function create(method: SandboxMethod, over: Record<string, unknown> = {}) {
  const res = await api('POST', '/v1/orders/', orderOf(method, over));
  assert.equal(res.status, 201, `${method}: ${res.text}`);
  return res.body;
}

const pageMethods = SANDBOX_METHODS.filter((m) => ['redirect', 'bnpl'].includes(methodInfo(m).kind));
const byMethod = new Map<string, string[]>();
const made = (method: string, id: string) => byMethod.set(method, [...(byMethod.get(method) ?? []), id]);

test('each outcome of each method with a sandbox page sends one webhook per status change', async () => {
  const outcomes: [string, string, string[]][] = [
    ['paid', 'completed', ['completed']],
    ['cancelled', 'cancelled', ['cancelled']],
    ['expired', 'expired', ['expired']],
    ['failed', 'error', ['error']],
  ];
  for (const method of pageMethods) {
    const bnpl = methodInfo(method).kind === 'bnpl';
    for (const [outcome, status, hooks] of outcomes) {
      const o = await create(method);
      made(method, o.id);
      await customer.choose(o, outcome);
      const after = await get(o.id);
      assert.equal(after.status, status, `${method} ${outcome}`);
      assert.deepEqual(await outbox(o.id), hooks, `${method} ${outcome}`);
      if (outcome !== 'paid') continue;
      assert.equal(after.transactions[0].status, bnpl ? 'accepted' : 'completed', method);
      if (bnpl) {
        const cap = await api('POST', `/v1/orders/${o.id}/transactions/${o.transactions[0].id}/captures/`, {
          order_lines: [{ merchant_order_line_id: 'tea' }],
        });
        assert.equal(cap.status, 201, cap.text);
        assert.deepEqual(await outbox(cap.body.id), ['completed'], `${method}: the capture order's webhook`);
      }
      const refund = await api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 995 });
      assert.equal(refund.status, 201, refund.text);
      assert.deepEqual(await outbox(refund.body.id), ['completed'], `${method}: the refund order's webhook`);
    }
    // left open, then paid later on the same page
    const o = await create(method);
    made(method, o.id);
    await customer.choose(o, 'open');
    await customer.choose(o, 'paid');
    assert.deepEqual(await outbox(o.id), ['processing', 'completed'], `${method} open, then paid`);
  }
});

test('bank transfer and viacash: money arrived or expired, each a webhook; amex and pay-now paid, each a webhook', async () => {
  for (const method of SANDBOX_METHODS.filter((m) => ['transfer', 'voucher'].includes(methodInfo(m).kind))) {
    const paid = await create(method);
    made(method, paid.id);
    assert.equal(paid.status, 'processing');
    const ok = await api('POST', `/v1/test/orders/${paid.id}/bank-transfer/`, { outcome: 'paid', amount: 2995 });
    assert.equal(ok.status, 200, ok.text);
    // created processing (the answer says so, no webhook), then the money arrives
    assert.deepEqual(await outbox(paid.id), ['completed'], method);
    const lapsed = await create(method);
    made(method, lapsed.id);
    assert.equal((await api('POST', `/v1/test/orders/${lapsed.id}/bank-transfer/`, { outcome: 'expired' })).status, 200);
    assert.deepEqual(await outbox(lapsed.id), ['expired'], method);
  }

  // amex: the card form takes an American Express card; 3-D Secure (frictionless) and back to the shop
  const amex = await create('amex');
  made('amex', amex.id);
  const txn = amex.transactions[0];
  const action = `/pay/${amex.id}/transactions/${txn.id}/card/`;
  const html = await customer.page(txn.payment_url);
  let to: string | null = await customer.submit(action, {
    csrf: csrfIn(html, action),
    name: 'Ada Lovelace',
    pan: '378282246310005',
    expiry: '12/39',
    cvc: '1234',
  });
  for (let hop = 0; to && !to.startsWith('https://shop.example') && hop < 10; hop++) {
    const res: Response = await fetch(new URL(to, t.url), { redirect: 'manual' });
    await res.arrayBuffer();
    to = res.headers.get('location');
  }
  assert.match(String(to), /^https:\/\/shop\.example\/return/);
  const paidAmex = await get(amex.id);
  assert.equal(paidAmex.status, 'completed');
  assert.equal(paidAmex.transactions[0].payment_method_brand, 'amex');
  // a card payment: processing while it is authorized, then completed
  assert.deepEqual(await outbox(amex.id), ['processing', 'completed']);

  // pay-now: the customer picks bancontact on the transaction's page, then pays
  const now = await create('pay-now', { customer: { ...validOrder().customer, locale: 'en_GB', country: 'BE' } });
  made('pay-now', now.id);
  const list = await customer.page(now.transactions[0].payment_url);
  const pick = `/pay/${now.id}/method/`;
  await customer.submit(pick, { csrf: csrfIn(list, pick), transaction_id: now.transactions[0].id, payment_method: 'bancontact' });
  await customer.choose(await get(now.id), 'paid');
  const paidNow = await get(now.id);
  assert.equal(paidNow.transactions[0].payment_method, 'bancontact');
  assert.deepEqual(await outbox(now.id), ['completed']);
});

test('search and the CSV report find each method by its name; the ledger check passes for all of them', async () => {
  // amex is a card transaction of the brand amex; pay-now becomes the method chosen
  const query: Record<string, [string, string]> = { amex: ['payment_method_brand', 'amex'], 'pay-now': ['payment_method', 'bancontact'] };
  for (const [method, ids] of byMethod) {
    const [field, name] = query[method] ?? ['payment_method', method];
    const found = await api('POST', '/v1/search/orders/', { query: `transactions.${field}:${name}` });
    assert.equal(found.status, 200, found.text);
    const got = new Set(found.body.orders.map((o: Json) => o.id));
    for (const id of ids) assert.ok(got.has(id), `${method}: order ${id} found`);
    // besides them only their refund and capture orders (of the same method), and for bancontact the pay-now order that chose it
    const own = [...ids, ...(method === 'bancontact' ? (byMethod.get('pay-now') ?? []) : [])];
    if (method !== 'pay-now')
      for (const o of found.body.orders) assert.ok(own.includes(o.id) || own.includes(o.related_order_id), `${method}: ${o.id} is its own`);
  }
  const csv = await api('POST', '/v1/search/orders/?format=csv', { query: '*' });
  assert.equal(csv.status, 200);
  const rows = csv.text.split('\n');
  for (const [method, ids] of byMethod) {
    const name = method === 'pay-now' ? 'bancontact' : method === 'amex' ? 'credit-card' : method;
    for (const id of ids)
      assert.ok(
        rows.some((r) => r.includes(id) && r.includes(`,${name},`)),
        `${method}: ${id} in the report`,
      );
  }
  assert.deepEqual((await checkLedger(t.db, shop.project_id)).violations, []);
});

test("each method's currency, amount and field rules broken: status and error body, nothing stored", async () => {
  for (const method of SANDBOX_METHODS) {
    const info = methodInfo(method);
    // a currency the method does not take (the project has the table's currencies for it)
    const foreign = ['EUR', 'USD', 'SEK', 'BRL'].find((c) => !info.currencies.includes(c))!;
    {
      const res = await expectRejectedIn(t.db, () => api('POST', '/v1/orders/', orderOf(method, { currency: foreign })), {
        status: 403,
        type: 'Forbidden',
        field: 'transactions[0].payment_method',
      });
      assert.equal(res.body.error.value, `payment method ${method} does not accept ${foreign} in this project`);
    }
    if (info.min !== undefined) {
      const small = info.min - 1;
      const lines = info.kind === 'bnpl' ? { order_lines: [{ ...bnplLines[1], amount: small, quantity: 1 }] } : {};
      const res = await expectRejectedIn(t.db, () => api('POST', '/v1/orders/', orderOf(method, { amount: small, ...lines })), {
        field: 'amount',
      });
      assert.equal(res.body.error.value, `payment method ${method} takes amounts from ${info.min} (minor units)`);
    }
    if (info.max !== undefined) {
      const big = info.max + 1;
      const lines = info.kind === 'bnpl' ? { order_lines: [{ ...bnplLines[1], amount: big, quantity: 1 }] } : {};
      const res = await expectRejectedIn(t.db, () => api('POST', '/v1/orders/', orderOf(method, { amount: big, ...lines })), {
        field: 'amount',
      });
      assert.equal(res.body.error.value, `payment method ${method} takes amounts up to ${info.max} (minor units)`);
    }
    if (info.issuer !== 'optional' && info.kind !== 'hosted') {
      const withIssuer = orderOf(method, { transactions: [{ payment_method: method, payment_method_details: { issuer_id: 'INGBNL2A' } }] });
      const res = await expectRejectedIn(t.db, () => api('POST', '/v1/orders/', withIssuer), {
        field: 'transactions[0].payment_method_details.issuer_id',
      });
      assert.match(res.body.error.value, /takes no issuer_id/);
    }
    if (info.kind === 'bnpl') {
      const res = await expectRejectedIn(t.db, () => api('POST', '/v1/orders/', orderOf(method, { order_lines: undefined })), {
        field: 'order_lines',
      });
      assert.equal(res.body.error.value, `payment method ${method} needs order_lines`);
      const far = await expectRejectedIn(
        t.db,
        () => api('POST', '/v1/orders/', orderOf(method, { customer: { ...orderOf(method).customer, country: 'US', state: 'NY' } })),
        { field: 'customer.country' },
      );
      assert.equal(far.body.error.value, `payment method ${method} is not available in US`);
    } else if (info.kind !== 'card' && info.kind !== 'hosted') {
      const res = await expectRejectedIn(
        t.db,
        () => api('POST', '/v1/orders/', orderOf(method, { transactions: [{ payment_method: method, capture_mode: 'manual' }] })),
        { field: 'transactions[0].capture_mode' },
      );
      assert.equal(res.body.error.value, `capture_mode is not supported for ${method}`);
    }
  }
});
