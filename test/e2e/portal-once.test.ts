// Idempotent portal forms (issue 28, finding 8): every form that creates something carries a
// one-time token, so the same form sent twice (a double click, a resend) makes one thing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';

let t: TestService;
let c: PortalClient;
before(async () => {
  t = await startTestService();
  const user = await portalUser(t);
  c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
});
after(async () => t?.close());

const p = () => t.project.project_id;
const count = async (sql: string) => (await t.db.query<{ n: number }>(sql, [p()]))[0].n;

test('"create link" sent twice at once and once more makes one link; both answers lead to it', async () => {
  await c.get(`/projects/${p()}/links/`);
  assert.match(c.once, /^[A-Za-z0-9_-]{16,}$/, 'the form carries a one-time token');
  const before = await count('SELECT count(*)::int AS n FROM payment_links WHERE project_id = $1');
  const form = { merchant_order_id: 'double-1', amount: '12.50', currency: 'EUR', expiration_period: 'P7D' };
  const sent = await Promise.all([c.post(`/projects/${p()}/links/`, form), c.post(`/projects/${p()}/links/`, form)]);
  const again = await c.post(`/projects/${p()}/links/`, form);
  for (const r of [...sent, again]) assert.equal(r.status, 303, r.text);
  assert.equal(await count('SELECT count(*)::int AS n FROM payment_links WHERE project_id = $1'), before + 1, 'one link');
  assert.equal(new Set([...sent, again].map((r) => r.location)).size, 1, 'every answer leads to the one link');
  // a fresh page has a fresh token: a second link on purpose works
  await c.get(`/projects/${p()}/links/`);
  assert.equal((await c.post(`/projects/${p()}/links/`, { ...form, merchant_order_id: 'double-2' })).status, 303);
  assert.equal(await count('SELECT count(*)::int AS n FROM payment_links WHERE project_id = $1'), before + 2);
});

test('"create a new key" sent twice makes one key; the resent form says so', async () => {
  const settings = `/projects/${p()}/settings/`;
  await c.get(settings);
  const before = await count('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1');
  const sent = await Promise.all([c.post(`${settings}keys`), c.post(`${settings}keys`)]);
  assert.deepEqual(sent.map((r) => r.status).sort(), [200, 303], 'one shows the key, the other leads back to the settings');
  assert.equal(await count('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1'), before + 1, 'one key');
  const shown = sent.find((r) => r.status === 200)!;
  assert.match(shown.text, /id="new-api-key"/);
  const back = await c.get(sent.find((r) => r.status === 303)!.location!.replace(t.config.portalUrl.replace(/^https?:\/\/[^/]+/, ''), ''));
  assert.match(back.text, /That form was sent twice/);
  // the same page's token serves its other creating form (the secret) once too
  await c.get(settings);
  const secrets = await Promise.all([c.post(`${settings}webhook-secret`), c.post(`${settings}webhook-secret`)]);
  assert.deepEqual(secrets.map((r) => r.status).sort(), [200, 303]);
});

test('a creating form without its token is refused (4xx) and makes nothing', async () => {
  const before = await count('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1');
  await c.get(`/projects/${p()}/settings/`);
  const res = await c.req('POST', `/projects/${p()}/settings/keys`, { csrf: c.csrf });
  assert.equal(res.status, 400, res.text);
  assert.match(res.text, /this form has expired/);
  assert.equal(await count('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1'), before);
});
