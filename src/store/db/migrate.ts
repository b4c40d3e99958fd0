import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Db } from './db.ts';

const DIR = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Applies every migrations/*.sql not yet applied, in name order, in one transaction. */
export async function migrate(db: Db): Promise<string[]> {
  await db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())');
  return db.tx(async (q) => {
    // One migrator at a time when several nodes start together.
    if (db.kind === 'postgres') await q.query('SELECT pg_advisory_xact_lock(7217001)');
    // a migration may take long on a big store: the sessions' statement_timeout does not apply
    if (db.kind === 'postgres') await q.query('SET LOCAL statement_timeout = 0');
    const done = new Set((await q.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name));
    const applied: string[] = [];
    for (const name of readdirSync(DIR)
      .filter((f) => f.endsWith('.sql'))
      .sort()) {
      if (done.has(name)) continue;
      await q.exec(readFileSync(join(DIR, name), 'utf8'));
      await q.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
      applied.push(name);
    }
    return applied;
  });
}

/** Migrations in the code not yet applied to the database (/readyz); all of them when none ever ran. */
export async function pendingMigrations(q: Pick<Db, 'query'>): Promise<string[]> {
  const [t] = await q.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  const done = new Set(t.present ? (await q.query<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name) : []);
  return readdirSync(DIR).filter((f) => f.endsWith('.sql') && !done.has(f));
}
