import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { DomainError } from '../../domain/errors.ts';

/** The one query layer: plain parameterised SQL over `pg` or PGlite. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<T[]>;
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
}

export interface QueryOptions {
  /**
   * Prepare the statement under this name once per connection (PostgreSQL), skipping parse and
   * plan on later runs. Only for hot statements whose text is fixed for the name. `true` names it
   * by its text (statementName), for statements composed in a few shapes. PGlite ignores it.
   */
  prepare?: string | true;
  /**
   * The last statement of a transaction (Db.tx, Db.begin): its COMMIT goes with it, in the same
   * round trip (store/db/pipeline.ts). After it the transaction has ended: what was written stays
   * even if the transaction's function throws later, and a further statement in it throws.
   * Outside a transaction, and in a transaction nested in within() (a savepoint), it is ignored.
   */
  commit?: boolean;
}

/** opts without commit: for a statement that must not end the transaction it runs in. */
const keepOpen = (opts?: QueryOptions) => (opts?.commit ? { ...opts, commit: false } : opts);

/** The name a statement is prepared under when QueryOptions.prepare is true: one per text. */
export function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `s_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    if (names.size >= 1024) names.clear(); // statements come in a few shapes; this never fills in practice
    names.set(sql, name);
  }
  return name;
}
/** statementName's answers by text: a Map lookup costs less than a SHA-1 of a long statement. */
const names = new Map<string, string>();

/** A transaction left open across several steps (an idempotent request: see within()). */
export interface OpenTx {
  readonly q: Queryable;
  readonly closed: boolean;
  /** Commits; a lost connection throws the 503 DomainError (the commit may or may not have happened). */
  commit(): Promise<void>;
  /** Rolls back; never throws. */
  rollback(): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in one database transaction; rolls back when it throws. Inside within(): a savepoint. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Opens a transaction that stays open until commit() or rollback(). */
  begin(): Promise<OpenTx>;
  /**
   * Runs fn with every query and tx() of this Db, in fn and everything it starts, inside the
   * open transaction (tx() becomes a savepoint). What fn does then commits or rolls back as one.
   */
  within<T>(open: OpenTx, fn: () => T): T;
  /** Whether the caller runs inside within(): its queries join that open transaction. */
  held(): boolean;
  /**
   * Whether the caller holds a transaction of this store open: inside within(), or inside a tx()
   * callback (its own queries on `q` or not). What must never run with a transaction open (an
   * acquirer call, services/payments/attempts/call.ts) asks this.
   */
  holding(): boolean;
  /** LISTEN on a channel where the driver has it; returns a stop function. */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * PostgreSQL only: the rows of a SELECT as CSV written by the database (COPY ... TO STDOUT),
   * streamed with backpressure on a connection of the report pool, apart from the one queries
   * use: a download lasts as long as its client reads, and downloads must never take the
   * connections payments need. When every report connection is busy, the next download waits
   * for one. Destroying the stream abandons the COPY and closes that connection.
   */
  copyCsv?(select: string, params: unknown[]): Promise<Readable>;
  /**
   * Calls `listener` with the text of every statement this store sends from now on, one call a
   * round trip (BEGIN, COMMIT, ROLLBACK and savepoints included; LISTEN and COPY not). A BEGIN or
   * COMMIT that goes with a statement is in that call's text (`BEGIN; SELECT ...`). For tests
   * that count round trips (test/e2e/round-trips.test.ts). Returns a function that stops it.
   */
  observe(listener: (sql: string) => void): () => void;
  /**
   * PostgreSQL only: like copyCsv for a statement split in parts, copied side by side on up to
   * every free report connection, all in one snapshot (the first connection exports it, the
   * others import it), and written out one part after another, in order. `partsOf` runs in that
   * snapshot and returns the parts' SELECTs. A part copied ahead of the one being written is
   * held in memory up to `aheadBytes`, then its COPY waits; so memory stays bounded by the
   * connections times that, whatever the report's size.
   */
  /**
   * PostgreSQL only: runs fn on a connection of its own, and cancels its statement in the
   * server (pg_cancel_backend) when `signal` aborts, as when the client that asked has gone.
   * A connection whose statement was cancelled is closed rather than reused.
   */
  withCancel?<T>(signal: AbortSignal, fn: (q: Queryable) => Promise<T>): Promise<T>;
  copyCsvParts?(partsOf: (q: Queryable) => Promise<Array<{ sql: string; params: unknown[] }>>, aheadBytes?: number): Promise<Readable>;
  /** PostgreSQL only: the query pool's connections now (the metrics tender_db_pool_*) */
  pool?(): { inUse: number; idle: number; waiting: number; max: number };
  close(): Promise<void>;
}

/** The listeners of Db.observe and the one place a store reports a round trip. */
export function observers() {
  const listeners = new Set<(sql: string) => void>();
  return {
    note(sql: string) {
      for (const l of listeners) l(sql);
    },
    observe(listener: (sql: string) => void) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}

/**
 * PostgreSQL error classes and driver errors that mean the connection, not the statement,
 * failed: the server went away (57P01 admin_shutdown from pg_terminate_backend, 57P02, a
 * restart), refuses connections (57P03, 53300 too_many_connections, ECONNREFUSED), or the
 * socket broke (class 08, ECONNRESET). The statement did not commit: a retry is safe.
 */
const LOST_CODES = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const LOST_MESSAGES =
  /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly/i;

export function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  return LOST_CODES.has(code) || code.startsWith('08') || (typeof e.message === 'string' && LOST_MESSAGES.test(e.message));
}

/** A lost connection becomes a 503 (Retry-After, error body); any other error passes unchanged. */
/** PostgreSQL stopped the transaction so another could finish: a deadlock, or a serialization failure. Trying again is safe. */
export const isConflict = (err: unknown): boolean => {
  const codeOf = (e: unknown) => (e as { code?: unknown } | null)?.code;
  return CONFLICTS.has(codeOf(err) as string) || CONFLICTS.has(codeOf((err as { cause?: unknown } | null)?.cause) as string);
};
const CONFLICTS = new Set(['40P01', '40001']);

export function unavailableOr(err: unknown): unknown {
  if (isConflict(err) && !(err instanceof DomainError)) {
    // tx() has tried again already (pg.ts); still stopped: the client may retry, nothing was done
    const api = new DomainError('ServiceUnavailable', 'the database stopped this request to let another one finish; retry');
    (api as { cause?: unknown }).cause = err;
    return api;
  }
  if ((err as { code?: unknown } | null)?.code === '57014' && !(err instanceof DomainError)) {
    // statement_timeout (DATABASE_STATEMENT_TIMEOUT_MS), or a cancel: the work stopped, nothing half-done stays
    const api = new DomainError('ServiceUnavailable', 'the request took longer than the database allows; narrow it or retry later');
    (api as { cause?: unknown }).cause = err;
    return api;
  }
  if (!connectionLost(err) || err instanceof DomainError) return err;
  const api = new DomainError('ServiceUnavailable', 'the database is temporarily unavailable; retry later');
  (api as { cause?: unknown }).cause = err;
  return api;
}

export const ignore = () => {};

export const mapped = async <T>(p: Promise<T>): Promise<T> => {
  try {
    return await p;
  } catch (err) {
    throw unavailableOr(err);
  }
};

interface Scope {
  db: object;
  open: OpenTx;
  /** savepoint names */
  seq: { n: number };
  /** top-level tx() calls of one scope run one after another: savepoints on one connection nest */
  chain: { p: Promise<unknown> };
  /** inside a tx() of the scope: nested tx() calls are savepoints within it, not queued behind it */
  nested: boolean;
}
const scopes = new AsyncLocalStorage<Scope>();
/** The tx() a function runs in (outside within()): its store, and whether it is still open. */
const txs = new AsyncLocalStorage<{ db: object; open: boolean }>();

/** The open transaction fn runs in (see Db.within), or undefined. */
function scopeOf(db: object): Scope | undefined {
  const s = scopes.getStore();
  return s && s.db === db && !s.open.closed ? s : undefined;
}

/** query, tx and within of a Db that honour within(), over the driver's own query/tx. */
export function scoped(
  db: object,
  own: { query: Queryable['query']; tx: Db['tx'] },
): Pick<Db, 'query' | 'tx' | 'within' | 'held' | 'holding'> {
  return {
    held: () => scopeOf(db) !== undefined,
    holding() {
      const t = txs.getStore();
      return scopeOf(db) !== undefined || (t !== undefined && t.db === db && t.open);
    },
    query(sql, params, opts) {
      const s = scopeOf(db);
      return s ? s.open.q.query(sql, params, keepOpen(opts)) : own.query(sql, params, keepOpen(opts));
    },
    tx(fn) {
      const s = scopeOf(db);
      if (!s)
        return own.tx(async (q) => {
          // closed when the callback ends: a timer or callback it started, running later, holds nothing
          const t = { db, open: true };
          try {
            return await txs.run(t, () => fn(q));
          } finally {
            t.open = false;
          }
        });
      // the savepoint's statements go on the open transaction, which they must not commit
      const inner: Queryable = {
        query: (sql, params, opts) => s.open.q.query(sql, params, keepOpen(opts)),
        exec: (sql) => s.open.q.exec(sql),
      };
      const run = async () => {
        const name = `tender_sp_${++s.seq.n}`;
        await s.open.q.query(`SAVEPOINT ${name}`);
        try {
          const result = await scopes.run({ ...s, nested: true }, () => fn(inner));
          await s.open.q.query(`RELEASE SAVEPOINT ${name}`);
          return result;
        } catch (err) {
          await s.open.q.query(`ROLLBACK TO SAVEPOINT ${name}`).catch(() => {});
          throw err;
        }
      };
      if (s.nested) return run();
      const p = s.chain.p.then(run, run);
      s.chain.p = p.catch(() => {});
      return p;
    },
    within(open, fn) {
      return scopes.run({ db, open, seq: { n: 0 }, chain: { p: Promise.resolve() }, nested: false }, fn);
    },
  };
}

/** The cheapest statement: does the database answer? */
export async function ping(q: Queryable) {
  await q.query('SELECT 1');
}
