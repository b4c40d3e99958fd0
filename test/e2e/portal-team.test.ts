import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { base32Decode, totp } from '../../src/domain/totp.ts';

/**
 * The team: owners invite with a one-time link, change roles, remove users and may require a
 * second factor; each role is held to what it may do on every route (button absent, POST 403);
 * every change is on the audit page in words.
 */

let t: TestService;
let owner: PortalClient;
let p: string;
let paid: { id: string };
const PASSWORD = 'a long enough password';

before(async () => {
  t = await startTestService();
  const user = await portalUser(t);
  owner = new PortalClient(t);
  assert.equal((await owner.signIn(user.email, user.password)).status, 303);
  p = `/projects/${t.project.project_id}`;
  paid = await payOrder(t, { merchant_order_id: 'team-paid', amount: 1200 });
});
after(async () => t?.close());

/** Invites `email` as `role` and signs the invited person in through the link. */
async function invited(email: string, role: string) {
  await owner.get(`${p}/team/`);
  const made = await owner.post(`${p}/team/invite`, { email, role });
  assert.equal(made.status, 200, made.text);
  const link = /<code id="invite-link">([^<]+)<\/code>/.exec(made.text)![1];
  assert.match(link, /\/portal\/invite\/[A-Za-z0-9_-]{32}$/);
  const path = new URL(link).pathname.replace(/^\/portal/, '');
  const c = new PortalClient(t);
  assert.match((await c.get(path)).text, new RegExp(`You are invited as ${email.replace('.', '\\.')}`));
  const accepted = await c.post(path, { password: PASSWORD });
  assert.equal(accepted.location, '/portal/sign-in', accepted.text);
  assert.equal((await new PortalClient(t).get(path)).status, 404, 'the link works once');
  assert.equal((await c.signIn(email, PASSWORD)).status, 303);
  return c;
}

let n = 0;
const refund = (c: PortalClient) =>
  c.post(`${p}/orders/${paid.id}/actions`, { action: 'refund', amount: '100', token: `team-refund-${String(++n).padStart(8, '0')}` });

test('an invited viewer reads but cannot refund, make keys or invite: buttons absent and POST refused with 403', async () => {
  const viewer = await invited('viewer@team.example', 'viewer');
  const order = await viewer.get(`${p}/orders/${paid.id}/`);
  assert.equal(order.status, 200);
  assert.doesNotMatch(order.text, />Refund</, 'no refund button');
  assert.doesNotMatch(order.text, />Resend webhooks</);
  assert.equal((await refund(viewer)).status, 403);
  assert.equal((await viewer.get(`${p}/orders/${paid.id}/confirm?action=refund&amount=1`)).status, 403);
  const settings = await viewer.get(`${p}/settings/`);
  assert.doesNotMatch(settings.text, /Create a new key/);
  assert.equal((await viewer.post(`${p}/settings/keys`)).status, 403);
  assert.equal((await viewer.post(`${p}/links/`, { merchant_order_id: 'x', amount: '1', currency: 'EUR' })).status, 403);
  assert.equal((await viewer.get(`${p}/team/`)).status, 403);
  assert.equal((await viewer.post(`${p}/team/invite`, { email: 'x@team.example', role: 'owner' })).status, 403);
  assert.doesNotMatch((await viewer.get(`${p}/`)).text, /\/team\//, 'no team link in the menu');
  const refunds = await t.db.query("SELECT 1 FROM orders WHERE kind = 'refund' AND related_order_id = $1", [paid.id]);
  assert.equal(refunds.length, 0, 'nothing was refunded');
});

test('support refunds but cannot touch keys or webhooks; a developer makes keys but cannot refund', async () => {
  const support = await invited('support@team.example', 'support');
  await support.get(`${p}/orders/${paid.id}/`);
  assert.equal((await refund(support)).status, 303);
  assert.equal((await support.post(`${p}/settings/keys`)).status, 403);
  assert.equal((await support.post(`${p}/settings/webhook-url`, { url: 'https://x.example/h' })).status, 403);
  assert.equal((await support.post(`${p}/webhooks/test`)).status, 403);

  const dev = await invited('dev@team.example', 'developer');
  const order = await dev.get(`${p}/orders/${paid.id}/`);
  assert.doesNotMatch(order.text, />Refund</);
  assert.equal((await refund(dev)).status, 403);
  await dev.get(`${p}/settings/`); // the form's one-time token
  assert.equal((await dev.post(`${p}/settings/keys`)).status, 200, 'a new key, shown once');
  assert.equal((await dev.post(`${p}/team/invite`, { email: 'y@team.example', role: 'viewer' })).status, 403);
});

test('owners change roles and remove users, never the last owner; each change is on the audit page in words', async () => {
  const c = await invited('later@team.example', 'viewer');
  await owner.get(`${p}/team/`);
  const id = (await t.db.query<{ id: string }>("SELECT id FROM portal_users WHERE email = 'later@team.example'"))[0].id;
  assert.equal((await owner.post(`${p}/team/${id}/role`, { role: 'support' })).status, 303);
  assert.match((await owner.get(`${p}/team/`)).text, /later@team\.example<\/td><td data-label="Role"><span data-role="support">/);
  await c.get(`${p}/orders/${paid.id}/`);
  assert.equal((await refund(c)).status, 303, 'the new role counts at once');
  assert.equal((await owner.post(`${p}/team/${id}/remove`)).status, 303);
  assert.equal((await c.get(`${p}/`)).location, '/portal/sign-in', 'a removed user is signed out');

  // the owners: this test's owner and the one the service made at first run may both exist
  const owners = await t.db.query<{ id: string }>("SELECT id FROM portal_users WHERE merchant_id = $1 AND role = 'owner'", [
    t.project.merchant_id,
  ]);
  const me = (await t.db.query<{ id: string }>("SELECT id FROM portal_users WHERE email LIKE 'user%' ORDER BY created LIMIT 1"))[0].id;
  for (const o of owners.filter((x) => x.id !== me)) await t.db.query("UPDATE portal_users SET role = 'viewer' WHERE id = $1", [o.id]);
  await owner.get(`${p}/team/`);
  const demote = await owner.post(`${p}/team/${me}/role`, { role: 'viewer' });
  assert.equal(demote.status, 409);
  assert.match(demote.text, /at least one owner/);

  const audit = await owner.get(`${p}/audit/`);
  assert.equal(audit.status, 200);
  for (const line of [
    'Invited later@team.example as viewer',
    'Accepted the invitation as viewer',
    'Changed the role of later@team.example from viewer to support',
    'Removed later@team.example (support)',
  ])
    assert.match(audit.text, new RegExp(line.replace(/[.()]/g, '\\$&')), line);
});

test('an owner requires two-step sign-in: a user without it is sent to set it up, and nothing else opens', async () => {
  const c = await invited('notyet@team.example', 'support');
  await owner.get(`${p}/team/`);
  const first = await owner.post(`${p}/team/require-totp`, { on: '1' });
  assert.equal(first.status, 409, 'the owner turns it on for themselves first');
  assert.match(first.text, /for yourself first/);
  const settings0 = `${p}/settings/`;
  await owner.get(settings0);
  await owner.post(`${settings0}totp/setup`);
  const secret = base32Decode(/<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec((await owner.get(settings0)).text)![1])!;
  assert.equal((await owner.post(`${settings0}totp/confirm`, { code: totp(secret, Date.now() / 1000) })).status, 303);
  await owner.get(`${p}/team/`);
  assert.equal((await owner.post(`${p}/team/require-totp`, { on: '1' })).status, 303);
  assert.match((await owner.get(`${p}/team/`)).text, /data-require-totp="true"/);
  const home = await c.get(`${p}/orders/`);
  assert.equal(home.status, 303);
  assert.match(home.location!, /\/settings\/\?totp=required#security$/);
  const settings = await c.get(`${p}/settings/?totp=required`);
  assert.match(settings.text, /require two-step sign-in/);
  assert.equal((await c.post(`${p}/settings/totp/setup`)).status, 303, 'setting it up is allowed');
  await owner.get(`${p}/team/`);
  assert.equal((await owner.post(`${p}/team/require-totp`, { on: '0' })).status, 303);
  assert.equal((await c.get(`${p}/orders/`)).status, 200);
  assert.match((await owner.get(`${p}/audit/`)).text, /Required two-step sign-in for everyone/);
});
