// A store migrated before the migrations were renumbered (two files shared 085; 085_throttle.sql
// became 086_throttle.sql) upgrades cleanly: the new code records the new name, runs nothing
// twice, and the store passes `tender ledger check`. On the suite's store: a PGlite data directory,
// or a schema of its own on PostgreSQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { runTender } from '../helpers/cli.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import type { Db } from '../../src/store/db/db.ts';
import { migrate, RENAMED } from '../../src/store/db/migrate.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { buildContext } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';

const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));
/** The migration files as main had them before the renumbering, by name. */
const BEFORE = readFileSync(new URL('../fixtures/migrations/before-renumbering.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean);
const current = () =>
  readdirSync(MIGRATIONS)
    .filter((f) => f.endsWith('.sql'))
    .sort();

/** The migrations under the names main gave them, each with the text it has now (a rename changes no text). */
function migrationsBefore(dir: string): string {
  const out = join(dir, 'migrations-before');
  mkdirSync(out);
  const now = new Set(current());
  for (const name of BEFORE) {
    const file = RENAMED[name] ?? name;
    assert.ok(now.has(file), `${name} (${file}) is still shipped`);
    writeFileSync(join(out, name), readFileSync(join(MIGRATIONS, file)));
  }
  return out;
}

test('a store migrated under the old names upgrades: renamed migrations recorded, none run again, ledger check passes', async () => {
  assert.ok(
    Object.keys(RENAMED).every((n) => BEFORE.includes(n)),
    'each renamed file existed under its old name',
  );
  const dir = mkdtempSync(join(tmpdir(), 'tender-renames-'));
  const url = process.env.DATABASE_URL;
  const masterKey = randomBytes(32).toString('hex');
  const schema = `r_${randomBytes(6).toString('hex')}`;
  let env: Record<string, string>;
  const open = async (): Promise<Db> => (url ? pgDb({ url, schema, max: 2 }) : pgliteDb(join(dir, 'data')));
  if (url) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env = { DATABASE_URL: u.toString() };
  } else {
    env = { TENDER_DATA_DIR: join(dir, 'data'), DATABASE_URL: '' };
  }
  try {
    // the store as main left it: its migrations under their old names, and money in it
    let db = await open();
    assert.deepEqual(await migrate(db, migrationsBefore(dir)), BEFORE);
    const config = loadConfig({ LOG_LEVEL: 'error' }, { port: 0, masterKey });
    const ctx = buildContext({ db, config, log: createLogger('error') });
    const project = await createProject(ctx, { name: 'Before the renumbering', mode: 'test' });
    const seeded = await seedOrders(ctx, { projectId: project.project_id, orders: 30 });
    assert.equal(seeded.orders, 30);
    const recorded = async () => (await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name')).map((r) => r.name);
    assert.ok((await recorded()).includes('085_throttle.sql'));

    // the new code: the renamed migration recorded under its new name, none run again; only the
    // migrations written since then are applied
    const shipped = new Set(BEFORE.map((n) => RENAMED[n] ?? n));
    assert.deepEqual(
      await migrate(db),
      current().filter((n) => !shipped.has(n)),
    );
    assert.deepEqual(await recorded(), current());
    assert.deepEqual(await migrate(db), [], 'a second start changes nothing');
    await db.close();

    const cliEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', TENDER_WORKER: 'off', TENDER_MASTER_KEY: masterKey, ...env };
    if (!url) delete cliEnv.DATABASE_URL;
    const check = await runTender(['ledger', 'check'], cliEnv);
    assert.equal(check.code, 0, check.stderr + check.stdout);
    assert.match(check.stdout, /ledger check passed: [1-9]\d* authorizations/);
    db = await open();
    assert.deepEqual(await recorded(), current(), 'the CLI, migrating on open, found nothing to do');
    await db.close();
  } finally {
    if (url) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
