import { PGlite, type Transaction } from '@electric-sql/pglite';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { privateDir } from './lock.ts';
import { observeQuery } from '../../telemetry/query.ts';
import { observers, scoped, type Db, type OpenTx, type Queryable, type QueryOptions } from './db.ts';

// The embedded store: PGlite (PostgreSQL in WASM), one connection, in this process.

/** Whether a directory holds a PostgreSQL data directory (PG_VERSION is its first file). */
const holdsCluster = (dir: string) => existsSync(join(dir, 'PG_VERSION'));

/**
 * Opens the data directory; a directory without a cluster is first filled from `template` when
 * given (a cluster the build made and migrated, scripts/pglite-template.mjs): copying it takes
 * a fraction of a second where PGlite's initdb takes several. Should the copy not open, it is
 * removed again and PGlite makes the cluster itself.
 */
async function openLite(dataDir: string, template?: string, loadDataDir?: Blob): Promise<PGlite> {
  if (loadDataDir) return PGlite.create(dataDir, { loadDataDir });
  if (dataDir.startsWith('memory://') || !template || !holdsCluster(template) || holdsCluster(dataDir)) return PGlite.create(dataDir);
  const copied = readdirSync(template);
  cpSync(template, dataDir, { recursive: true });
  try {
    return await PGlite.create(dataDir);
  } catch {
    for (const name of copied) rmSync(join(dataDir, name), { recursive: true, force: true });
    return PGlite.create(dataDir);
  }
}

/** The PGlite under each store pgliteDb opened, for dumpLite. */
const opened = new WeakMap<Db, PGlite>();

/** A store's whole cluster as a tarball, which `pgliteDb(dir, { loadDataDir })` opens again as it was. */
export async function dumpLite(db: Db): Promise<Blob> {
  const lite = opened.get(db);
  if (!lite) throw new Error('not a PGlite store');
  return lite.dumpDataDir('none');
}

/**
 * Embedded Postgres in WASM. One process per data directory; `memory://` for throwaway stores.
 * `template`: see openLite. `loadDataDir`: a cluster dumpLite made (the tests' migrated store:
 * loading it skips PGlite's initdb, seconds of CPU a store).
 */
export async function pgliteDb(dataDir: string, opts: { template?: string; loadDataDir?: Blob } = {}): Promise<Db> {
  if (!dataDir.startsWith('memory://')) privateDir(dataDir);
  const lite = await openLite(dataDir, opts.template, opts.loadDataDir);
  const parse = { 20: (v: string) => Number(v) };
  // In process, no socket: what is noted is what PostgreSQL would take as a round trip, so
  // counts match pgDb's: a transaction's BEGIN goes with its first statement, a statement with
  // QueryOptions.commit takes the COMMIT, and a transaction that sent nothing notes nothing.
  const seen = observers();
  const run = async <T>(q: Pick<Transaction, 'query'>, sql: string, params?: unknown[]) => {
    seen.note(sql);
    return (await observeQuery('pglite', sql, () => q.query<T>(sql, params, { parsers: parse }))).rows;
  };
  /** A transaction's statements, noted as pgDb sends them. */
  const noted = (t: Pick<Transaction, 'query' | 'exec'>) => {
    const state = { begun: false, committed: false };
    const q: Queryable = {
      async query<T>(sql: string, params?: unknown[], opts?: QueryOptions) {
        if (state.committed) throw new Error('the transaction has ended: a statement after its COMMIT would run on its own');
        seen.note([!state.begun && 'BEGIN', sql, opts?.commit && 'COMMIT'].filter(Boolean).join('; '));
        state.begun = true;
        const { rows } = await observeQuery('pglite', sql, () => t.query<T>(sql, params, { parsers: parse }));
        if (opts?.commit) {
          // committed here, as on PostgreSQL (lite.transaction's own COMMIT then finds none open)
          await t.exec('COMMIT');
          state.committed = true;
        }
        return rows;
      },
      async exec(sql) {
        if (state.committed) throw new Error('the transaction has ended');
        if (!state.begun) seen.note('BEGIN');
        state.begun = true;
        seen.note(sql);
        await t.exec(sql);
      },
    };
    return { q, state };
  };
  /** lite.transaction over noted() statements, noting its COMMIT or ROLLBACK. */
  const transaction = <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
    lite.transaction(async (t) => {
      const { q, state } = noted(t);
      try {
        const result = await fn(q);
        if (state.begun && !state.committed) seen.note('COMMIT');
        return result;
      } catch (err) {
        if (state.begun && !state.committed) seen.note('ROLLBACK');
        throw err;
      }
    });
  const begin = async (): Promise<OpenTx> => {
    let settle!: { resolve(): void; reject(err: Error): void };
    let handed!: (q: Queryable) => void;
    const got = new Promise<Queryable>((resolve) => (handed = resolve));
    const done = transaction((q) => {
      handed(q);
      return new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    });
    done.catch(() => {});
    const q = await Promise.race([got, done.then(() => Promise.reject(new Error('transaction ended before it began')))]);
    let closed = false;
    return {
      q,
      get closed() {
        return closed;
      },
      async commit() {
        if (closed) return;
        closed = true;
        settle.resolve();
        await done;
      },
      async rollback() {
        if (closed) return;
        closed = true;
        settle.reject(new Error('rolled back'));
        await done.catch(() => {});
      },
    };
  };
  const self = {}; // this store's identity for within()
  const own = {
    query: <T>(sql: string, params?: unknown[]) => run<T>(lite, sql, params),
    tx: transaction,
  };
  const db: Db = {
    kind: 'pglite',
    ...scoped(self, own),
    begin,
    observe: seen.observe,
    async exec(sql: string) {
      seen.note(sql);
      await lite.exec(sql);
    },
    async listen(channel: string, onNotify: () => void) {
      const stop = await lite.listen(channel, () => onNotify());
      return async () => stop();
    },
    close: () => lite.close(),
  };
  opened.set(db, lite);
  return db;
}
