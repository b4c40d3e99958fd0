import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../../config.ts';
import { pgDb } from './pg.ts';
import { pgliteDb } from './lite.ts';
import { type Db } from './db.ts';
import { migrate } from './migrate.ts';

/** The pgDb options every connection of the configured store shares. */
const shared = (config: Config) => ({
  prepared: config.databasePreparedStatements,
  listenUrl: config.databaseListenUrl,
  statementTimeoutMs: config.limits.statementTimeoutMs,
  parallelWorkers: config.limits.parallelWorkers,
  // a report's COPY may run as long as a download is let run (REPORT_MAX_SECONDS)
  reportTimeoutMs: config.limits.reportMaxMs,
});

/**
 * The migrated PGlite cluster the build leaves beside the compiled code (dist/pglite-template,
 * made by scripts/pglite-template.mjs); a fresh data directory starts as a copy of it. Run from
 * the sources there is none, and PGlite makes a new cluster.
 */
const PGLITE_TEMPLATE = join(fileURLToPath(new URL('../..', import.meta.url)), 'pglite-template');

/** Opens the configured store (PostgreSQL when DATABASE_URL is set, else PGlite) and migrates it. */
export async function openStore(config: Config, opts: { schema?: string } = {}): Promise<Db> {
  const db = config.databaseUrl
    ? pgDb({
        url: config.databaseUrl,
        schema: opts.schema,
        max: config.databasePool.size,
        reportMax: config.databasePool.reportSize,
        ...shared(config),
      })
    : await pgliteDb(config.dataDir, { template: PGLITE_TEMPLATE });
  await migrate(db);
  return db;
}

/**
 * The streaming replica (DATABASE_REPLICA_URL) search, reports and the portal's lists read from,
 * or undefined: they read the primary. Never migrated (a replica follows its primary).
 */
export function openReplica(config: Config, opts: { schema?: string } = {}): Db | undefined {
  if (!config.databaseUrl || !config.databaseReplicaUrl) return undefined;
  return pgDb({
    url: config.databaseReplicaUrl,
    schema: opts.schema,
    max: config.databasePool.size,
    reportMax: config.databasePool.reportSize,
    name: 'tender-replica',
    prepared: config.databasePreparedStatements,
    statementTimeoutMs: config.limits.statementTimeoutMs,
    parallelWorkers: config.limits.parallelWorkers,
    reportTimeoutMs: config.limits.reportMaxMs,
  });
}
