// Test projects' webhooks and private addresses (issue 42, item 12): a test event to 127.0.0.1
// showed 300 bytes of the internal service's answer in the delivery log. On one developer's
// machine (the embedded store) reaching the own receiver is the point of the sandbox; on a shared
// service (PostgreSQL) it is SSRF. WEBHOOK_PRIVATE_ADDRESSES=allow or refuse decides for test
// projects, the store's default when unset; live projects always refuse.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { setProjectWebhookUrl } from '../../src/services/webhooks/endpoints.ts';
import type { ProjectId } from '../../src/domain/ids.ts';
import type { Json } from '../helpers/json.ts';

/** What an internal service answers: it must never show in a refused delivery's log. */
const INTERNAL = 'internal-admin-console: db password is hunter2';

let t: TestService;
let calls = 0;
let hook = '';
const server = createServer((req, res) => {
  calls++;
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(INTERNAL));
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/internal`;
  t = await startTestService({ env: { WEBHOOK_RETRY_INTERVAL_MS: '60000', WEBHOOK_BREAKER_FAILURES: '0' } });
});
after(async () => {
  await t?.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const setting = (v: 'allow' | 'refuse' | undefined) => (t.config.webhook.privateAddresses = v);

/** A test event to the project's URL: the attempt as the delivery log shows it, and whether the receiver was called. */
async function testEvent(key: string): Promise<{ attempt: Json; reached: boolean }> {
  const before = calls;
  const res = await t.api('POST', '/v1/webhooks/test/', undefined, { key });
  assert.equal(res.status, 200, res.text);
  const logged = await t.api('GET', `/v1/webhooks/deliveries/?event=test&limit=1`, undefined, { key });
  assert.deepEqual(logged.body.deliveries[0].attempts[0], res.body.attempts[0], 'the log shows what the answer showed');
  return { attempt: res.body.attempts[0], reached: calls > before };
}

function assertRefused(attempt: Json, reached: boolean, host = '127.0.0.1') {
  assert.equal(reached, false, 'nothing was sent');
  assert.match(
    attempt.error,
    new RegExp(`^${host.replace(/[.[\]]/g, '\\$&')} is a loopback address: refused for a test project .*WEBHOOK_PRIVATE_ADDRESSES`),
  );
  assert.equal(attempt.response_status, undefined);
  assert.equal(attempt.response_excerpt, undefined, 'no internal answer in the log');
}

test('by default: allowed on the embedded store (the sandbox), refused on PostgreSQL (a shared service)', async () => {
  setting(undefined);
  const p = await t.newProject('test');
  await setProjectWebhookUrl(t.svc.ctx, p.project_id as ProjectId, hook);
  const { attempt, reached } = await testEvent(p.api_key);
  if (t.db.kind === 'pglite') {
    assert.equal(reached, true);
    assert.equal(attempt.response_status, 200);
    assert.equal(attempt.response_excerpt, INTERNAL);
  } else assertRefused(attempt, reached);
});

test('WEBHOOK_PRIVATE_ADDRESSES=refuse: test events and status changes to loopback are refused, naming the setting', async () => {
  setting('refuse');
  try {
    const p = await t.newProject('test');
    await setProjectWebhookUrl(t.svc.ctx, p.project_id as ProjectId, hook);
    const event = await testEvent(p.api_key);
    assertRefused(event.attempt, event.reached);
    // a name that is this machine is refused without asking DNS
    await setProjectWebhookUrl(t.svc.ctx, p.project_id as ProjectId, hook.replace('127.0.0.1', 'localhost'));
    const named = await testEvent(p.api_key);
    assertRefused(named.attempt, named.reached, 'localhost');
    // an order's status change, delivered by the job
    const before = calls;
    const o = await t.api('POST', '/v1/orders/', validOrder({ webhook_url: hook }), { key: p.api_key });
    assert.equal(o.status, 201, o.text);
    assert.equal((await t.api('DELETE', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key })).status, 200);
    let attempt: Json;
    for (let i = 0; ; i++) {
      const log = await t.api('GET', `/v1/orders/${o.body.id}/webhooks/`, undefined, { key: p.api_key });
      attempt = log.body.deliveries.find((d: Json) => d.target === 'order')?.attempts[0];
      if (attempt || i > 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(attempt, 'the delivery was attempted');
    assertRefused(attempt, calls > before);
  } finally {
    setting(undefined);
  }
});

test('WEBHOOK_PRIVATE_ADDRESSES=allow: a test project reaches its local receiver; a live project is still refused', async () => {
  setting('allow');
  try {
    const p = await t.newProject('test');
    await setProjectWebhookUrl(t.svc.ctx, p.project_id as ProjectId, hook);
    const { attempt, reached } = await testEvent(p.api_key);
    assert.equal(reached, true);
    assert.equal(attempt.response_status, 200);
    // live: the URL as if it pointed elsewhere when it was set (DNS rebinding), refused at delivery
    const live = await t.newProject('live');
    await t.db.query('UPDATE projects SET webhook_url = $2 WHERE id = $1', [live.project_id, hook]);
    const before = calls;
    const res = await t.api('POST', '/v1/webhooks/test/', undefined, { key: live.api_key });
    assert.equal(res.status, 200, res.text);
    assert.equal(calls, before, 'nothing was sent');
    assert.match(res.body.attempts[0].error, /^127\.0\.0\.1 is a loopback address: refused for a live project$/);
    assert.equal(res.body.attempts[0].response_excerpt, undefined);
  } finally {
    setting(undefined);
  }
});
