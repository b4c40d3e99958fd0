// Webhook delivery slots are fair per project, and an endpoint that keeps failing is held back by
// a circuit breaker (issue 28, finding 5): one merchant's dead endpoint slows only its own
// deliveries, and the breaker shows in that merchant's delivery log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';

let t: TestService;
const servers: Server[] = [];
before(async () => {
  t = await startTestService({
    env: {
      WEBHOOK_TIMEOUT_MS: '3000',
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

  // the breaker: after three failures in a row the endpoint is not called any more, and the log says why
  const held = await waitFor('a delivery held back by the breaker', async () => {
    for (const id of noisyOrders) {
      const res = await t.api('GET', `/v1/orders/${id}/webhooks/`, undefined, { key: noisy.api_key });
      const a = res.body.deliveries[0]?.attempts?.[0];
      if (a?.error && /circuit breaker open/.test(a.error)) return a;
    }
    return undefined;
  });
  assert.match(held.error, /failed 3 times in a row; not sent/);
  await waitFor('every noisy delivery to have had its first attempt', async () => {
    const [{ n }] = await t.db.query<{ n: number }>(
      `SELECT count(DISTINCT d.id)::int AS n FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.project_id = $1`,
      [noisy.project_id],
    );
    return n === noisyOrders.length;
  });
  // at most the project's share (2) in flight when the third failure opened the breaker, plus the third
  assert.ok(dead.calls.length <= 4, `the dead endpoint was called ${dead.calls.length} times`);
});
