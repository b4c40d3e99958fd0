// An order created without a transaction expires by itself (job expire_order, on the project's
// clock): in the API, on its hosted page and by webhook, whether or not a customer ever came.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { LOCAL_RECEIVERS, startTestService, validOrder, type TestService } from '../helpers/service.ts';

let t: TestService;
let hookUrl: string;
const calls: { order_id: string; event: string }[] = [];
let closeReceiver: () => Promise<void>;

before(async () => {
  t = await startTestService({ env: LOCAL_RECEIVERS });
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push(JSON.parse(body));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  closeReceiver = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
});
after(async () => {
  await closeReceiver?.();
  await t?.close();
});

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

const runDue = async (advance: string, key?: string) => {
  const res = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance }, key ? { key } : {});
  assert.equal(res.status, 200, res.text);
};

test('an order without a transaction and expiration_period PT1M is expired after a minute, with its webhook', async () => {
  const p = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder({ expiration_period: 'PT1M', webhook_url: hookUrl }), { key: p.api_key });
  assert.equal(o.status, 201, o.text);
  assert.deepEqual(o.body.transactions, []);

  await runDue('PT30S', p.api_key);
  assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key })).body.status, 'new', 'not before its minute');

  await runDue('PT31S', p.api_key);
  const after = await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key });
  assert.equal(after.body.status, 'expired');
  assert.ok(after.body.completed, 'an expired order is completed');
  const call = await waitFor('the webhook', () => calls.find((c) => c.order_id === o.body.id));
  assert.equal(call.event, 'status_changed');

  // the hosted page agrees, and no transaction can be started any more
  const page = await fetch(o.body.order_url);
  assert.match(await page.text(), /data-outcome="expired"/);
  const start = await t.api('POST', `/v1/orders/${o.body.id}/transactions/`, { payment_method: 'credit-card' }, { key: p.api_key });
  assert.equal(start.status, 409, start.text);
  assert.equal(start.body.error.type, 'TransactionAlreadyStarted');
  assert.equal(start.body.error.value, 'this order has expired', 'the reason, not "already has a transaction": it has none');
});

test("without an expiration_period the project's default (PT30M) applies", async () => {
  const p = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder(), { key: p.api_key });
  await runDue('PT29M', p.api_key);
  assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key })).body.status, 'new');
  await runDue('PT2M', p.api_key);
  assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key })).body.status, 'expired');
});

test('past its expiry but before the job ran, the order takes no transaction', async () => {
  const p = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder({ expiration_period: 'PT1M' }), { key: p.api_key });
  // move the clock without running the jobs: advance, then start the transaction straight away
  // (the worker may expire the order first: the answer is the same)
  const { advanceClock } = await import('../../src/store/platform/projects.ts');
  await advanceClock(t.db, p.project_id, 61_000);
  t.svc.ctx.keyCache?.clear();
  const start = await t.api('POST', `/v1/orders/${o.body.id}/transactions/`, { payment_method: 'credit-card' }, { key: p.api_key });
  assert.equal(start.status, 409, start.text);
  assert.match(start.body.error.value, /expired/);
});

test('an order whose transaction started before its expiry is left to the transaction', async () => {
  const p = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder({ expiration_period: 'PT1M' }), { key: p.api_key });
  const start = await t.api(
    'POST',
    `/v1/orders/${o.body.id}/transactions/`,
    { payment_method: 'credit-card', expiration_period: 'PT10M' },
    { key: p.api_key },
  );
  assert.equal(start.status, 201, start.text);
  await runDue('PT2M', p.api_key);
  const mid = (await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key })).body;
  assert.equal(mid.status, 'new', 'the order job does not expire an order with a transaction');
  assert.equal(mid.transactions[0].status, 'new');
  await runDue('PT9M', p.api_key);
  assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key })).body.status, 'expired');
});
