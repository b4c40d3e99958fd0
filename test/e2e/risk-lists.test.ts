// Blocklists and allowlists (issue 44, docs/risk.md "Lists"): for every kind, a block refuses the
// payment with nothing sent to the acquirer and an allow lets it past a velocity limit; the
// platform's lists hold for every merchant, a project's for its own payments only; every change
// is audited; the lists are changed through the CLI's commands (as `tender risk list` runs them).
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { followBrowser, randomPan, startPayment } from '../helpers/cards.ts';
import { countingSimulator } from '../helpers/counting-simulator.ts';
import { commands } from '../../src/cli/commands.ts';
import { DomainError } from '../../src/domain/errors.ts';
import type { ListKind } from '../../src/domain/risk/lists.ts';
import type { Json } from '../helpers/json.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binTable } from '../../src/services/risk/lists.ts';
import { countryOf } from '../../src/domain/risk/bins.ts';

/** per project: 3-D Secure lookups and authorizations that reached the acquirer */
const { connector: counting, reached } = countingSimulator();

let t: TestService;
before(async () => {
  // one attempt per card and project per window: a second one is refused by card_attempts, unless allowed
  t = await startTestService({
    env: { RISK_LIMITS: 'on', RISK_CARD_MAX_ATTEMPTS: '1', RISK_REFUSAL_FLOOR_MS: '0' },
    testConnector: counting,
  });
});
after(() => t?.close());

type Project = Awaited<ReturnType<TestService['newProject']>>;
const cli = (name: string, args: Record<string, unknown>) => commands[name]!(t.svc.ctx, args) as Promise<Json>;

/** A card payment through the API, as a webshop plugin makes it, and the browser at the 3-D Secure page. */
async function pay(p: Project, pan: string, customer: Record<string, string> = {}) {
  const started = await startPayment(t, pan, { key: p.api_key, orderOver: { customer } });
  await followBrowser(started.redirect_url);
  return (await t.api('GET', `/v1/orders/${started.order.id}/`, undefined, { key: p.api_key })).body.transactions[0] as Json;
}

/** Per kind: the entry, and a payment that matches it (a card, the customer it comes from). */
const CASES: Record<ListKind, { value: string; pan: string; customer: Record<string, string> }> = {
  card: { value: '4242 4242 4242 4242', pan: '4242424242424242', customer: {} },
  bin: { value: '555555', pan: '5555555555554444', customer: {} },
  country: { value: 'FR', pan: '4000002500001001', customer: {} },
  network: { value: '2001:db8:44::/48', pan: '', customer: { ip_address: '2001:db8:44:1::9' } },
  email: { value: 'Eve@Example.org', pan: '', customer: { email_address: 'eve@example.org' } },
  email_domain: { value: 'example.net', pan: '', customer: { email_address: 'x@mail.example.net' } },
};

for (const [kind, c] of Object.entries(CASES) as Array<[ListKind, (typeof CASES)[ListKind]]>) {
  test(`${kind}: a blocklisted payment is refused and reaches no acquirer; an allowlisted one passes a velocity limit`, async () => {
    const shop = await t.newProject('test');
    const pan = () => c.pan || randomPan('4');
    const added = await cli('risk list add', { project: shop.project_id, list: 'block', kind, value: c.value });
    assert.equal(added.added, true);

    const refused = await pay(shop, pan(), c.customer);
    assert.equal(refused.status, 'declined', JSON.stringify(refused));
    assert.equal(refused.reason, 'authentication_failed');
    assert.equal(refused.risk.action, 'refuse');
    assert.equal(refused.risk.rules[0].rule, `blocklist_${kind}`);
    assert.deepEqual(
      [reached.threeDs.get(shop.project_id), reached.authorize.get(shop.project_id)],
      [undefined, undefined],
      'nothing reached the acquirer',
    );
    // the same shop's other payments pass (its own card, address and email)
    const other = await pay(shop, kind === 'bin' || kind === 'country' ? '4111111111111111' : randomPan('4'), {
      ip_address: '198.51.100.9',
      email_address: 'ben@shop.example',
    });
    assert.equal(other.status, 'accepted', JSON.stringify(other));

    // the allowlist: the same card twice is over card_attempts (at most 1), and passes when listed
    await cli('risk list remove', { project: shop.project_id, id: added.entry.id });
    await cli('risk list add', { project: shop.project_id, list: 'allow', kind, value: c.value });
    const card = pan();
    const first = await pay(shop, card, c.customer);
    const again = await pay(shop, card, c.customer);
    for (const txn of [first, again]) {
      assert.equal(txn.status, 'accepted', JSON.stringify(txn));
      assert.deepEqual(
        txn.risk.rules.map((r: Json) => [r.rule, r.action]),
        [[`allowlist_${kind}`, 'pass']],
      );
    }
    if (kind === 'card') {
      // the limit holds for a card on no list
      const plain = randomPan('4');
      assert.equal((await pay(shop, plain)).status, 'accepted');
      const over = await pay(shop, plain);
      assert.equal(over.risk.action, 'refuse');
      assert.equal(over.risk.rules[0].rule, 'card_attempts');
    }
  });
}

test("a platform block holds at every merchant, past a project's allow; a project's list never touches another merchant", async () => {
  const [a, b] = [await t.newProject('test'), await t.newProject('test')];
  const mallory = { email_address: 'mallory@scope.example' };
  const blocked = await cli('risk list add', { platform: true, list: 'block', kind: 'email', value: mallory.email_address });
  await cli('risk list add', { project: a.project_id, list: 'allow', kind: 'email', value: mallory.email_address });
  for (const shop of [a, b]) {
    const txn = await pay(shop, randomPan('4'), mallory);
    assert.equal(txn.risk.action, 'refuse');
    assert.equal(txn.risk.rules[0].rule, 'platform_blocklist_email');
  }
  await cli('risk list remove', { platform: true, id: blocked.entry.id });
  assert.equal((await pay(b, randomPan('4'), mallory)).status, 'accepted', 'removed: it holds no more');

  // a's block of a network: b's payment from it passes; b's list shows none of a's entries
  await cli('risk list add', { project: a.project_id, list: 'block', kind: 'network', value: '192.0.2.0/24' });
  assert.equal((await pay(a, randomPan('4'), { ip_address: '192.0.2.77' })).risk.rules[0].rule, 'blocklist_network');
  assert.equal((await pay(b, randomPan('4'), { ip_address: '192.0.2.77' })).status, 'accepted');
  assert.deepEqual(await cli('risk list show', { project: b.project_id }), []);
  assert.equal((await cli('risk list show', { project: a.project_id })).length, 2);
});

test('the commands: bad input is a clear error that changes nothing; a card is stored as its fingerprint; every change is audited', async () => {
  const shop = await t.newProject('test');
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ kind: 'network', value: '203.0.113.7/24' }, 'value'],
    [{ kind: 'network', value: '203.0.113.0/33' }, 'value'],
    [{ kind: 'bin', value: '41' }, 'value'],
    [{ kind: 'email', value: 'not an email' }, 'value'],
    [{ kind: 'card', value: '4242424242424241' }, 'value'],
    [{ kind: 'colour', value: 'red' }, 'kind'],
    [{ kind: 'email', value: 'a@b.example', list: 'maybe' }, 'list'],
    [{ kind: 'email', value: '' }, 'value'],
  ];
  for (const [args, fieldName] of bad)
    await assert.rejects(
      cli('risk list add', { project: shop.project_id, list: 'block', ...args }),
      (e: unknown) => e instanceof DomainError && e.type === 'ValidationError' && e.field === fieldName,
      JSON.stringify(args),
    );
  await assert.rejects(cli('risk list add', { list: 'block', kind: 'bin', value: '411111' }), /either --project ID or --platform/);
  await assert.rejects(
    cli('risk list add', { project: shop.project_id, platform: true, list: 'block', kind: 'bin', value: '411111' }),
    /either/,
  );
  await assert.rejects(cli('risk list remove', { project: shop.project_id, id: '3f0e9c52-0000-4000-8000-000000000000' }), /not found/);
  await assert.rejects(cli('risk list show', { project: 'nope' }), /not found/);
  assert.deepEqual(await cli('risk list show', { project: shop.project_id }), []);

  const card = await cli('risk list add', { project: shop.project_id, list: 'block', kind: 'card', value: '4000000000000002' });
  assert.equal(card.entry.value, '•••• 0002');
  const again = await cli('risk list add', { project: shop.project_id, list: 'block', kind: 'card', value: '4000 0000 0000 0002' });
  assert.equal(again.added, false, 'listed once');
  const stored = JSON.stringify(await t.db.query('SELECT * FROM risk_lists WHERE project_id = $1', [shop.project_id]));
  const audited = JSON.stringify(await t.db.query('SELECT * FROM portal_audit WHERE project_id = $1', [shop.project_id]));
  for (const text of [stored, audited]) assert.ok(!text.includes('4000000000000002') && !text.includes('400000000000'), text);
  await cli('risk list remove', { project: shop.project_id, id: card.entry.id });

  const rows = await t.db.query<{ action: string; detail: Json; user_id: string | null }>(
    'SELECT action, detail, user_id FROM portal_audit WHERE project_id = $1 ORDER BY created, action',
    [shop.project_id],
  );
  assert.deepEqual(
    rows.map((r) => [r.action, r.detail.value, r.detail.list, r.detail.kind, r.detail.by, r.user_id]),
    [
      ['risk_list_added', '•••• 0002', 'block', 'card', 'cli', null],
      ['risk_list_removed', '•••• 0002', 'block', 'card', 'cli', null],
    ],
  );
  const platform = await cli('risk list add', { platform: true, list: 'allow', kind: 'bin', value: '41111100-41111199' });
  await cli('risk list remove', { platform: true, id: platform.entry.id });
  const log = await t.db.query<{ action: string; actor: string; detail: Json }>(
    "SELECT action, actor, detail FROM platform_audit WHERE detail->>'value' = '41111100-41111199' ORDER BY created, action",
  );
  assert.deepEqual(
    log.map((r) => [r.action, r.actor, r.detail.list, r.detail.kind]),
    [
      ['risk_list_added', 'cli', 'allow', 'bin'],
      ['risk_list_removed', 'cli', 'allow', 'bin'],
    ],
  );
});

test('RISK_BIN_TABLE: its lines are read over the test BINs; a bad line fails naming it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tender-bins-'));
  try {
    const file = join(dir, 'bins.csv');
    writeFileSync(file, '# prefix,country\n510510,BE\n');
    const table = binTable({ config: { ...t.config, riskBinTable: file } });
    assert.equal(countryOf(table, '5105105105105100'), 'BE');
    assert.equal(countryOf(table, '4000002500001001'), 'FR', 'the test BINs stay');
    writeFileSync(file, '510510,BE\n5105,Belgium\n');
    assert.throws(() => binTable({ config: { ...t.config, riskBinTable: file } }), /BIN table line 2/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an entry with an expiry refuses until then and matches nothing after it; listed as expired; added again, it is renewed', async () => {
  const shop = await t.newProject('test');
  const eve = { email_address: 'eve@expiry.example' };
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ expires: 'tomorrow' }, 'expires_at'],
    [{ expires: '2020-01-01' }, 'expires_at'],
    [{ expires: 'P20Y' }, 'expires_at'],
    [{ note: 'two\nlines' }, 'note'],
    [{ note: 'x'.repeat(201) }, 'note'],
  ];
  for (const [args, fieldName] of bad)
    await assert.rejects(
      cli('risk list add', { project: shop.project_id, list: 'block', kind: 'email', value: eve.email_address, ...args }),
      (e: unknown) => e instanceof DomainError && e.type === 'ValidationError' && e.field === fieldName,
      JSON.stringify(args),
    );
  assert.deepEqual(await cli('risk list show', { project: shop.project_id }), [], 'nothing bad was stored');

  const until = new Date(Date.now() + 4000);
  const added = await cli('risk list add', {
    project: shop.project_id,
    list: 'block',
    kind: 'email',
    value: eve.email_address,
    expires: until.toISOString(),
    note: 'chargebacks in November',
  });
  assert.equal(added.added, true);
  assert.deepEqual(
    [added.entry.expires_at, added.entry.expired, added.entry.note],
    [until.toISOString(), false, 'chargebacks in November'],
  );
  const refused = await pay(shop, randomPan('4'), eve);
  assert.equal(refused.risk.rules[0]?.rule, 'blocklist_email', JSON.stringify(refused));

  await new Promise((r) => setTimeout(r, until.getTime() - Date.now() + 100));
  const passed = await pay(shop, randomPan('4'), eve);
  assert.equal(passed.status, 'accepted', JSON.stringify(passed));
  assert.deepEqual(passed.risk.rules, [], 'the expired entry matched nothing');
  const [shown] = await cli('risk list show', { project: shop.project_id });
  assert.deepEqual([shown.id, shown.expired, shown.note], [added.entry.id, true, 'chargebacks in November']);

  // added again: the expired entry is renewed (the same entry, its new expiry), and refuses again
  const renewed = await cli('risk list add', {
    project: shop.project_id,
    list: 'block',
    kind: 'email',
    value: eve.email_address,
    expires: 'P30D',
  });
  assert.equal(renewed.added, true);
  assert.equal(renewed.entry.id, added.entry.id);
  assert.equal(renewed.entry.expired, false);
  assert.equal(renewed.entry.note, null);
  assert.ok(Math.abs(Date.parse(renewed.entry.expires_at) - (Date.now() + 30 * 86_400_000)) < 60_000);
  assert.equal((await pay(shop, randomPan('4'), eve)).risk.rules[0]?.rule, 'blocklist_email');
  const again = await cli('risk list add', { project: shop.project_id, list: 'block', kind: 'email', value: eve.email_address });
  assert.equal(again.added, false, 'an entry in force is left as it is');
  assert.equal(again.entry.expires_at, renewed.entry.expires_at);

  const rows = await t.db.query<{ action: string; detail: Json }>(
    'SELECT action, detail FROM portal_audit WHERE project_id = $1 ORDER BY created, action',
    [shop.project_id],
  );
  assert.deepEqual(
    rows.map((r) => [r.action, r.detail.note ?? null, typeof r.detail.expires_at]),
    [
      ['risk_list_added', 'chargebacks in November', 'string'],
      ['risk_list_added', null, 'string'],
    ],
  );

  // the platform's lists expire alike
  const platform = await cli('risk list add', {
    platform: true,
    list: 'block',
    kind: 'email',
    value: 'zed@expiry.example',
    expires: new Date(Date.now() + 1500).toISOString(),
    note: 'operator',
  });
  assert.equal((await pay(shop, randomPan('4'), { email_address: 'zed@expiry.example' })).risk.rules[0]?.rule, 'platform_blocklist_email');
  await new Promise((r) => setTimeout(r, Date.parse(platform.entry.expires_at) - Date.now() + 100));
  assert.equal((await pay(shop, randomPan('4'), { email_address: 'zed@expiry.example' })).status, 'accepted');
  const listed = (await cli('risk list show', { platform: true })).find((e: Json) => e.id === platform.entry.id);
  assert.equal(listed.expired, true);
  await cli('risk list remove', { platform: true, id: platform.entry.id });
});
