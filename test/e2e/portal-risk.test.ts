// The portal's Risk page (docs/risk.md "Lists", docs/portal.md): everyone of the merchant reads
// the project's lists; only owners change them (a viewer's or developer's POST is refused and
// changes nothing); every change is on the audit page in words; a card number is never shown back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';

let t: TestService;
let owner: PortalClient;
let p: string;
before(async () => {
  t = await startTestService();
  const u = await portalUser(t);
  owner = new PortalClient(t);
  assert.equal((await owner.signIn(u.email, u.password)).status, 303);
  p = `/projects/${t.project.project_id}`;
});
after(() => t?.close());

/** A signed-in user of the test merchant with `role`. */
async function as(role: string) {
  const u = await portalUser(t);
  await t.db.query('UPDATE portal_users SET role = $1 WHERE email = $2', [role, u.email]);
  const c = new PortalClient(t);
  assert.equal((await c.signIn(u.email, u.password)).status, 303);
  return c;
}

const entries = () =>
  t.db.query<{ id: string; value: string }>('SELECT id, value FROM risk_lists WHERE project_id = $1', [t.project.project_id]);

test('an owner adds and removes entries; a bad entry is a 400 naming the rule, and a card number is never sent back', async () => {
  assert.match((await owner.get(`${p}/risk/`)).text, /No entries yet/);
  const net = await owner.post(`${p}/risk/`, { list: 'block', kind: 'network', value: '203.0.113.0/24' });
  assert.equal(net.status, 200, net.text);
  assert.match(net.text, /role="status">Added to the list\./);
  assert.match(net.text, /<code>203\.0\.113\.0\/24<\/code>/);
  assert.match((await owner.post(`${p}/risk/`, { list: 'block', kind: 'network', value: '203.0.113.0/24' })).text, /already on the list/);

  const bad = await owner.post(`${p}/risk/`, { list: 'block', kind: 'network', value: '203.0.113.7/24' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /role="alert">value must be an IPv4 or IPv6 address or network in CIDR form/);
  assert.match(bad.text, /value="203\.0\.113\.7\/24" aria-describedby="risk-value-hint" aria-invalid="true"/);
  const badCard = await owner.post(`${p}/risk/`, { list: 'allow', kind: 'card', value: '4111111111111112' });
  assert.equal(badCard.status, 400);
  assert.ok(!badCard.text.includes('4111111111111112'), 'the typed number is not in the page');

  const card = await owner.post(`${p}/risk/`, { list: 'allow', kind: 'card', value: '4111 1111 1111 1111' });
  assert.equal(card.status, 200);
  assert.ok(!card.text.includes('4111 1111 1111 1111') && !card.text.includes('4111111111111111'));
  assert.match(card.text, /•••• 1111/);
  assert.equal((await entries()).length, 2);
  const id = (await entries()).find((e) => e.value === '203.0.113.0/24')!.id;
  const removed = await owner.post(`${p}/risk/${id}/remove`);
  assert.match(removed.text, /Removed from the list\./);
  assert.equal((await owner.post(`${p}/risk/${id}/remove`)).status, 404);
  assert.deepEqual(
    (await entries()).map((e) => e.value),
    ['•••• 1111'],
  );

  const audit = (await owner.get('/projects/' + t.project.project_id + '/audit/')).text;
  assert.match(audit, /Added address or network 203\.0\.113\.0\/24 to the blocklist/);
  assert.match(audit, /Removed address or network 203\.0\.113\.0\/24 from the blocklist/);
  assert.match(audit, /Added card •••• 1111 to the allowlist/);
  const nl = (await owner.get('/projects/' + t.project.project_id + '/audit/?lang=nl')).text;
  assert.match(nl, /Kaart •••• 1111 op de toestaanlijst gezet/);
  await owner.get(`${p}/risk/?lang=en`);
});

test('a viewer and a developer read the lists but cannot change them: no form, and a POST is refused and changes nothing', async () => {
  const before = (await entries()).length;
  for (const role of ['viewer', 'developer', 'support']) {
    const c = await as(role);
    const page = await c.get(`${p}/risk/`);
    assert.equal(page.status, 200);
    assert.match(page.text, /•••• 1111/);
    assert.match(page.text, /Only the owners of this account change the lists/);
    assert.ok(!page.text.includes('name="value"') && !page.text.includes('/remove"'), role);
    assert.equal((await c.post(`${p}/risk/`, { list: 'block', kind: 'country', value: 'NL' })).status, 403, role);
    const [e] = await entries();
    assert.equal((await c.post(`${p}/risk/${e!.id}/remove`)).status, 403, role);
  }
  assert.equal((await entries()).length, before);
});

test("another merchant's project is not found, and its lists are never shown", async () => {
  const other = await t.newProject('test');
  assert.equal((await owner.get(`/projects/${other.project_id}/risk/`)).status, 404);
  assert.equal((await owner.post(`/projects/${other.project_id}/risk/`, { list: 'block', kind: 'country', value: 'NL' })).status, 404);
  assert.equal((await t.db.query('SELECT 1 FROM risk_lists WHERE project_id = $1', [other.project_id])).length, 0);
});

test('an entry with an expiry and a note: shown in the list and the audit log (en, nl); an expired one is marked; a bad note is a 400', async () => {
  const added = await owner.post(`${p}/risk/`, {
    list: 'block',
    kind: 'email_domain',
    value: 'expiry.example',
    expires_at: 'P7D',
    note: 'refund fraud <ring>',
  });
  assert.equal(added.status, 200, added.text);
  const row = (
    await t.db.query<{ id: string; expires_at: Date; note: string }>(
      "SELECT id, expires_at, note FROM risk_lists WHERE project_id = $1 AND value = 'expiry.example'",
      [t.project.project_id],
    )
  )[0]!;
  assert.ok(Math.abs(new Date(row.expires_at).getTime() - (Date.now() + 7 * 86_400_000)) < 60_000);
  assert.equal(row.note, 'refund fraud <ring>');
  assert.match(added.text, /refund fraud &lt;ring&gt;/);
  assert.match(added.text, /<span data-expired="false">/);
  assert.match(added.text, /<option value="P7D">After a week<\/option>/);

  const audit = (await owner.get(`/projects/${t.project.project_id}/audit/`)).text;
  assert.match(
    audit,
    /Added email domain expiry\.example to the blocklist \(until \d{4}-\d\d-\d\d \d\d:\d\d UTC\): refund fraud &lt;ring&gt;/,
  );
  const nl = (await owner.get(`/projects/${t.project.project_id}/audit/?lang=nl`)).text;
  assert.match(nl, /E-maildomein expiry\.example op de blokkeerlijst gezet \(tot \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/);
  assert.match((await owner.get(`${p}/risk/?lang=nl`)).text, /Na een week/);
  await owner.get(`${p}/risk/?lang=en`);

  // its expiry passed (as time would): the list says so
  await t.db.query("UPDATE risk_lists SET expires_at = now() - interval '1 minute' WHERE id = $1", [row.id]);
  assert.match((await owner.get(`${p}/risk/`)).text, /<span data-expired="true">Expired /);

  const bad = await owner.post(`${p}/risk/`, { list: 'block', kind: 'country', value: 'BE', note: 'x'.repeat(201) });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /role="alert">note must be at most 200 characters/);
  const badExpiry = await owner.post(`${p}/risk/`, { list: 'block', kind: 'country', value: 'BE', expires_at: 'soon' });
  assert.equal(badExpiry.status, 400);
  assert.match(badExpiry.text, /role="alert">expires_at must be a duration/);
  assert.equal((await t.db.query("SELECT 1 FROM risk_lists WHERE project_id = $1 AND value = 'BE'", [t.project.project_id])).length, 0);
  await owner.post(`${p}/risk/${row.id}/remove`);
});
