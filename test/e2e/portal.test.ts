import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PASSWORD, PortalClient, portalUser } from '../helpers/portal.ts';
import { base32Decode, totp } from '../../src/domain/totp.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';

/** The portal over HTTP, as a browser speaks it: sign-in, sessions, CSRF, tenancy, throttling, TOTP. */

let t: TestService;
before(async () => {
  t = await startTestService({ env: { PORTAL_SIGNIN_LOCK_SECONDS: '10' } });
});
after(async () => t?.close());

const home = (t: TestService, projectId = t.project.project_id) => `/projects/${projectId}/`;

test('sign-in: a session cookie (HttpOnly, SameSite=Lax, not Secure on http); sign out ends it', async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  const first = await c.get(home(t));
  assert.equal(first.status, 303);
  assert.equal(first.location, '/portal/sign-in', 'pages need a session');

  const ok = await c.signIn(user.email, user.password);
  assert.equal(ok.status, 303, ok.text);
  const cookie = ok.headers.getSetCookie().find((x) => x.startsWith('tender_portal='))!;
  assert.match(cookie, /; HttpOnly/);
  assert.match(cookie, /; SameSite=Lax/);
  assert.match(cookie, /; Path=\/portal/);
  assert.doesNotMatch(cookie, /Secure/);
  const page = await c.get(home(t));
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy')!, /default-src 'none'.*script-src 'self'.*frame-ancestors 'none'/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.doesNotMatch(page.text, /<script>|style="/, 'no inline script or style');

  const out = await c.post('/sign-out');
  assert.equal(out.status, 303);
  assert.equal((await c.get(home(t))).status, 303, 'signed out');
});

test('the session cookie is Secure when the portal URL is https', async () => {
  const s = await startTestService({ env: { PORTAL_URL: 'https://portal.shop.example/portal' } });
  try {
    const user = await portalUser(s);
    const c = new PortalClient(s);
    c.get = (p) => c.req('GET', `${s.url}/portal${p}`);
    c.post = (p, f = {}) => c.req('POST', `${s.url}/portal${p}`, { csrf: c.csrf, ...f }, { origin: 'https://portal.shop.example' });
    const ok = await c.signIn(user.email, user.password);
    assert.equal(ok.status, 303, ok.text);
    assert.match(
      ok.headers.getSetCookie().find((x) => x.startsWith('tender_portal='))!,
      /; Secure/,
    );
  } finally {
    await s.close();
  }
});

test('wrong passwords: 401 and the sign-in page again; an unknown email reads the same', async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  const wrong = await c.signIn(user.email, 'not the password at all');
  assert.equal(wrong.status, 401);
  assert.match(wrong.text, /The email or password is not right/);
  const unknown = await c.signIn('nobody@shop.example', PASSWORD);
  assert.equal(unknown.status, 401);
  assert.match(unknown.text, /The email or password is not right/);
});

test('five wrong passwords throttle the account (429, Retry-After), even for the right one; after Retry-After it works', async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  for (let i = 1; i <= 4; i++) assert.equal((await c.signIn(user.email, `wrong-${i}-password`)).status, 401, `attempt ${i}`);
  const fifth = await c.signIn(user.email, 'wrong-5-password');
  assert.equal(fifth.status, 429);
  const wait = Number(fifth.headers.get('retry-after'));
  assert.ok(wait >= 1 && wait <= 10, `Retry-After ${wait}`);
  assert.match(fifth.text, /Too many failed sign-ins/);
  const right = await c.signIn(user.email, user.password);
  assert.equal(right.status, 429, 'locked: the right password is refused too');
  assert.ok(Number(right.headers.get('retry-after')) >= 1);

  await new Promise((r) => setTimeout(r, Number(right.headers.get('retry-after')) * 1000));
  const after = await c.signIn(user.email, user.password);
  assert.equal(after.status, 303, after.text);
  assert.equal((await c.get(home(t))).status, 200);
});

test("CSRF: a form post without the token, or with another session's, is refused (403) and changes nothing", async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const settings = `/projects/${t.project.project_id}/settings/`;
  await c.get(settings);
  const keys = async () =>
    (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1', [t.project.project_id]))[0].n;
  const before = await keys();

  const noToken = await c.req('POST', `${settings}keys`, {});
  assert.equal(noToken.status, 403);
  assert.match(noToken.text, /This form has expired or was not sent from this page/);
  const other = new PortalClient(t);
  await other.signIn((await portalUser(t)).email, PASSWORD);
  await other.get(settings);
  const foreign = await c.req('POST', `${settings}keys`, { csrf: other.csrf });
  assert.equal(foreign.status, 403);
  const crossSite = await c.post(`${settings}keys`, {}, { origin: 'https://evil.example' });
  assert.equal(crossSite.status, 403);
  assert.equal(await keys(), before, 'no key was made');

  // the sign-in form has a token too (no login CSRF)
  const fresh = new PortalClient(t);
  const forged = await fresh.req('POST', '/sign-in', { email: user.email, password: user.password });
  assert.equal(forged.status, 403);

  const made = await c.post(`${settings}keys`);
  assert.equal(made.status, 200);
  assert.equal(await keys(), before + 1, 'with the token it works');
});

test("another merchant's order, project or payment link is 404", async () => {
  const mine = await payOrder(t, { merchant_order_id: 'tenancy-1' });
  const other = await createProject(t.svc.ctx, { name: 'Other merchant', mode: 'test' });
  const theirs = await payOrder(t, { merchant_order_id: 'tenancy-2' }, { key: other.api_key });
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const p = t.project.project_id;
  assert.equal((await c.get(`/projects/${p}/orders/${mine.id}/`)).status, 200);
  const foreign = await c.get(`/projects/${p}/orders/${theirs.id}/`);
  assert.equal(foreign.status, 404);
  assert.match(foreign.text, /Not found/);
  assert.equal((await c.get(`/projects/${other.project_id}/orders/${theirs.id}/`)).status, 404);
  assert.equal((await c.get(`/projects/${other.project_id}/`)).status, 404);
  assert.equal((await c.get(`/projects/${p}/orders/not-a-uuid/`)).status, 404);
  assert.equal((await c.get(`/projects/${p}/links/${theirs.id}/`)).status, 404);
  // an action on another merchant's order changes nothing
  await c.get(`/projects/${p}/orders/${mine.id}/`);
  const refund = await c.post(`/projects/${p}/orders/${theirs.id}/actions`, { action: 'refund', amount: '100', token: 'a'.repeat(24) });
  assert.equal(refund.status, 404);
  assert.equal((await t.api('GET', `/v1/orders/${theirs.id}/`, undefined, { key: other.api_key })).body.refunded_amount, 0);
});

test('bad input to actions: 4xx with the reason, nothing changes', async () => {
  const paid = await payOrder(t, { merchant_order_id: 'bad-input-1', amount: 1000 });
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const o = `/projects/${t.project.project_id}/orders/${paid.id}/`;
  const badAmount = await c.get(`${o}confirm?action=refund&amount=12.345`);
  assert.equal(badAmount.status, 400);
  assert.match(badAmount.text, /Enter an amount greater than 0/);
  const tooMuch = await c.post(`${o}actions`, { action: 'refund', amount: '100000', token: 'b'.repeat(24) });
  assert.equal(tooMuch.status, 422);
  assert.match(tooMuch.text, /RefundError: amount 100000 is above the 1000 that can still be refunded/);
  const noToken = await c.post(`${o}actions`, { action: 'refund', amount: '100' });
  assert.equal(noToken.status, 400);
  assert.equal((await c.post(`${o}actions`, { action: 'explode', token: 'c'.repeat(24) })).status, 400);
  assert.equal((await c.post(`${o}actions`, { action: 'refund', amount: '-5', token: 'd'.repeat(24) })).status, 400);
  assert.equal((await c.post(`${o}actions`, { action: 'refund', amount: '1e2', token: 'g'.repeat(24) })).status, 400);
  assert.equal((await t.api('GET', `/v1/orders/${paid.id}/`)).body.refunded_amount, 0);
  // the same confirmation token twice: one refund
  const once = await c.post(`${o}actions`, { action: 'refund', amount: '100', token: 'e'.repeat(24) });
  assert.equal(once.status, 303);
  const twice = await c.post(`${o}actions`, { action: 'refund', amount: '100', token: 'e'.repeat(24) });
  assert.equal(twice.status, 303);
  assert.equal((await t.api('GET', `/v1/orders/${paid.id}/`)).body.refunded_amount, 100);
  // sent twice at once (a double click): the second waits for the first and answers its result
  const both = await Promise.all([1, 2].map(() => c.post(`${o}actions`, { action: 'refund', amount: '50', token: 'h'.repeat(24) })));
  assert.deepEqual(
    both.map((r) => r.status),
    [303, 303],
  );
  assert.equal((await t.api('GET', `/v1/orders/${paid.id}/`)).body.refunded_amount, 150);
  // a refused action leaves its token free: the corrected confirmation acts
  assert.equal((await c.post(`${o}actions`, { action: 'refund', amount: '100000', token: 'i'.repeat(24) })).status, 422);
  assert.equal((await c.post(`${o}actions`, { action: 'refund', amount: '25', token: 'i'.repeat(24) })).status, 303);
  assert.equal((await t.api('GET', `/v1/orders/${paid.id}/`)).body.refunded_amount, 175);
  const [claims] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM portal_actions WHERE token IN ($1, $2, $3)', [
    'e'.repeat(24),
    'h'.repeat(24),
    'i'.repeat(24),
  ]);
  assert.equal(claims.n, 3, 'one stored result per token');
  // the orders search reports a query error as the API does
  const search = await c.get(`/projects/${t.project.project_id}/orders/?q=${encodeURIComponent('status:(')}`);
  assert.equal(search.status, 400);
  assert.match(search.text, /ValidationError/);
});

test('the orders CSV downloads the current filter', async () => {
  await payOrder(t, { merchant_order_id: 'csv-only-1', amount: 321 });
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const csv = await c.get(`/projects/${t.project.project_id}/orders.csv?q=csv-only-1`);
  assert.equal(csv.status, 200);
  assert.match(csv.headers.get('content-type')!, /text\/csv/);
  const lines = csv.text.trim().split('\n');
  assert.equal(lines.length, 2, csv.text);
  assert.match(lines[1], /csv-only-1/);
});

test('TOTP: set up from Settings with a server-drawn QR code; sign-in then asks for the code; a code works once', async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const settings = `/projects/${t.project.project_id}/settings/`;
  await c.get(settings);
  assert.equal((await c.post(`${settings}totp/setup`)).status, 303);
  const page = await c.get(settings);
  assert.match(page.text, /<svg [^>]*role="img"[^>]*>.*<path d="M/s, 'an SVG QR code');
  const secret = base32Decode(/<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(page.text)![1])!;
  assert.equal(
    (await c.post(`${settings}totp/confirm`, { code: '000000' === totp(secret, Date.now() / 1000) ? '111111' : '000000' })).status,
    400,
  );
  const code = totp(secret, Date.now() / 1000);
  assert.equal((await c.post(`${settings}totp/confirm`, { code })).status, 303);
  assert.match((await c.get(`${settings}?totp=on`)).text, /Two-factor authentication is on/);
  await c.post('/sign-out');

  const again = await c.signIn(user.email, user.password);
  assert.equal(again.location, '/portal/sign-in/code');
  assert.equal((await c.get(home(t))).location, '/portal/sign-in/code', 'no page before the code');
  await c.get('/sign-in/code');
  const reused = await c.post('/sign-in/code', { code });
  assert.equal(reused.status, 401, 'the code used to turn it on does not work again');
  // the next time step's code (accepted within one step of drift)
  const next = totp(secret, Date.now() / 1000 + 30);
  const ok = await c.post('/sign-in/code', { code: next });
  assert.equal(ok.status, 303);
  assert.equal((await c.get(home(t))).status, 200);
  const log = await c.get(settings);
  assert.match(log.text, /totp_enabled/);
  assert.match(log.text, /sign_in/);
});

test('audit log: sign-in, key created and revoked, refund are listed with user and address', async () => {
  const paid = await payOrder(t, { merchant_order_id: 'audit-1', amount: 900 });
  const user = await portalUser(t);
  const c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  const settings = `/projects/${t.project.project_id}/settings/`;
  await c.get(settings);
  await c.post(`${settings}keys`);
  const [key] = await t.db.query('SELECT id FROM api_keys WHERE project_id = $1 ORDER BY created DESC LIMIT 1', [t.project.project_id]);
  await c.post(`${settings}keys/${key.id}/revoke`);
  await c.post(`/projects/${t.project.project_id}/orders/${paid.id}/actions`, { action: 'refund', amount: '100', token: 'f'.repeat(24) });
  const rows = await t.db.query('SELECT action, email, address FROM portal_audit WHERE email = $1 ORDER BY created', [user.email]);
  assert.deepEqual(
    rows.map((r) => r.action),
    ['sign_in', 'key_created', 'key_revoked', 'refund'],
  );
  assert.ok(rows.every((r) => r.address === '127.0.0.1'));
  const page = await c.get(settings);
  for (const a of ['key_created', 'key_revoked', 'refund']) assert.match(page.text, new RegExp(`<td data-label="Event">${a}</td>`));
});

test('Dutch: ?lang=nl switches the pages and is remembered', async () => {
  const user = await portalUser(t);
  const c = new PortalClient(t);
  const nl = await c.get('/sign-in?lang=nl');
  assert.match(nl.text, /<html lang="nl">/);
  assert.match(nl.text, /Inloggen/);
  await c.post('/sign-in', { email: user.email, password: user.password });
  const home1 = await c.get(home(t));
  assert.match(home1.text, /Bestellingen/);
  assert.match(home1.text, /Testmodus/);
});
