// Payout statements (docs/payouts.md, "Statements"): a payout's lines, one per payment, refund,
// chargeback and fee with the order's reference, add up to its amount; their CSV is exact and
// injection-safe; a monthly statement follows the project's time zone at the month's boundary;
// the portal's payout settings are the owners' only, audited, and a new IBAN holds the next run
// a day (wall clock) with a notice on every owner's home. In process on the suite's store.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { runPayouts, scheduleMerchant } from '../../src/services/payouts/payouts.ts';
import { monthlyStatement } from '../../src/services/payouts/statements.ts';
import { setProjectTimeZone } from '../../src/store/platform/projects.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
const dir = mkdtempSync(join(tmpdir(), 'tender-statements-'));
before(async () => {
  t = await startTestService();
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const settle = async (o: Json, key: string) =>
  assert.equal((await t.api('POST', `/v1/test/orders/${o.id}/settle/`, undefined, { key })).status, 200);
const sum = (ns: number[]) => ns.reduce((a, b) => a + b, 0);
const cents = (decimal: string) => Math.round(Number(decimal) * 100);
const zoneOf = async (projectId: string, zone: string) => {
  await setProjectTimeZone(t.db, projectId, zone);
  t.svc.ctx.keyCache?.clear();
};

test("a payout's lines, per payment, refund, chargeback and fee with the order's reference, add up to its amount; the CSV is exact and injection-safe", async () => {
  const p = await t.newProject('test');
  const key = p.api_key;
  await zoneOf(p.project_id, 'Europe/Amsterdam');
  const a = await payOrder(t, { merchant_order_id: '=HYPERLINK("http://evil.example")', amount: 5800 }, { key });
  const b = await payOrder(t, { merchant_order_id: 'order-b', amount: 2000 }, { key });
  const c = await payOrder(t, { merchant_order_id: 'order-c', amount: 1500 }, { key });
  assert.equal((await t.api('POST', `/v1/orders/${b.id}/refunds/`, { amount: 500, description: 'one less' }, { key })).status, 201);
  for (const o of [a, b, c]) await settle(o, key);
  assert.equal((await t.api('POST', `/v1/test/orders/${c.id}/chargeback/`, {}, { key })).status < 300, true);
  await settle(c, key); // the chargeback settles with its payment's order
  await scheduleMerchant(t.svc.ctx, { merchant: p.merchant_id, iban: 'NL91ABNA0417164300', name: 'Lines shop', every: 'daily' });
  const run = await runPayouts(t.svc.ctx, { out: dir, merchant: p.merchant_id });
  assert.equal(run.payouts.length, 1);
  const payout = run.payouts[0]!;

  const one = await t.api('GET', `/v1/payouts/${payout.id}/`, undefined, { key });
  assert.equal(one.status, 200, one.text);
  const lines = one.body.lines as Json[];
  assert.equal(sum(lines.map((l) => l.amount)), payout.amount, 'the lines add up to the payout');
  const of = (type: string) => lines.filter((l) => l.type === type);
  assert.deepEqual(
    of('payment')
      .map((l) => [l.merchant_order_id, l.amount])
      .sort(),
    [
      ['=HYPERLINK("http://evil.example")', 5800],
      ['order-b', 2000],
      ['order-c', 1500],
    ].sort() as never,
  );
  assert.deepEqual(
    of('refund').map((l) => [l.merchant_order_id, l.amount]),
    [['order-b', -500]],
    "a refund carries its payment's reference",
  );
  assert.deepEqual(
    of('chargeback').map((l) => [l.merchant_order_id, l.amount]),
    [['order-c', -1500]],
  );
  assert.ok(of('fee').length >= 3 && of('fee').every((l) => l.amount < 0 && l.order_id), 'each fee is a line of its order');
  // each order's lines: what the ledger moved to available for it
  const moved = await t.db.query<{ order_id: string; amount: string }>(
    `SELECT order_id, (-SUM(amount))::bigint AS amount FROM ledger_entries WHERE project_id = $1 AND account = 'merchant_available' AND kind <> 'payout' GROUP BY order_id`,
    [p.project_id],
  );
  for (const m of moved)
    assert.equal(sum(lines.filter((l) => l.order_id === m.order_id).map((l) => l.amount)), Number(m.amount), `order ${m.order_id}`);

  const file = await fetch(`${t.url}/v1/payouts/${payout.id}/lines.csv`, {
    headers: { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
  });
  assert.equal(file.status, 200);
  assert.match(file.headers.get('content-type') ?? '', /^text\/csv/);
  const rows = parse(await file.text(), { columns: true }) as Record<string, string>[];
  assert.equal(rows.length, lines.length);
  assert.equal(sum(rows.map((r) => cents(r.amount!))), payout.amount, 'exact amounts as decimals');
  assert.ok(rows.some((r) => r.amount === '58.00' && r.type === 'payment'));
  assert.ok(
    rows.some((r) => r.amount === '-5.00' && r.type === 'refund'),
    'a negative amount stays a number',
  );
  assert.ok(
    rows.every((r) => !/^[=+\-@]/.test(r.reference!)),
    'no reference cell can run as a formula',
  );
  assert.ok(rows.some((r) => r.reference === `'=HYPERLINK("http://evil.example")`));
  assert.ok(
    rows.every((r) => /\+0[12]:00$/.test(r.date!)),
    "times in the project's zone, with its offset",
  );
  assert.equal((await fetch(`${t.url}/v1/payouts/${payout.id}/lines.csv`)).status, 401);
  const other = await t.newProject('test');
  assert.equal((await t.api('GET', `/v1/payouts/${payout.id}/`, undefined, { key: other.api_key })).status, 404, "another merchant's");
  assert.deepEqual((await checkLedger(t.db)).violations, []);

  // ledger check: a payout whose lines lost an entry is named
  const [gone] = await t.db.query<{ project_id: string; entry_id: string }>(
    `DELETE FROM payout_entries WHERE (project_id, entry_id) IN (SELECT x.project_id, x.entry_id FROM payout_entries x
       JOIN ledger_entries e ON e.project_id = x.project_id AND e.id = x.entry_id WHERE x.payout_id = $1 AND e.kind = 'settlement' LIMIT 1)
     RETURNING project_id, entry_id::text AS entry_id`,
    [payout.id],
  );
  const broken = (await checkLedger(t.db)).violations;
  assert.equal(broken.length, 1, broken.join('\n'));
  assert.match(broken[0]!, new RegExp(`^payout ${payout.id} \\(${payout.amount}\\): its lines add up to -?\\d+$`));
  await t.db.query('INSERT INTO payout_entries (project_id, entry_id, payout_id) VALUES ($1, $2, $3)', [
    gone!.project_id,
    gone!.entry_id,
    payout.id,
  ]);
  assert.deepEqual((await checkLedger(t.db)).violations, []);
});

test("a monthly statement holds the month of the project's time zone: a movement at 23:30 UTC on the 31st is January's in Amsterdam", async () => {
  const p = await t.newProject('test');
  const key = p.api_key;
  // the project's clock at 2026-12-31 23:30 UTC: its money moves then
  const offset = Date.parse('2026-12-31T23:30:00Z') - Date.now();
  await t.db.query('UPDATE projects SET clock_offset_ms = $2 WHERE id = $1', [p.project_id, offset]);
  t.svc.ctx.keyCache?.clear();
  const o = await payOrder(t, { merchant_order_id: 'new-year', amount: 1000 }, { key });
  await settle(o, key);
  const who = { merchant_id: p.merchant_id, mode: 'test' };
  const dec = await monthlyStatement(t.svc.ctx, who, '2026-12', 'Europe/Amsterdam');
  const jan = await monthlyStatement(t.svc.ctx, who, '2027-01', 'Europe/Amsterdam');
  assert.equal(dec.from, '2026-11-30T23:00:00.000Z');
  assert.equal(dec.to, '2026-12-31T23:00:00.000Z', "December ends at Amsterdam's midnight");
  assert.deepEqual(dec.lines, []);
  assert.deepEqual(
    jan.lines.map((l) => l.type),
    ['payment', 'fee'],
  );
  const net = sum(jan.lines.map((l) => l.amount));
  assert.deepEqual(jan.balances, [{ currency: 'EUR', opening: 0, closing: net }]);
  assert.equal(jan.lines.at(-1)!.balance, net, 'the running balance');
  const utc = await monthlyStatement(t.svc.ctx, who, '2026-12', 'UTC');
  assert.equal(utc.lines.length, 2, "in UTC the same movement is December's");
  await assert.rejects(monthlyStatement(t.svc.ctx, who, '2026-13', 'UTC'), /month must be YYYY-MM/);

  // the portal's download: the project's zone, balance column, local times
  await zoneOf(p.project_id, 'Europe/Amsterdam');
  const user = await portalUser(t, p.merchant_id);
  const c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
  const res = await c.get(`/projects/${p.project_id}/payouts/statement.csv?month=2027-01`);
  assert.equal(res.status, 200);
  const rows = parse(res.text, { columns: true }) as Record<string, string>[];
  assert.deepEqual(
    rows.map((r) => r.type),
    ['payment', 'fee'],
  );
  assert.match(rows[0]!.date!, /^2027-01-01T00:3\d:\d\d\+01:00$/);
  assert.equal(cents(rows.at(-1)!.balance!), net);
  assert.equal(
    (await c.get(`/projects/${p.project_id}/payouts/statement.csv?month=2026-12`)).text.trim().split('\n').length,
    1,
    'a header only',
  );
  assert.equal((await c.get(`/projects/${p.project_id}/payouts/statement.csv?month=nope`)).status, 400);
});

test("payout settings are the owners only, audited; a new IBAN holds the next run a day on the wall clock and is shown on every owner's home", async () => {
  const p = await t.newProject('test');
  const key = p.api_key;
  const o = await payOrder(t, { merchant_order_id: 'held', amount: 3000 }, { key });
  await settle(o, key);
  const owner = await portalUser(t, p.merchant_id);
  const owner2 = await portalUser(t, p.merchant_id);
  const viewer = await portalUser(t, p.merchant_id);
  await t.db.query("UPDATE portal_users SET role = 'viewer' WHERE email = $1", [viewer.email]);
  const signedIn = async (u: { email: string; password: string }) => {
    const c = new PortalClient(t);
    assert.equal((await c.signIn(u.email, u.password)).status, 303);
    return c;
  };
  const c = await signedIn(owner);
  const settings = `/projects/${p.project_id}/settings/`;
  const form = { iban: 'NL91 ABNA 0417 1643 00', name: 'Held shop', every: 'daily', minimum: '10.00' };
  await c.get(settings);
  assert.equal((await c.post(`${settings}payouts`, form)).status, 303);
  const schedule = async () => (await t.db.query<Json>('SELECT * FROM payout_schedules WHERE merchant_id = $1', [p.merchant_id]))[0];
  assert.equal((await schedule()).iban, 'NL91ABNA0417164300');
  assert.equal(Number((await schedule()).minimum), 1000);
  assert.equal((await schedule()).held_until, null, 'a first account holds nothing');

  // refused: a bad IBAN, a bad minimum; nothing changes
  for (const bad of [{ iban: 'NL91ABNA0417164301' }, { minimum: '-3' }, { every: 'hourly' }]) {
    await c.get(settings);
    const r = await c.post(`${settings}payouts`, { ...form, ...bad });
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.match(r.text, /ValidationError/);
  }
  assert.equal((await schedule()).iban, 'NL91ABNA0417164300');

  // a viewer sees the schedule, has no form, and its post is refused
  const v = await signedIn(viewer);
  const page = await v.get(settings);
  assert.match(page.text, /data-payout-schedule/);
  assert.doesNotMatch(page.text, /name="iban"/);
  const refused = await v.post(`${settings}payouts`, { ...form, iban: 'DE89370400440532013000' });
  assert.equal(refused.status, 403);
  assert.equal((await schedule()).iban, 'NL91ABNA0417164300');

  // the owner changes the IBAN: held a day, audited, shown to every owner (not to the viewer)
  const changedAt = Date.now();
  await c.get(settings);
  assert.equal((await c.post(`${settings}payouts`, { ...form, iban: 'DE89370400440532013000' })).status, 303);
  const held = new Date((await schedule()).held_until).getTime();
  assert.ok(held >= changedAt + 86_400_000 - 1000 && held <= Date.now() + 86_400_000 + 1000, 'held a day from the change');
  const audit = await t.db.query<{ action: string; detail: Json }>(
    'SELECT action, detail FROM portal_audit WHERE merchant_id = $1 ORDER BY created',
    [p.merchant_id],
  );
  const actions = audit.map((a) => a.action).filter((a) => a.startsWith('payout_'));
  assert.deepEqual(actions, ['payout_schedule_set', 'payout_account_changed']);
  assert.equal(audit.find((a) => a.action === 'payout_account_changed')!.detail.iban, 'DE89…3000', 'the IBAN masked');
  const home = `/projects/${p.project_id}/`;
  for (const u of [owner, owner2]) assert.match((await (await signedIn(u)).get(home)).text, /data-iban-notice[^]*DE89…3000/);
  assert.doesNotMatch((await v.get(home)).text, /data-iban-notice/);

  // the run skips the merchant while held, and pays it once the day has passed
  const now = new Date();
  assert.deepEqual((await runPayouts(t.svc.ctx, { out: dir, merchant: p.merchant_id, now })).payouts, [], 'held');
  const later = await runPayouts(t.svc.ctx, { out: dir, merchant: p.merchant_id, now: new Date(held + 60_000) });
  assert.equal(later.payouts.length, 1);
  const [paid] = await t.db.query<{ iban: string }>('SELECT iban FROM payouts WHERE id = $1', [later.payouts[0]!.id]);
  assert.equal(paid!.iban, 'DE89370400440532013000', 'to the new account');
  assert.deepEqual((await checkLedger(t.db)).violations, []);
});
