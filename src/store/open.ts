import type { Config } from '../config.ts';
import { pgDb, pgliteDb, type Db } from './db.ts';
import { migrate } from './migrate.ts';

/** Opens the configured store (PostgreSQL when DATABASE_URL is set, else PGlite) and migrates it. */
export async function openStore(config: Config, opts: { schema?: string } = {}): Promise<Db> {
  const db = config.databaseUrl
    ? pgDb({ url: config.databaseUrl, schema: opts.schema, max: config.databasePool.size, reportMax: config.databasePool.reportSize })
    : await pgliteDb(config.dataDir);
  await migrate(db);
  return db;
}
