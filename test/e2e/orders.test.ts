import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, validOrder, type TestService } from '../helpers/service.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

test('creates an order without a transaction and reads it back', async () => {
  const res = await t.api('POST', '/v1/orders/', validOrder());
  assert.equal(res.status, 201, res.text);
  const o = res.body;
  assert.match(o.id, /^[0-9a-f-]{36}$/);
  assert.equal(o.status, 'new');
  assert.equal(o.project_id, t.project.project_id);
  assert.equal(o.merchant_id, t.project.merchant_id);
  assert.deepEqual(o.flags, ['is-test']);
  assert.equal(o.order_url, `${t.url}/pay/${o.id}/`);
  assert.deepEqual(o.transactions, []);
  assert.equal(o.customer.postal_code, '1012 LG');
  const got = await t.api('GET', `/v1/orders/${o.id}/`);
  assert.equal(got.status, 200);
  assert.equal(got.body.id, o.id);
  assert.equal(got.body.amount, 1995);
});

test('creates a card transaction with setup_token and payment_url', async () => {
  const res = await t.api('POST', '/v1/orders', cardOrder());
  assert.equal(res.status, 201, res.text);
  const [txn] = res.body.transactions;
  assert.equal(res.body.order_url, `${t.url}/pay/${res.body.id}/`, 'the customer can still pay: order_url too');
  assert.equal(txn.status, 'new');
  assert.equal(txn.credit_debit, 'credit');
  assert.equal(txn.expiration_period, 'PT30M');
  assert.equal(txn.amount, 1995);
  assert.equal(txn.currency, 'EUR');
  assert.match(txn.payment_method_details.setup_token, /^[0-9a-f-]{36}$/);
  assert.equal(txn.payment_url, `${t.url}/pay/${res.body.id}/transactions/${txn.id}/`);
  assert.deepEqual(
    txn.events.map((e: Json) => e.event),
    ['new'],
  );
});

test('paths answer with and without trailing slash, without redirect', async () => {
  const a = await t.api('POST', '/v1/orders', validOrder());
  const b = await t.api('POST', '/v1/orders/', validOrder());
  assert.equal(a.status, 201);
  assert.equal(b.status, 201);
  const c = await t.api('GET', `/v1/orders/${a.body.id}`);
  assert.equal(c.status, 200);
});

test('wrong or missing key gives 401 with the error body', async () => {
  const none = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: null });
  assert.equal(none.status, 401);
  assert.equal(none.body.error.type, 'Unauthorized');
  const wrong = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: 'test_nope' });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error.status, 401);
});

test("a project's key never sees another project's order", async () => {
  const other = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder());
  const res = await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: other.api_key });
  assert.equal(res.status, 404);
  assert.equal(res.body.error.type, 'NotFound');
});

test('unknown route, malformed JSON and malformed id give the error body', async () => {
  const r404 = await t.api('GET', '/v1/nothing/');
  assert.equal(r404.status, 404);
  assert.equal(r404.body.error.type, 'NotFound');
  const bad = await t.api('POST', '/v1/orders/', undefined, { raw: '{"currency": "EUR",' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.type, 'ValidationError');
  const id = await t.api('GET', '/v1/orders/not-a-uuid/');
  assert.equal(id.status, 400);
  assert.equal(id.body.error.field, 'order_id');
  const unknown = await t.api('GET', '/v1/orders/3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11/');
  assert.equal(unknown.status, 404);
});

test('project endpoints', async () => {
  const p = await t.api('GET', '/v1/merchants/self/projects/self');
  assert.equal(p.status, 200);
  assert.equal(p.body.id, t.project.project_id);
  assert.equal(p.body.status, 'active-testing');
  assert.deepEqual(p.body.payment_methods, ['credit-card', 'wallet-a-pay', 'wallet-b-pay']);
  const c = await t.api('GET', '/v1/merchants/self/projects/self/currencies/');
  assert.equal(c.status, 200);
  assert.ok(c.body.payment_methods['credit-card'].currencies.includes('EUR'));
});

test('cancel a new order', async () => {
  const o = await t.api('POST', '/v1/orders/', cardOrder());
  const res = await t.api('DELETE', `/v1/orders/${o.body.id}/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'cancelled');
  assert.equal(res.body.transactions[0].status, 'cancelled');
  const again = await t.api('DELETE', `/v1/orders/${o.body.id}/`);
  assert.equal(again.status, 409);
  assert.equal(again.body.error.type, 'CanNotCancelTransaction');
});

test('a transaction expires after its expiration_period through run-due-jobs', async () => {
  const o = await t.api('POST', '/v1/orders/', cardOrder({}, { expiration_period: 'PT10M' }));
  const early = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT5M' });
  assert.equal(early.status, 200, early.text);
  assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`)).body.status, 'new');
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT6M' });
  const after = await t.api('GET', `/v1/orders/${o.body.id}/`);
  assert.equal(after.body.status, 'expired');
  assert.equal(after.body.transactions[0].status, 'expired');
});

test('openapi document is served', async () => {
  const res = await t.api('GET', '/openapi.json', undefined, { key: null });
  assert.equal(res.status, 200);
  assert.equal(res.body.openapi, '3.1.0');
  assert.ok(res.body.paths['/v1/orders/']);
});

for (const store of ['memory', 'redis'] as const) {
  test(`rate limit (${store}) answers 429 with Retry-After and RateLimit headers`, async () => {
    const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '3' };
    if (store === 'redis') env.REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
    const limited = await startTestService({ env });
    try {
      // the limit counts per wall-clock minute: start early in one, so the five requests share it
      const into = Date.now() % 60_000;
      if (into > 45_000) await new Promise((r) => setTimeout(r, 60_000 - into + 100));
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 5; i++) {
        last = await limited.api('GET', '/v1/merchants/self/projects/self/');
        statuses.push(last.status);
      }
      assert.deepEqual(statuses.slice(0, 3), [200, 200, 200]);
      assert.equal(statuses[3], 429);
      assert.equal(last!.body.error.type, 'RateLimitExceeded');
      assert.ok(Number(last!.headers.get('retry-after')) > 0);
      assert.match(last!.headers.get('ratelimit') ?? '', /remaining=0/);
      assert.equal(last!.headers.get('ratelimit-policy'), '3;w=60');
    } finally {
      await limited.close();
    }
  });
}
