// Merchant balances from the ledger (docs/payouts.md): settlement moves pending to available, a
// rolling reserve holds part of it for its days, a negative available balance is carried, the
// ledger check proves each merchant's identity, and settlement journals from before balances
// become available on migration. Black-box through the API where a client sees it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, copyFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { moneyClient } from '../helpers/money.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { findProject, updateProjectSettings } from '../../src/store/platform/projects.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import type { Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { buildContext } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';
import { projectBalances } from '../../src/store/payouts/balances.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const { refund, sale } = moneyClient(() => t);

const balances = async (key: string) => {
  const res = await t.api('GET', '/v1/balances/', undefined, { key });
  assert.equal(res.status, 200, res.text);
  return res.body as { mode: string; balances: Json[] };
};
const eur = async (key: string) => (await balances(key)).balances.find((b) => b.currency === 'EUR');
const settle = async (order: Json, key: string) => {
  const res = await t.api('POST', `/v1/test/orders/${order.id}/settle/`, undefined, { key });
  assert.equal(res.status, 200, res.text);
};
const sound = async (projectId: string) => assert.deepEqual((await checkLedger(t.db, projectId)).violations, []);

test('settlement moves pending to available; a chargeback beyond it leaves available negative, carried into what comes next', async () => {
  const p = await t.newProject('test');
  const key = p.api_key;
  assert.deepEqual(await balances(key), { mode: 'test', balances: [] }, 'nothing moved, no balance');

  const s = await sale({ key }); // 1995, fee 61
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 1934, available: 0, reserved: 0 });
  assert.equal((await refund(s, 300, { key })).status, 201);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 1634, available: 0, reserved: 0 }, 'a refund comes off pending');
  await sound(p.project_id);

  await settle(s, key);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: 1634, reserved: 0 }, 'settled: available');
  await sound(p.project_id);

  // the issuer takes back all that is left (1695), more than is available
  const cb = await t.api('POST', `/v1/test/orders/${s.id}/chargeback/`, {}, { key });
  assert.equal(cb.status, 201, cb.text);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: -1695, available: 1634, reserved: 0 });
  await settle(s, key);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: -61, reserved: 0 }, 'negative, not lost');
  await sound(p.project_id);

  const next = await sale({ key });
  await settle(next, key);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: 1934 - 61, reserved: 0 }, 'carried into the next money');
  await sound(p.project_id);

  // the key's own project only: the suite's project has none of this money
  assert.equal((await eur(t.project.api_key))?.available ?? 0, 0);
  const rows = await t.db.query<{ kind: string; account: string }>(
    "SELECT DISTINCT kind, account FROM ledger_entries WHERE project_id = $1 AND kind = 'settlement' ORDER BY account",
    [p.project_id],
  );
  assert.deepEqual(
    rows.map((r) => r.account),
    ['acquirer_receivable', 'bank', 'merchant_available', 'merchant_payable'],
  );
});

test("a rolling reserve holds part of each settled credit for the project's days, then gives it back once", async () => {
  const p = await t.newProject('test');
  const key = p.api_key;
  const row = (await findProject(t.db, p.project_id))!;
  await updateProjectSettings(t.db, p.project_id, { ...row.settings, reserve: { bps: 1000, days: 7 } });
  const s = await sale({ key });
  await settle(s, key);
  // 10 % of 1934, half up
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: 1741, reserved: 193 });
  await sound(p.project_id);

  const r = await refund(s, 500, { key });
  await settle(r.body, key);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: 1241, reserved: 193 }, 'a debit holds nothing');

  const advance = async (by: string) =>
    assert.equal((await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: by }, { key })).status, 200);
  await advance('P6D');
  await settle(s, key);
  assert.equal((await eur(key))!.reserved, 193, 'held for its 7 days');
  await advance('P1D');
  await settle(s, key);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: 1434, reserved: 0 }, 'released');
  await settle(s, key);
  assert.deepEqual(await eur(key), { currency: 'EUR', pending: 0, available: 1434, reserved: 0 }, 'released once');
  await sound(p.project_id);
});

test("the ledger check proves each merchant's identity, and names a merchant whose books do not add up", async () => {
  const p = await t.newProject('test');
  const s = await sale({ key: p.api_key });
  await settle(s, p.api_key);
  const ok = await checkLedger(t.db, p.project_id);
  assert.deepEqual(ok.violations, []);
  assert.equal(ok.balances, 1, 'one merchant, mode and currency');
  // a balanced journal that takes available money out to the bank without a payout: nothing explains it
  await t.db.query(
    `INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
     VALUES ($1, $2, $3, $4, $4, 'merchant_available', 'EUR', 100, 'settlement', now()),
            ($1, $2, $3, $4, $4, 'bank', 'EUR', -100, 'settlement', now())`,
    [p.project_id, randomUUID(), s.id, s.transactions[0].id],
  );
  const bad = await checkLedger(t.db, p.project_id);
  assert.equal(bad.ok, false);
  assert.deepEqual(bad.violations, [
    `merchant ${p.merchant_id} (test, EUR): captured − refunded − charged back is 1995, ` +
      'fees 61 + paid out 0 + pending 0 + available 1834 + reserved 0 is 1895',
  ]);
});

const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));

test('settlement journals written before merchant balances become available money on migration', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tender-balances-'));
  const before = join(dir, 'before');
  mkdirSync(before);
  for (const f of readdirSync(MIGRATIONS).filter((n) => n.endsWith('.sql') && n < '275_merchant_balances.sql'))
    copyFileSync(join(MIGRATIONS, f), join(before, f));
  const url = process.env.DATABASE_URL;
  const schema = `b_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  if (url) await admin(`CREATE SCHEMA ${schema}`);
  const db: Db = url ? pgDb({ url, schema, max: 2 }) : await pgliteDb('memory://');
  try {
    await migrate(db, before);
    const ctx = buildContext({
      db,
      config: loadConfig({ LOG_LEVEL: 'error' }, { port: 0, masterKey: randomBytes(32).toString('hex') }),
      log: createLogger('error'),
    });
    const project = await createProject(ctx, { name: 'Before balances', mode: 'test' });
    await seedOrders(ctx, { projectId: project.project_id, orders: 60 });
    // what the old settlement left: the merchant's share gone from merchant_payable, though nobody was paid
    const settled = await db.query<{ currency: string; net: number }>(
      `SELECT currency, SUM(settlement_amount)::bigint AS net FROM transactions
       WHERE project_id = $1 AND settled IS NOT NULL AND credit_debit = 'credit' GROUP BY currency ORDER BY currency`,
      [project.project_id],
    );
    assert.ok(settled.length > 0, 'the seed settled some sales');
    const later = readdirSync(MIGRATIONS).filter((n) => n.endsWith('.sql') && n > '275_merchant_balances.sql');
    assert.deepEqual(await migrate(db), ['275_merchant_balances.sql', ...later]);
    const balances = await projectBalances(db, project.project_id);
    assert.deepEqual(
      balances.filter((x) => x.available !== 0).map((x) => [x.currency, x.available]),
      settled.map((x) => [x.currency, Number(x.net)]),
      'what settlement treated as paid is owed, available',
    );
    const report = await checkLedger(db, project.project_id);
    assert.deepEqual(report.violations, []);
    assert.ok(report.balances >= balances.length, 'every currency with a balance is proven');
  } finally {
    await db.close();
    if (url) await admin(`DROP SCHEMA ${schema} CASCADE`);
    rmSync(dir, { recursive: true, force: true });
  }
});
