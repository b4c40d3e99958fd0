// The orders API's routes beyond creation: malformed and unknown ids in the path, PUT,
// DELETE, starting a transaction, trailing slashes, Basic authentication and API keys. Each
// refused request answers the error body and stores nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { validOrder, cardOrder, type TestService, type ApiResponse } from '../helpers/service.ts';
import { rotateKey } from '../../src/services/platform/tenancy.ts';
import { moveTransaction } from '../../src/services/payments/transitions.ts';
import * as orders from '../../src/store/payments/orders.ts';
import { expectRejectedIn, limitedProject, ordersService, type Expect } from '../helpers/rejects.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
/** A test project whose settings deactivate wallet-a-pay and limit credit-card to EUR. */
let limited: Awaited<ReturnType<typeof limitedProject>>;
before(async () => ({ t, limited } = await ordersService()));
after(async () => t?.close());

const expectRejected = (call: () => Promise<ApiResponse>, e: Expect) => expectRejectedIn(t.db, call, e);

// ---- uuid path parameters ----------------------------------------------------------------

const badIds = [
  'not-a-uuid',
  '12345',
  '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e1',
  '3b0c4f6e2f574f3f9a556a5d3c1c9e11x',
  'urn:uuid:3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11',
];
const idRoutes: Array<[method: string, path: (id: string) => string, body?: unknown]> = [
  ['GET', (id) => `/v1/orders/${id}/`],
  ['PUT', (id) => `/v1/orders/${id}/`, { description: 'x' }],
  ['DELETE', (id) => `/v1/orders/${id}/`],
  ['POST', (id) => `/v1/orders/${id}/transactions/`, { payment_method: 'credit-card' }],
];
for (const [method, path, body] of idRoutes) {
  for (const id of badIds) {
    test(`path: ${method} ${path(':order_id')} with malformed id ${JSON.stringify(id)} -> 400 on order_id`, () =>
      expectRejected(() => t.api(method, path(encodeURIComponent(id)), body), { field: 'order_id' }).then(() => {}));
  }
  test(`path: ${method} ${path(':order_id')} with an unknown id -> 404 NotFound`, () =>
    expectRejected(() => t.api(method, path('3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11'), body), {
      status: 404,
      type: 'NotFound',
      field: null,
    }).then(() => {}));
}

test('path: an order id in capitals finds the order', async () => {
  const o = await t.api('POST', '/v1/orders/', validOrder());
  const res = await t.api('GET', `/v1/orders/${o.body.id.toUpperCase()}/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.id, o.body.id);
});

// ---- PUT /v1/orders/{id}/ ----------------------------------------------------------------

test('PUT updates the merchant fields of an open order', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const update = {
    description: 'Three mugs',
    merchant_order_id: 'shop-1002',
    return_url: 'https://shop.example/r2',
    failure_url: 'https://shop.example/f2',
    webhook_url: 'https://shop.example/hook',
    extra: { note: 'gift' },
  };
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, update);
  assert.equal(res.status, 200, res.text);
  const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  for (const view of [res.body, got]) {
    for (const [k, v] of Object.entries(update)) assert.deepEqual(view[k], v, k);
    assert.equal(view.amount, o.amount);
    assert.equal(view.status, 'new');
    assert.equal(view.customer.email_address, 'ada@example.com');
  }
  assert.ok(got.modified >= o.modified);
  assert.equal(got.transactions[0].payment_method_details.setup_token, undefined, 'setup_token is shown only on creation');
});

test('PUT with an empty body changes nothing', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, {});
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.description, o.description);
  assert.equal(res.body.merchant_order_id, o.merchant_order_id);
});

const putCases: Array<[name: string, body: unknown, field: string]> = [
  ['a field that cannot change (amount)', { amount: 1 }, 'amount'],
  ['a field that cannot change (currency)', { currency: 'USD' }, 'currency'],
  ['a read-only field changed (merchant_id)', { merchant_id: '00000000-0000-4000-8000-000000000000' }, 'merchant_id'],
  ['a read-only field changed (id)', { id: '00000000-0000-4000-8000-000000000000' }, 'id'],
  ['customer invalid as on creation', { customer: { first_name: 'Eve', country: 'XX' } }, 'customer.country'],
  ['an unknown field', { descripton: 'typo' }, 'descripton'],
  ['return_url with a javascript: scheme', { return_url: 'javascript:alert(1)' }, 'return_url'],
  ['webhook_url not a uri', { webhook_url: 'not a uri' }, 'webhook_url'],
  ['failure_url not a string', { failure_url: 1 }, 'failure_url'],
  ['description not a string', { description: 5 }, 'description'],
  ['extra not an object', { extra: [1] }, 'extra'],
];
for (const [name, body, field] of putCases) {
  test(`PUT: ${name} -> 400 ValidationError on ${field} and the order is unchanged`, async () => {
    const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
    await expectRejected(() => t.api('PUT', `/v1/orders/${o.id}/`, body), { field });
    const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
    assert.deepEqual(got, o);
  });
}

test('PUT: malformed JSON -> 400 ValidationError', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, undefined, { raw: '{"description": ' });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.type, 'ValidationError');
});

test('PUT on a final (cancelled) order -> 409 and nothing changes', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  assert.equal((await t.api('DELETE', `/v1/orders/${o.id}/`)).status, 200);
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, { description: 'too late' });
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.status, 409);
  assert.equal((await t.api('GET', `/v1/orders/${o.id}/`)).body.description, o.description);
});

test("PUT, DELETE and start-transaction on another project's order -> 404", async () => {
  const other = await t.newProject();
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  for (const [method, path, body] of [
    ['PUT', `/v1/orders/${o.id}/`, { description: 'x' }],
    ['DELETE', `/v1/orders/${o.id}/`, undefined],
    ['POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card' }],
  ] as const) {
    await expectRejected(() => t.api(method, path, body, { key: other.api_key }), { status: 404, type: 'NotFound', field: null });
  }
  const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  assert.equal(got.status, 'new');
  assert.equal(got.description, o.description);
});

// ---- POST /v1/orders/{id}/transactions/ --------------------------------------------------

test('start a transaction on an order created without one; a second is TransactionAlreadyStarted', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('POST', `/v1/orders/${o.id}/transactions/`, {
    payment_method: 'credit-card',
    capture_mode: 'manual',
    expiration_period: 'PT10M',
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.id, o.id);
  assert.equal(res.body.transactions.length, 1);
  const [txn] = res.body.transactions;
  assert.equal(txn.status, 'new');
  assert.equal(txn.capture_mode, 'manual');
  assert.equal(txn.expiration_period, 'PT10M');
  assert.equal(txn.amount, o.amount);
  assert.match(txn.payment_method_details.setup_token, /^[0-9a-f-]{36}$/);
  assert.equal(txn.payment_url, `${t.url}/pay/${o.id}/transactions/${txn.id}/`);
  const again = await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card' }), {
    status: 409,
    type: 'TransactionAlreadyStarted',
    field: null,
  });
  assert.match(again.body.error.value, /transaction/);
  const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  assert.equal(got.transactions.length, 1);
  assert.equal(got.transactions[0].payment_method_details.setup_token, undefined);
});

test('start a transaction on an order created with one -> 409 TransactionAlreadyStarted', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions`, { payment_method: 'credit-card' }), {
    status: 409,
    type: 'TransactionAlreadyStarted',
    field: null,
  });
});

const startCases: Array<[name: string, body: unknown, e: Expect]> = [
  ['no payment_method', { capture_mode: 'manual' }, { field: 'payment_method' }],
  ['an unknown payment_method', { payment_method: 'bitcoin' }, { field: 'payment_method' }],
  ['a bad capture_mode', { payment_method: 'credit-card', capture_mode: 'later' }, { field: 'capture_mode' }],
  ['a zero expiration_period', { payment_method: 'credit-card', expiration_period: 'PT0S' }, { field: 'expiration_period' }],
  ['an unknown field', { payment_method: 'credit-card', amount: 5 }, { field: 'amount' }],
  [
    'AFT without receiver',
    { payment_method: 'credit-card', transaction_type: 'aft' },
    { status: 422, type: 'MissingInformationToCreateTransaction', field: 'payment_method_details.receiver_account_number' },
  ],
];
for (const [name, body, e] of startCases) {
  test(`start a transaction with ${name} -> ${e.status ?? 400} on ${e.field}`, async () => {
    const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
    await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions/`, body), e);
    // the order can still start a valid one afterwards
    assert.equal((await t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card' })).status, 201);
  });
}

test('start a transaction with a method inactive in the project -> 403 Forbidden', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder(), { key: limited.api_key })).body;
  await expectRejected(
    () => t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'wallet-a-pay' }, { key: limited.api_key }),
    {
      status: 403,
      type: 'Forbidden',
      field: 'payment_method',
    },
  );
});

// ---- DELETE /v1/orders/{id}/ -------------------------------------------------------------

test('DELETE cancels an order without a transaction', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('DELETE', `/v1/orders/${o.id}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'cancelled');
  assert.ok(res.body.completed, 'a final order has its completed time');
});

test('DELETE cancels an order whose transaction is pending', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const txn = (await orders.findTransaction(t.db, t.project.project_id, o.id, o.transactions[0].id))!;
  await t.db.tx((q) => moveTransaction(t.svc.ctx, q, txn, 'pending', new Date()));
  const res = await t.api('DELETE', `/v1/orders/${o.id}/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'cancelled');
  assert.deepEqual(
    res.body.transactions[0].events.map((e: Json) => e.event),
    ['new', 'pending', 'cancelled'],
  );
});

for (const status of ['processing', 'accepted', 'declined', 'expired'] as const) {
  test(`DELETE an order whose transaction is ${status} -> 409 CanNotCancelTransaction`, async () => {
    const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
    const txn = (await orders.findTransaction(t.db, t.project.project_id, o.id, o.transactions[0].id))!;
    await t.db.tx((q) => moveTransaction(t.svc.ctx, q, txn, status, new Date()));
    const before = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
    const res = await t.api('DELETE', `/v1/orders/${o.id}/`);
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.type, 'CanNotCancelTransaction');
    assert.deepEqual((await t.api('GET', `/v1/orders/${o.id}/`)).body, before);
  });
}

// ---- Paths without trailing slash --------------------------------------------------------

test('every orders and project route answers without its trailing slash, with no redirect', async () => {
  const o = await t.api('POST', '/v1/orders', validOrder());
  assert.equal(o.status, 201, o.text);
  const id = o.body.id;
  const calls: Array<[string, string, unknown, number]> = [
    ['GET', `/v1/orders/${id}`, undefined, 200],
    ['PUT', `/v1/orders/${id}`, { description: 'no slash' }, 200],
    ['POST', `/v1/orders/${id}/transactions`, { payment_method: 'credit-card' }, 201],
    ['DELETE', `/v1/orders/${id}`, undefined, 200],
    ['GET', '/v1/merchants/self/projects/self', undefined, 200],
    ['GET', '/v1/merchants/self/projects/self/currencies', undefined, 200],
    ['POST', '/v1/test/clock/run-due-jobs', {}, 200],
  ];
  for (const [method, path, body, status] of calls) {
    const res = await t.api(method, path, body);
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    assert.equal(res.headers.get('location'), null);
  }
});

// ---- Authentication ----------------------------------------------------------------------

test('Basic auth: key as username with empty password, and the bare base64 of "key:"', async () => {
  const key = t.project.api_key;
  const forms = [
    `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
    `basic ${Buffer.from(`${key}:`).toString('base64')}`,
    `Basic ${Buffer.from(key).toString('base64')}`,
  ];
  for (const authorization of forms) {
    const res = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: null, headers: { authorization } });
    assert.equal(res.status, 200, `${authorization}: ${res.text}`);
    assert.equal(res.body.id, t.project.project_id);
  }
});

test('Basic auth: wrong forms -> 401 with the error body', async () => {
  const key = t.project.api_key;
  const forms = [
    `Bearer ${key}`,
    key,
    `Basic ${Buffer.from(`:${key}`).toString('base64')}`,
    `Basic ${Buffer.from(`${key.slice(0, -1)}:`).toString('base64')}`,
    'Basic !!!',
    'Basic ',
  ];
  for (const authorization of forms) {
    const res = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: null, headers: { authorization } });
    assert.equal(res.status, 401, `${authorization}: ${res.text}`);
    assert.equal(res.body.error.type, 'Unauthorized');
    assert.equal(res.body.error.status, 401);
  }
});

test('a request without a key is 401 before its body is validated, and stores nothing', () =>
  expectRejected(() => t.api('POST', '/v1/orders/', { bad: true }, { key: null }), { status: 401, type: 'Unauthorized', field: null }).then(
    () => {},
  ));

test('key rotation: the old key is 401 afterwards, the new key works, orders stay visible', async () => {
  const p = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder(), { key: p.api_key });
  assert.equal(o.status, 201);
  const rotated = await rotateKey(t.svc.ctx, p.project_id);
  assert.equal(rotated.project_id, p.project_id);
  assert.match(rotated.api_key, /^test_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(rotated.api_key, p.api_key);
  const old = await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key });
  assert.equal(old.status, 401);
  assert.equal(old.body.error.type, 'Unauthorized');
  const fresh = await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: rotated.api_key });
  assert.equal(fresh.status, 200);
  const twice = await rotateKey(t.svc.ctx, p.project_id);
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: rotated.api_key })).status, 401);
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: twice.api_key })).status, 200);
  const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1 AND revoked IS NULL', [
    p.project_id,
  ]);
  assert.equal(rows[0].n, 1);
});

test('API keys are stored only as hashes', async () => {
  const p = await t.newProject('live');
  assert.match(p.api_key, /^live_/);
  const rows = await t.db.query<{ key_hash: string; hint: string }>('SELECT key_hash, hint FROM api_keys WHERE project_id = $1', [
    p.project_id,
  ]);
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0].key_hash, p.api_key);
  assert.ok(!p.api_key.includes(rows[0].key_hash) && !rows[0].key_hash.includes(p.api_key));
  // the portal's hint: the prefix and the last four characters, never the key
  assert.equal(rows[0].hint, `${p.api_key.slice(0, 9)}…${p.api_key.slice(-4)}`);
});
