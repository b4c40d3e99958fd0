import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Db } from './db.ts';

const DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/**
 * Migrations renamed after databases recorded them (old name: new name). Two files once shared
 * the number 085; the later one became 086, its text unchanged. A database that applied it under
 * its old name records the new one and does not run it again.
 */
export const RENAMED: Readonly<Record<string, string>> = { '085_throttle.sql': '086_throttle.sql' };

/**
 * Applies every migrations/*.sql not yet applied, in name order, in one transaction; first it
 * records renamed migrations under their new names. `dir` is for tests that build an older schema.
 */
export async function migrate(db: Db, dir = DIR): Promise<string[]> {
  await db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())');
  return db.tx(async (q) => {
    // One migrator at a time when several nodes start together.
    if (db.kind === 'postgres') await q.query('SELECT pg_advisory_xact_lock(7217001)');
    // a migration may take long on a big store: the sessions' statement_timeout does not apply
    if (db.kind === 'postgres') await q.query('SET LOCAL statement_timeout = 0');
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    for (const [from, to] of Object.entries(RENAMED))
      if (files.includes(to)) await q.query('UPDATE schema_migrations SET name = $2 WHERE name = $1', [from, to]);
    const done = new Set((await q.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name));
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      await q.exec(readFileSync(join(dir, name), 'utf8'));
      await q.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      applied.push(name);
    }
    return applied;
  });
}

/** Migrations in the code not yet applied to the database (/readyz); all of them when none ever ran. */
export async function pendingMigrations(q: Pick<Db, 'query'>): Promise<string[]> {
  const [t] = await q.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  const done = new Set(
    t.present ? (await q.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => RENAMED[r.name] ?? r.name) : [],
  );
  return shipped().filter((f) => !done.has(f));
}

/** The migration files this code ships: read once (a probe of /readyz every few seconds need not list the folder). */
let shippedNames: string[] | undefined;
const shipped = () => (shippedNames ??= readdirSync(DIR).filter((f) => f.endsWith('.sql')));
