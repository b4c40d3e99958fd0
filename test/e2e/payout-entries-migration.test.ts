// Migration 300 (docs/payouts.md, "Statements"): payouts made before payout_entries get their
// lines from the ledger as it stands, each entry in the first payout written after it (by row
// order: the seed dates its orders up to a year back, after the first payout was made), and
// every payout's lines add up to its amount, as `tender ledger check` proves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, copyFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import type { Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { buildContext } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';
import { newId } from '../../src/domain/ids.ts';
import { payoutLegs } from '../../src/domain/ledger.ts';
import { availableByProject, insertFile, insertPayout, insertPayoutJournal } from '../../src/store/payouts/payouts.ts';
import { entriesOfPayout } from '../../src/store/payouts/statements.ts';
import { linesOf } from '../../src/domain/payouts/statement.ts';

const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));
const NAME = '300_payout_entries.sql';

/** A payout as a run made it before migration 300: the whole EUR available balance, its journal, no links. */
async function oldPayout(db: Db, merchant: string, period: string) {
  const parts = await availableByProject(db, merchant, 'test', 'EUR');
  const amount = parts.reduce((s, p) => s + Number(p.available), 0);
  assert.ok(amount > 0, `something to pay on ${period}`);
  return db.tx(async (q) => {
    const fileId = newId();
    const now = new Date();
    await insertFile(q, {
      id: fileId,
      mode: 'test',
      msg_id: `TST${fileId.replaceAll('-', '').toUpperCase()}`,
      pmt_inf_id: `TSP${fileId.replaceAll('-', '').toUpperCase()}`,
      execution: period,
      debtor_name: 'Tender test payouts',
      debtor_iban: 'NL91ABNA0417164300',
      debtor_bic: null,
      created: now,
      written: null,
    });
    const id = newId();
    await insertPayout(q, {
      id,
      merchant_id: merchant,
      mode: 'test',
      currency: 'EUR',
      amount,
      period,
      state: 'scheduled',
      iban: 'NL91ABNA0417164300',
      name: 'Old shop',
      end_to_end_id: `TSE${id.replaceAll('-', '').toUpperCase()}`,
      file_id: fileId,
      created: now,
    });
    const legs = parts.flatMap((p) => payoutLegs(Number(p.available), 'payout').map((l) => ({ ...l, project_id: p.project_id })));
    await insertPayoutJournal(q, id, 'EUR', now, legs);
    return { id, amount };
  });
}

test('payouts made before migration 300 get their lines; each adds up to its payout', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tender-payout-entries-'));
  const before = join(dir, 'before');
  mkdirSync(before);
  for (const f of readdirSync(MIGRATIONS).filter((n) => n.endsWith('.sql') && n < NAME)) copyFileSync(join(MIGRATIONS, f), join(before, f));
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
    const p = await createProject(ctx, { name: 'Old shop', mode: 'test' });
    // the seed's orders are random (refunds, chargebacks): seeded again until there is money to pay
    const seed = async (prefix: string) => {
      for (let n = 0; n < 10; n++) {
        await seedOrders(ctx, { projectId: p.project_id, orders: 40, prefix: `${prefix}${n}-` });
        const parts = await availableByProject(db, p.merchant_id, 'test', 'EUR');
        if (parts.reduce((sum, x) => sum + Number(x.available), 0) > 0) return;
      }
    };
    await seed('ONE-');
    const first = await oldPayout(db, p.merchant_id, '2026-11-01');
    await seed('TWO-');
    const second = await oldPayout(db, p.merchant_id, '2026-11-02');
    const later = readdirSync(MIGRATIONS).filter((n) => n.endsWith('.sql') && n > NAME);
    assert.deepEqual(await migrate(db), [NAME, ...later]);

    for (const [name, paid] of Object.entries({ first, second })) {
      const entries = await entriesOfPayout(db, paid.id);
      assert.ok(entries.length > 0, `${name} has lines`);
      const lines = entries.flatMap(linesOf);
      assert.equal(
        lines.reduce((s, l) => s + l.amount, 0),
        paid.amount,
        `${name}: its lines add up to it`,
      );
      assert.ok(
        entries.every((e) => !e.reference || e.reference.startsWith(name === 'first' ? 'ONE-' : 'TWO-')),
        `${name}: its own orders`,
      );
    }
    assert.deepEqual((await checkLedger(db)).violations, []);
  } finally {
    await db.close();
    if (url) await admin(`DROP SCHEMA ${schema} CASCADE`);
    rmSync(dir, { recursive: true, force: true });
  }
});
