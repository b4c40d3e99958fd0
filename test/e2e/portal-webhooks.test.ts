import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { LOCAL_RECEIVERS, startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';

/**
 * The project's webhook log, in the portal and the API: a failing endpoint's deliveries listed
 * first with their attempts (status, duration, the start of the answer), one delivery resent
 * after the endpoint is fixed, and a signed test event.
 */

let t: TestService;
let c: PortalClient;
let p: string;
let failing = true;
const calls: { body: string; headers: Record<string, string> }[] = [];
let close: () => Promise<void>;
let url: string;

before(async () => {
  t = await startTestService({ env: { ...LOCAL_RECEIVERS, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_MAX_ATTEMPTS: '1' } });
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      calls.push({ body, headers: req.headers as Record<string, string> });
      res.writeHead(failing ? 500 : 200, { 'content-type': 'text/plain' }).end(failing ? 'database is down\u0000' : 'thanks');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  close = () => {
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  };
  const user = await portalUser(t);
  c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  p = `/projects/${t.project.project_id}`;
  await c.get(`${p}/settings/`);
  assert.equal((await c.post(`${p}/settings/webhook-url`, { url })).status, 303);
});
after(async () => {
  await close?.();
  await t?.close();
});

const runDue = () => t.api('POST', '/v1/test/clock/run-due-jobs/', {});

test('a failed delivery is listed first with its attempt; resent after the endpoint is fixed, it succeeds', async () => {
  const order = await payOrder(t, { merchant_order_id: 'wh-1' });
  await runDue();
  const log = await c.get(`${p}/webhooks/?status=failed`);
  assert.equal(log.status, 200);
  assert.match(log.text, /data-delivery-status="failed"/);
  assert.match(log.text, /HTTP 500 \d+ ms/);
  assert.match(log.text, /<code>database is down <\/code>/, 'the start of the answer, control characters as spaces');
  const failed = (await t.api('GET', '/v1/webhooks/deliveries/?status=failed')).body.deliveries;
  assert.ok(failed.length >= 1);
  assert.equal(failed[0].order_id, order.id);
  assert.equal(failed[0].attempts[0].response_status, 500);
  assert.equal(failed[0].attempts[0].response_excerpt, 'database is down ');

  failing = false;
  await c.get(`${p}/webhooks/`);
  const resent = await c.post(`${p}/webhooks/${failed[0].id}/resend`);
  assert.equal(resent.status, 200);
  assert.match(resent.text, /Queued again/);
  await runDue();
  const all = (await t.api('GET', '/v1/webhooks/deliveries/')).body.deliveries;
  assert.equal(all[0].status, 'failed', 'failed ones first');
  const again = all.find((d: { resend: boolean; order_id: string }) => d.resend && d.order_id === order.id);
  assert.equal(again.status, 'succeeded');
  assert.equal(again.url, url);
  assert.match((await c.get(`${p}/audit/`)).text, /Resent webhook delivery/);
});

test('a test event is signed and delivered to the project endpoint at once; the API sends one too and resends one', async () => {
  await c.get(`${p}/settings/`);
  const rotated = await c.post(`${p}/settings/webhook-secret`);
  const secret = /<code id="new-webhook-secret">(whsec_[^<]+)<\/code>/.exec(rotated.text)![1];
  await c.get(`${p}/webhooks/`);
  const sent = await c.post(`${p}/webhooks/test`);
  assert.equal(sent.status, 200, sent.text);
  assert.match(sent.text, /Test event sent/);
  const last = calls.at(-1)!;
  assert.deepEqual(JSON.parse(last.body), { event: 'test', project_id: t.project.project_id });
  assert.doesNotThrow(() => new Webhook(secret).verify(last.body, last.headers), 'signed like every webhook');
  const tests = (await t.api('GET', '/v1/webhooks/deliveries/?event=test')).body.deliveries;
  assert.equal(tests[0].status, 'succeeded');
  assert.equal(tests[0].attempts[0].response_excerpt, 'thanks');

  const viaApi = await t.api('POST', '/v1/webhooks/test/', {});
  assert.equal(viaApi.status, 200, viaApi.text);
  assert.equal(viaApi.body.event, 'test');
  const resend = await t.api('POST', `/v1/webhooks/deliveries/${viaApi.body.id}/resend/`, {});
  assert.equal(resend.status, 202);
  assert.notEqual(resend.body.id, viaApi.body.id);
  assert.equal((await t.api('POST', '/v1/webhooks/deliveries/00000000-0000-4000-8000-000000000000/resend/', {})).status, 404);
  assert.equal((await t.api('GET', '/v1/webhooks/deliveries/?status=lost')).status, 400);
});
