// Webhook delivery slots are fair per project, and an endpoint that keeps failing is held back by
// a circuit breaker (issue 28, finding 5): one merchant's dead endpoint slows only its own
// deliveries, and the breaker shows in that merchant's delivery log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { LOCAL_RECEIVERS, startTestService, validOrder, type TestService } from '../helpers/service.ts';

let t: TestService;
const servers: Server[] = [];
before(async () => {
  t = await startTestService({
    env: {
      WEBHOOK_TIMEOUT_MS: '3000',
      ...LOCAL_RECEIVERS,
      WEBHOOK_RETRY_INTERVAL_MS: '60000',
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_CONCURRENCY_PER_PROJECT: '2',
      WEBHOOK_BREAKER_FAILURES: '3',
      WEBHOOK_BREAKER_SECONDS: '60',
    },
  });
});
after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await t?.close();
});

/** A receiver: answers 200 at once, or (dead) takes the request and never answers. */
async function receiver(dead: boolean) {
  const calls: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls.push(Date.now());
      if (!dead) res.writeHead(200).end('ok');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, calls };
}

async function cancelledOrder(key: string, webhookUrl: string): Promise<string> {
  const o = await t.api('POST', '/v1/orders/', validOrder({ webhook_url: webhookUrl }), { key });
  assert.equal(o.status, 201, o.text);
  assert.equal((await t.api('DELETE', `/v1/orders/${o.body.id}/`, undefined, { key })).status, 200);
  return o.body.id;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a dead endpoint's deliveries take at most the project's share of slots; another merchant's webhook goes ahead of them; the breaker opens", async () => {
  const noisy = await t.newProject('test');
  const good = await t.newProject('test');
  const dead = await receiver(true);
  const alive = await receiver(false);
  const noisyOrders: string[] = [];
  for (let i = 0; i < 16; i++) noisyOrders.push(await cancelledOrder(noisy.api_key, dead.url));
  await waitFor('the dead endpoint to be called', async () => dead.calls.length > 0);
  const goodOrder = await cancelledOrder(good.api_key, alive.url);
  await waitFor("the good merchant's webhook", async () => alive.calls.length === 1);
  // it went ahead: most of the noisy deliveries had not even been tried when it arrived
  const attempted = await t.db.query<{ n: number }>(
    `SELECT count(DISTINCT d.id)::int AS n FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.project_id = $1`,
    [noisy.project_id],
  );
  assert.ok(attempted[0].n < noisyOrders.length, `noisy deliveries tried before the good one arrived: ${attempted[0].n}`);
  // the receiver has the POST; the attempt is logged once its answer is read: wait for the log
  const goodAttempts = await waitFor('the good delivery logged', async () => {
    const log = await t.api('GET', `/v1/orders/${goodOrder}/webhooks/`, undefined, { key: good.api_key });
    const attempts = log.body.deliveries[0]?.attempts ?? [];
    return attempts.length > 0 && attempts;
  });
  assert.equal(goodAttempts.length, 1, 'delivered at the first attempt');

  // the breaker: after three failures in a row the endpoint is not called any more; the other
  // deliveries wait for it to close, with no attempt counted (their log shows the next attempt)
  const heldIds = await waitFor('every noisy delivery tried or held back by the breaker', async () => {
    const rows = await t.db.query<{ id: string; attempts: number; next_attempt_at: Date }>(
      'SELECT id, attempts, next_attempt_at FROM webhook_deliveries WHERE project_id = $1',
      [noisy.project_id],
    );
    const heldBack = rows.filter((r) => r.attempts === 0 && new Date(r.next_attempt_at).getTime() > Date.now() + 30_000);
    return (
      rows.length === noisyOrders.length && rows.every((r) => r.attempts > 0 || heldBack.includes(r)) && heldBack.length > 0 && heldBack
    );
  });
  const [{ order_id }] = await t.db.query<{ order_id: string }>('SELECT order_id FROM webhook_deliveries WHERE id = $1', [heldIds[0].id]);
  const held = (await t.api('GET', `/v1/orders/${order_id}/webhooks/`, undefined, { key: noisy.api_key })).body.deliveries[0];
  assert.deepEqual(held.attempts, [], 'held back by the breaker: no attempt counted');
  assert.equal(held.status, 'pending');
  assert.ok(new Date(held.next_attempt).getTime() > Date.now() + 30_000, held.next_attempt);
  // at most the project's share (2) in flight when the third failure opened the breaker, plus the third
  assert.ok(dead.calls.length <= 4, `the dead endpoint was called ${dead.calls.length} times`);
});

test("under the test clock every one of the 10 attempts reaches the endpoint; a test project's breaker is its own", async () => {
  const shop = await t.newProject('test');
  const neighbour = await t.newProject('test');
  const got: string[] = [];
  const failing = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got.push(req.url ?? '');
      res.writeHead(req.url === '/ok' ? 200 : 503).end('busy');
    });
  });
  servers.push(failing);
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(failing.address() as { port: number }).port}`;
  const order = await cancelledOrder(shop.api_key, `${origin}/hook`);
  const log = async () => (await t.api('GET', `/v1/orders/${order}/webhooks/`, undefined, { key: shop.api_key })).body.deliveries[0];
  await waitFor('the first attempt', async () => (await log())?.attempts.length >= 1);
  for (let i = 0; i < 30 && (await log()).status === 'pending'; i++) {
    const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT2M' }, { key: shop.api_key });
    assert.equal(ran.status, 200, ran.text);
    if (i === 4) {
      // the shop's breaker is open between its attempts; the neighbour's delivery to the same endpoint goes at once
      await cancelledOrder(neighbour.api_key, `${origin}/ok`);
      await waitFor("the neighbour's webhook", async () => got.includes('/ok'));
    }
  }
  const d = await log();
  assert.equal(d.status, 'failed');
  assert.equal(d.attempts.length, 10);
  for (const a of d.attempts) assert.equal(a.response_status, 503, JSON.stringify(a));
  assert.equal(got.filter((u) => u === '/hook').length, 10, 'the endpoint received every attempt');
});
