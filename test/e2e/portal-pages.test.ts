import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import type { Json } from '../helpers/json.ts';

/** Portal pages over HTTP: project switch, home figures, settings, test tools, session expiry. */

let t: TestService;
let c: PortalClient;
before(async () => {
  t = await startTestService();
  const user = await portalUser(t);
  c = new PortalClient(t);
  await c.signIn(user.email, user.password);
});
after(async () => t?.close());

const p = () => `/projects/${t.project.project_id}`;

test('project switch: every project of the merchant; test projects carry the test-mode bar, live ones not', async () => {
  const live = await createProject(t.svc.ctx, { name: 'Live shop', mode: 'live', merchantId: t.project.merchant_id });
  const page = await c.get(`${p()}/`);
  assert.match(page.text, new RegExp(`<option value="${live.project_id}">Live shop \\(Live\\)</option>`));
  assert.match(page.text, /selected>Test shop \(Test mode\)<\/option>/);
  assert.match(page.text, /data-test-mode/);
  const sw = await c.get(`/switch?project=${live.project_id}`);
  assert.equal(sw.location, `/portal/projects/${live.project_id}/`);
  const livePage = await c.get(`/projects/${live.project_id}/`);
  assert.equal(livePage.status, 200);
  assert.doesNotMatch(livePage.text, /data-test-mode/);
  assert.doesNotMatch(livePage.text, />Test tools</, 'no test tools on live projects');
  assert.equal((await c.get(`/projects/${live.project_id}/test/`)).status, 404);
  // live: the webhook URL obeys the SSRF rules
  await c.get(`/projects/${live.project_id}/settings/`);
  const privateUrl = await c.post(`/projects/${live.project_id}/settings/webhook-url`, { url: 'http://127.0.0.1:9/hook' });
  assert.equal(privateUrl.status, 400);
  assert.match(privateUrl.text, /ValidationError: /);
  assert.equal((await t.db.query('SELECT webhook_url FROM projects WHERE id = $1', [live.project_id]))[0].webhook_url, null);
});

test("home: today's count and net volume, success rate, and the SVG chart of net volume per day", async () => {
  await payOrder(t, { merchant_order_id: 'home-1', amount: 1000 });
  await payOrder(t, { merchant_order_id: 'home-2', amount: 2500 });
  await payOrder(t, { merchant_order_id: 'home-3', amount: 700 }, { pan: '4000000000000002' }).catch(() => undefined);
  const home = await c.get(`${p()}/`);
  const today = Number(/data-today-count>(\d+)</.exec(home.text)![1]);
  assert.ok(today >= 2, home.text);
  assert.match(home.text, /<p class="stat">€35\.00<\/p>/, 'today: 10.00 + 25.00 completed');
  assert.match(home.text, /data-success-rate>\d+\.\d %</);
  assert.match(home.text, /<svg viewBox="0 0 400 220" role="img" aria-labelledby="chart-0-title chart-0-desc"/);
  assert.equal((home.text.match(/<rect /g) ?? []).length, 14, 'one bar per day of the default period');
  assert.match(home.text, /<td data-label="Day">\d{4}-\d{2}-\d{2}<\/td>/, 'the numbers as a table too');
});

test('settings: key hint and dates, a new key beside the old, webhook URL saved, secret rotated and shown once, methods and fees', async () => {
  const settings = `${p()}/settings/`;
  const page = await c.get(settings);
  assert.match(page.text, /<h2 id="api-key">API Key<\/h2>/);
  assert.match(page.text, new RegExp(`<code>${t.project.api_key.slice(0, 9)}…${t.project.api_key.slice(-4)}</code>`));
  assert.match(page.text, /credit-card<\/td><td data-label="Currencies">EUR, USD/);
  assert.match(page.text, /1\.80 % \+ €0\.25/);
  const made = await c.post(`${settings}keys`);
  const key = /<code id="new-api-key">([^<]+)<\/code>/.exec(made.text)![1];
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key })).status, 200);
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/')).status, 200, 'the old key still works');

  const saved = await c.post(`${settings}webhook-url`, { url: 'https://hooks.shop.example/tender' });
  assert.equal(saved.location, `/portal${settings}?saved=1`);
  assert.equal(
    (await t.db.query('SELECT webhook_url FROM projects WHERE id = $1', [t.project.project_id]))[0].webhook_url,
    'https://hooks.shop.example/tender',
  );
  const bad = await c.post(`${settings}webhook-url`, { url: 'ftp://x' });
  assert.equal(bad.status, 400);
  const cleared = await c.post(`${settings}webhook-url`, { url: '' });
  assert.equal(cleared.status, 303);
  const rotated = await c.post(`${settings}webhook-secret`);
  assert.match(rotated.text, /<code id="new-webhook-secret">whsec_[^<]+<\/code>/);
  assert.doesNotMatch((await c.get(settings)).text, /new-webhook-secret/, 'shown once');
  assert.equal((await c.post(`${settings}keys/00000000-0000-4000-8000-000000000000/revoke`)).status, 404);
});

test('test tools: the card table, the clock advances and runs due jobs; chargeback and settlement from an order', async () => {
  const tools = await c.get(`${p()}/test/`);
  assert.match(tools.text, /<code>4111111111111111<\/code>/);
  const advanced = await c.post(`${p()}/test/clock`, { advance: 'PT1H' });
  assert.equal(advanced.status, 303);
  assert.match(advanced.location!, /\/test\/\?jobs=\d+$/);
  const [{ clock_offset_ms }] = await t.db.query('SELECT clock_offset_ms FROM projects WHERE id = $1', [t.project.project_id]);
  assert.ok(Number(clock_offset_ms) >= 3_600_000);
  // the page the redirect leads to, with a fresh one-time token (the first one is used up)
  await c.get(advanced.location!.replace(/^\/portal/, ''));
  const bad = await c.post(`${p()}/test/clock`, { advance: 'soon' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /advance must be a positive ISO 8601 duration/);

  const paid = await payOrder(t, { merchant_order_id: 'cb-1', amount: 3000 });
  const o = `${p()}/orders/${paid.id}/`;
  const page = await c.get(o);
  const token = /name="action" value="chargeback"><input type="hidden" name="token" value="([^"]+)"/.exec(page.text)![1];
  const cb = await c.post(`${o}actions`, { action: 'chargeback', token });
  assert.equal(cb.status, 303);
  const after = (await t.api('GET', `/v1/orders/${paid.id}/`)).body;
  assert.equal(after.chargeback_orders.length, 1);
  const settled = await c.post(`${o}actions`, { action: 'settle', token: 's'.repeat(24) });
  assert.equal(settled.status, 303);
  assert.match((await c.get(`${o}?done=settle`)).text, /Settlement simulated/);
});

test('resend webhooks from an order; cancel an open order', async () => {
  const created = await t.api('POST', '/v1/orders/', {
    currency: 'EUR',
    amount: 100,
    merchant_order_id: 'open-1',
    webhook_url: 'http://127.0.0.1:9/hook',
  });
  const o = `${p()}/orders/${created.body.id}/`;
  await c.get(o);
  const resent = await c.post(`${o}actions`, { action: 'resend', token: 'r'.repeat(24) });
  assert.equal(resent.status, 303);
  assert.ok((await t.api('GET', `/v1/orders/${created.body.id}/webhooks/`)).body.deliveries.some((d: Json) => d.resend));
  const cancelled = await c.post(`${o}actions`, { action: 'cancel', token: 'x'.repeat(24) });
  assert.equal(cancelled.status, 303);
  assert.equal((await t.api('GET', `/v1/orders/${created.body.id}/`)).body.status, 'cancelled');
  const again = await c.post(`${o}actions`, { action: 'cancel', token: 'y'.repeat(24) });
  assert.equal(again.status, 409);
  assert.match(again.text, /CanNotCancelTransaction/);
});

test('a session idle past PORTAL_SESSION_IDLE_MINUTES, or older than PORTAL_SESSION_MAX_HOURS, is over', async () => {
  const user = await portalUser(t);
  const idle = new PortalClient(t);
  await idle.signIn(user.email, user.password);
  assert.equal((await idle.get(`${p()}/`)).status, 200);
  await t.db.query(
    "UPDATE portal_sessions SET last_seen = last_seen - interval '31 minutes' WHERE user_id = (SELECT id FROM portal_users WHERE email = $1)",
    [user.email],
  );
  assert.equal((await idle.get(`${p()}/`)).location, '/portal/sign-in');
  const old = new PortalClient(t);
  await old.signIn(user.email, user.password);
  await t.db.query(
    "UPDATE portal_sessions SET created = created - interval '13 hours' WHERE user_id = (SELECT id FROM portal_users WHERE email = $1)",
    [user.email],
  );
  assert.equal((await old.get(`${p()}/`)).location, '/portal/sign-in');
});
