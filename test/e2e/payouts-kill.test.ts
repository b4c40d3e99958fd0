// A payout run killed (SIGKILL) at different moments, then run again: every merchant is paid
// exactly once, every file on disk validates against the EPC's schema and holds each payout
// once, and the ledger check passes. The `tender` CLI on a store of its own (a PGlite data
// directory, or a PostgreSQL schema when DATABASE_URL is set).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BIN, embeddedEnv, runTender } from '../helpers/cli.ts';
import { xmllint } from '../helpers/sepa.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import type { Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { buildContext } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';
import { scheduleMerchant } from '../../src/services/payouts/payouts.ts';
import { availableByProject } from '../../src/store/payouts/payouts.ts';

/** Runs `tender ARGS` and SIGKILLs it the moment it logs `message`; resolves with whether it got that far. */
const killedAt = (args: string[], env: NodeJS.ProcessEnv, message: string) =>
  new Promise<{ seen: boolean; text: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = false;
    let text = ''; // a log line may come in two chunks
    const watch = (d: Buffer) => {
      text += d.toString();
      if (!seen && text.includes(`"msg":"${message}"`)) {
        seen = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', watch);
    child.on('close', () => resolve({ seen, text }));
  });

test('a payout run killed at any moment and run again pays each merchant exactly once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tender-payout-kill-'));
  const out = join(dir, 'out');
  const url = process.env.DATABASE_URL;
  const schema = `k_${randomBytes(6).toString('hex')}`;
  const sql = async <T extends pg.QueryResultRow>(text: string, params: unknown[] = []) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(text, params)).rows;
    } finally {
      await c.end();
    }
  };
  const masterKey = randomBytes(32).toString('hex');
  let env: NodeJS.ProcessEnv = { ...embeddedEnv(join(dir, 'data')), TENDER_MASTER_KEY: masterKey };
  if (url) {
    await sql(`CREATE SCHEMA ${schema}`);
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env = { ...env, DATABASE_URL: u.toString() };
  }
  const tender = async (...args: string[]) => {
    const r = await runTender(args, env, 120_000);
    assert.equal(r.code, 0, `tender ${args.join(' ')}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  try {
    // the store and its money, made in this process, then closed for the CLI
    const db: Db = url ? pgDb({ url, schema, max: 2 }) : await pgliteDb(join(dir, 'data'));
    const merchants: string[] = [];
    try {
      await migrate(db);
      const ctx = buildContext({ db, config: loadConfig({ LOG_LEVEL: 'error' }, { port: 0, masterKey }), log: createLogger('error') });
      for (const [i, iban] of ['NL91ABNA0417164300', 'DE89370400440532013000', 'FR1420041010050500013M02606'].entries()) {
        const p = await createProject(ctx, { name: `Shop ${i}`, mode: 'test' });
        // the seed is random: refunds and chargebacks can outweigh its few settled sales, so seed
        // until the merchant has something to be paid (a balance at or below 0 makes no payout)
        const available = async () =>
          (await availableByProject(db, p.merchant_id, 'test', 'EUR')).reduce((sum, r) => sum + Number(r.available), 0);
        for (let i = 0; i < 20 && (i === 0 || (await available()) <= 0); i++)
          await seedOrders(ctx, { projectId: p.project_id, orders: 80 });
        assert.ok((await available()) > 0, 'each merchant has money to be paid');
        await scheduleMerchant(ctx, { merchant: p.merchant_id, iban, name: `Shop ${i}`, every: 'daily' });
        merchants.push(p.merchant_id);
      }
    } finally {
      await db.close();
    }
    const run = ['payouts', 'run', '--out', out, '--json'];
    const first = await killedAt(run, env, 'payout made');
    assert.ok(first.seen, `killed after its first payout: ${first.text}`);
    const second = await killedAt(run, env, 'writing payout file');
    assert.ok(second.seen, `killed as it writes the file: ${second.text}`);
    const last = JSON.parse(await tender('payouts', 'run', '--out', out, '--json'));
    const again = JSON.parse(await tender('payouts', 'run', '--out', out, '--json'));
    assert.deepEqual(again, { files: [], payouts: [] }, 'nothing left to pay or write');
    // a file per run that made payouts; one a killed run did not finish is written by the next (the kill may land before or after the write)
    assert.ok(Array.isArray(last.files));

    // every file on disk is whole and valid; each payout's transfer is in exactly one of them
    const files = readdirSync(out).filter((f) => f.endsWith('.xml'));
    assert.ok(files.length >= 1);
    assert.deepEqual(
      readdirSync(out).filter((f) => !f.endsWith('.xml')),
      [],
      'the file the killed run was writing was written again whole',
    );
    const ids: string[] = [];
    for (const f of files) {
      assert.equal(xmllint(join(out, f)), '', f);
      ids.push(...[...readFileSync(join(out, f), 'utf8').matchAll(/<EndToEndId>([A-Z0-9]+)<\/EndToEndId>/g)].map((m) => m[1]!));
    }
    const check = JSON.parse(await tender('ledger', 'check', '--json'));
    assert.deepEqual(check.violations, []);
    // the store, read once no process holds it
    const rows = url
      ? await sql<{ merchant_id: string; end_to_end_id: string; state: string }>(
          `SELECT merchant_id::text, end_to_end_id, state FROM ${schema}.payouts ORDER BY merchant_id`,
        )
      : await (async () => {
          const db = await pgliteDb(join(dir, 'data'));
          try {
            return await db.query<{ merchant_id: string; end_to_end_id: string; state: string }>(
              'SELECT merchant_id::text, end_to_end_id, state FROM payouts ORDER BY merchant_id',
            );
          } finally {
            await db.close();
          }
        })();
    assert.deepEqual(
      rows.map((r) => r.merchant_id),
      [...merchants].sort(),
      'one payout per merchant',
    );
    assert.deepEqual([...ids].sort(), rows.map((r) => r.end_to_end_id).sort(), 'each transfer once, in the files');
    assert.ok(rows.every((r) => r.state === 'sent'));
  } finally {
    if (url) await sql(`DROP SCHEMA ${schema} CASCADE`);
    rmSync(dir, { recursive: true, force: true });
  }
});
