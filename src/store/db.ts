import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { PGlite } from '@electric-sql/pglite';
import { PassThrough, type Readable } from 'node:stream';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { privateDir } from './lock.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { ApiError } from '../domain/errors.ts';
import { multiHostClient, parseHosts } from './hosts.ts';

/** The one query layer: plain parameterised SQL over `pg` or PGlite. */
export interface Queryable {
  query<T = Record<string, any>>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<T[]>;
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
}

/** The name a statement is prepared under when QueryOptions.prepare is true: one per text. */
export const statementName = (sql: string) => `s_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;

/** A transaction left open across several steps (an idempotent request: see within()). */
export interface OpenTx {
  readonly q: Queryable;
  readonly closed: boolean;
  /** Commits; a lost connection throws the 503 ApiError (the commit may or may not have happened). */
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
   * round trip (BEGIN, COMMIT, ROLLBACK and savepoints included; LISTEN and COPY not). For tests
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
  copyCsvParts?(partsOf: (q: Queryable) => Promise<Array<{ sql: string; params: unknown[] }>>, aheadBytes?: number): Promise<Readable>;
  close(): Promise<void>;
}

/** The listeners of Db.observe and the one place a store reports a round trip. */
function observers() {
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
 * A statement with its $n parameters written in as literals, for COPY, which takes none. A value
 * becomes a quoted literal of unknown type (pg's escapeLiteral), as a bind parameter is text of
 * unknown type, so the server infers the same types. Scalars only: our statements bind no arrays.
 */
export function inlineParams(sql: string, params: unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const v = params[Number(n) - 1];
    if (v === null || v === undefined) return 'NULL';
    if (v instanceof Date) return pg.escapeLiteral(v.toISOString());
    if (typeof v === 'object') throw new Error(`parameter $${n} is not a scalar`);
    return pg.escapeLiteral(String(v));
  });
}

/**
 * PostgreSQL error classes and driver errors that mean the connection, not the statement,
 * failed: the server went away (57P01 admin_shutdown from pg_terminate_backend, 57P02, a
 * restart), refuses connections (57P03, 53300 too_many_connections, ECONNREFUSED), or the
 * socket broke (class 08, ECONNRESET). The statement did not commit: a retry is safe.
 */
const LOST_CODES = new Set(['57P01', '57P02', '57P03', '53300', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const LOST_MESSAGES = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly/i;

export function connectionLost(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  return LOST_CODES.has(code) || code.startsWith('08') || (typeof e.message === 'string' && LOST_MESSAGES.test(e.message));
}

/** Seconds a client is told to wait after a lost connection: the pool reconnects on the next request. */
export const UNAVAILABLE_RETRY_AFTER = 1;

/** A lost connection becomes a 503 (Retry-After, error body); any other error passes unchanged. */
export function unavailableOr(err: unknown): unknown {
  if (!connectionLost(err) || err instanceof ApiError) return err;
  const api = new ApiError('ServiceUnavailable', 'the database is temporarily unavailable; retry later');
  (api as { cause?: unknown }).cause = err;
  return api;
}

const ignore = () => {};

const mapped = async <T>(p: Promise<T>): Promise<T> => {
  try {
    return await p;
  } catch (err) {
    throw unavailableOr(err);
  }
};

/**
 * LISTEN on a connection of its own that comes back by itself: when the connection drops, it
 * reconnects (backing off to 5 s) and listens again, then calls onNotify once, because
 * notifications sent while it was away are lost (the key cache clears, the worker looks for jobs).
 */
function reconnectingListener(connect: () => pg.Client, channel: string, onNotify: () => void) {
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let delay = 100;
  const open = async (again: boolean): Promise<void> => {
    const c = connect();
    let dropped = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      c.removeAllListeners('notification');
      void c.end().catch(() => {});
      if (client === c) client = undefined;
      if (!stopped) timer = setTimeout(() => void open(true).catch(() => {}), delay);
      delay = Math.min(delay * 2, 5000);
    };
    c.on('error', drop);
    c.on('end', drop);
    try {
      await c.connect();
      c.on('notification', () => onNotify());
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      drop();
      if (!again) throw err; // the first LISTEN fails loudly, as before; later ones keep trying
      return;
    }
    if (stopped) return void c.end().catch(() => {});
    client = c;
    delay = 100;
    if (again) onNotify();
  };
  return {
    start: () => open(false),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await client?.end().catch(() => {});
    },
  };
}

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

/** The open transaction fn runs in (see Db.within), or undefined. */
function scopeOf(db: object): Scope | undefined {
  const s = scopes.getStore();
  return s && s.db === db && !s.open.closed ? s : undefined;
}

/** query, tx and within of a Db that honour within(), over the driver's own query/tx. */
function scoped(db: object, own: { query: Queryable['query']; tx: Db['tx'] }): Pick<Db, 'query' | 'tx' | 'within' | 'held'> {
  return {
    held: () => scopeOf(db) !== undefined,
    query(sql, params, opts) {
      const s = scopeOf(db);
      return s ? s.open.q.query(sql, params, opts) : own.query(sql, params, opts);
    },
    tx(fn) {
      const s = scopeOf(db);
      if (!s) return own.tx(fn);
      const run = async () => {
        const name = `tender_sp_${++s.seq.n}`;
        await s.open.q.query(`SAVEPOINT ${name}`);
        try {
          const result = await scopes.run({ ...s, nested: true }, () => fn(s.open.q));
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

// bigint columns hold minor units that fit a JS safe integer; parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

export interface PgOptions {
  url: string;
  schema?: string;
  /** connections for queries */
  max?: number;
  /** connections for CSV reports (copyCsv), opened on the first report */
  reportMax?: number;
  /** application_name of its connections (pg_stat_activity): `tender` unless given; reports and LISTEN add -report, -listen */
  name?: string;
  /** LISTEN on this URL instead of url (a direct connection when url goes through PgBouncer in transaction mode) */
  listenUrl?: string;
  /**
   * Named prepared statements (QueryOptions.prepare) on; off, each statement goes unnamed (for a
   * pooler that does not keep them per connection, such as PgBouncer in transaction mode). The one
   * switch: statements pass only a name.
   */
  prepared?: boolean;
  /** every transaction of its sessions read-only (default_transaction_read_only): a write fails */
  readOnly?: boolean;
}

export function pgDb({ url, schema, max = 10, reportMax = 2, name = 'tender', listenUrl, prepared = true, readOnly = false }: PgOptions): Db {
  const seen = observers();
  const settings = [schema ? `-c search_path=${schema}` : '', readOnly ? '-c default_transaction_read_only=on' : ''].filter(Boolean);
  const options = settings.length ? settings.join(' ') : undefined;
  // named for pg_stat_activity: tender / tender-report / tender-listen, with the schema when there is one
  const nameOf = (suffix: string) => (schema ? `${name}${suffix} ${schema}` : `${name}${suffix}`);
  // several hosts (target_session_attrs=read-write): each connection to the one that takes writes now
  const hosts = parseHosts(url);
  const Client = hosts ? multiHostClient(hosts) : pg.Client;
  const newPool = (size: number, suffix: string) => {
    const p = new pg.Pool({ connectionString: url, max: size, options, application_name: nameOf(suffix), Client });
    p.on('error', () => {}); // an idle client's error must not kill the process; the pool drops it
    return p;
  };
  const pool = newPool(max, '');
  let reportPool: pg.Pool | undefined;
  const run = async (c: pg.Pool | pg.PoolClient, sql: string, params?: unknown[], opts?: QueryOptions) => {
    seen.note(sql);
    if (!prepared || !opts?.prepare) return (await c.query(sql, params as any[])).rows;
    const statement = opts.prepare === true ? statementName(sql) : opts.prepare;
    return (await c.query({ name: statement, text: sql, values: params as any[] })).rows;
  };
  const begin = async (): Promise<OpenTx> => {
    const client = await mapped(pool.connect());
    // A checked-out client's connection can drop between statements; without a listener its
    // 'error' event would end the process. Its next statement then fails, and the pool discards it.
    let lost: Error | undefined;
    const onError = (err: Error) => void (lost ??= err);
    client.on('error', onError);
    let closed = false;
    const end = async (sql: 'COMMIT' | 'ROLLBACK') => {
      if (closed) return;
      closed = true;
      let failed: unknown;
      try {
        seen.note(sql);
        await client.query(sql);
      } catch (err) {
        failed = err;
      } finally {
        client.removeListener('error', onError);
        client.release(lost ?? (failed as Error | undefined));
      }
      if (failed && sql === 'COMMIT') throw unavailableOr(failed);
    };
    try {
      seen.note('BEGIN');
      await client.query('BEGIN');
    } catch (err) {
      closed = true;
      client.removeListener('error', onError);
      client.release(err as Error);
      throw unavailableOr(err);
    }
    return {
      q: {
        query: (sql, params, opts) => mapped(run(client, sql, params, opts)) as any,
        exec: async (sql) => {
          seen.note(sql);
          await mapped(client.query(sql));
        },
      },
      get closed() {
        return closed;
      },
      commit: () => end('COMMIT'),
      rollback: () => end('ROLLBACK'),
    };
  };
  const self = {}; // this store's identity for within()
  const own = {
    query: (sql: string, params?: unknown[], opts?: QueryOptions) => mapped(run(pool, sql, params, opts)) as any,
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const open = await begin();
      try {
        const result = await fn(open.q);
        await open.commit();
        return result;
      } catch (err) {
        await open.rollback();
        throw err;
      }
    },
  };
  const db: Db = {
    kind: 'postgres',
    ...scoped(self, own),
    begin,
    observe: seen.observe,
    async exec(sql) {
      seen.note(sql);
      await mapped(pool.query(sql));
    },
    async listen(channel, onNotify) {
      const at = listenUrl ?? url;
      const ListenClient = listenUrl ? (parseHosts(listenUrl) ? multiHostClient(parseHosts(listenUrl)!) : pg.Client) : Client;
      const listener = reconnectingListener(() => new ListenClient({ connectionString: at, options, application_name: nameOf('-listen') }), channel, onNotify);
      await listener.start();
      return listener.stop;
    },
    async copyCsv(select, params) {
      const client = await mapped((reportPool ??= newPool(reportMax, '-report')).connect());
      // a dropped report connection ends its stream (below), not the process; one listener per client
      if (!client.listeners('error').includes(ignore)) client.on('error', ignore);
      const stream = client.query(copyTo(`COPY (${inlineParams(select, params)}) TO STDOUT WITH (FORMAT csv)`));
      let released = false;
      const release = (err?: Error) => {
        if (released) return;
        released = true;
        client.release(err); // with an error the pool discards the connection
      };
      stream.on('end', () => release());
      stream.on('error', (err) => release(err));
      // abandoned mid-COPY: the protocol cannot stop a COPY TO, so the connection is discarded
      stream.on('close', () => release(stream.readableEnded ? undefined : new Error('COPY abandoned')));
      return stream;
    },
    copyCsvParts(partsOf, aheadBytes = 4 * 1024 * 1024) {
      return copyParts((reportPool ??= newPool(reportMax, 'tender-report')), reportMax, partsOf, aheadBytes);
    },
    async close() {
      await Promise.all([pool.end(), reportPool?.end()]);
    },
  };
  return db;
}

/** Db.copyCsvParts over a report pool of `max` connections. */
async function copyParts(pool: pg.Pool, max: number, partsOf: Parameters<NonNullable<Db['copyCsvParts']>>[0], aheadBytes: number): Promise<Readable> {
  const clients: pg.PoolClient[] = [];
  const broken = new Set<pg.PoolClient>();
  const releaseAll = () => {
    for (const c of clients.splice(0)) {
      if (broken.has(c)) c.release(new Error('COPY abandoned'));
      else c.query('COMMIT').then(() => c.release(), (err: Error) => c.release(err));
    }
  };
  const take = async () => {
    const c = await mapped(pool.connect());
    if (!c.listeners('error').includes(ignore)) c.on('error', ignore);
    clients.push(c);
    return c;
  };
  let parts: Array<{ sql: string; params: unknown[] }>;
  try {
    const first = await take();
    await first.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await first.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
    parts = await partsOf({ query: async (sql, params) => (await first.query(sql, params as any[])).rows as any, exec: async (sql) => void (await first.query(sql)) });
    // only connections free now: a report never waits for another's to finish before it starts
    const free = Math.min(max - 1, parts.length - 1, pool.idleCount + (max - pool.totalCount));
    await Promise.all(
      Array.from({ length: Math.max(0, free) }, async () => {
        const c = await take();
        await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        await c.query(`SET TRANSACTION SNAPSHOT ${pg.escapeLiteral(rows[0].snapshot)}`);
      }),
    );
  } catch (err) {
    for (const c of clients) broken.add(c);
    releaseAll();
    throw unavailableOr(err);
  }

  const out = new PassThrough();
  // per part: bytes copied and not yet written out; `wake` resumes whoever waits on that part
  const held = parts.map(() => ({ chunks: [] as Buffer[], bytes: 0, done: false }));
  let writing = 0;
  let waiters: Array<() => void> = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    w.forEach((f) => f());
  };
  const changed = () => new Promise<void>((resolve) => waiters.push(resolve));
  const streams = new Map<Readable, pg.PoolClient>();
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    // a COPY cut off mid-way leaves its connection unusable: the pool discards it (releaseAll)
    for (const [stream, c] of streams) {
      broken.add(c);
      stream.destroy();
    }
    out.destroy(err);
    wake();
  };
  out.on('close', () => {
    if (!failed && writing < parts.length) fail(new Error('report abandoned'));
  });

  let next = 0;
  const copier = async (c: pg.PoolClient) => {
    while (!failed && next < parts.length) {
      const i = next++;
      // at most one part per connection ahead of the one being written
      while (!failed && i >= writing + clients.length) await changed();
      if (failed) return;
      const stream = c.query(copyTo(`COPY (${inlineParams(parts[i].sql, parts[i].params)}) TO STDOUT WITH (FORMAT csv)`));
      streams.set(stream, c);
      try {
        for await (const chunk of stream) {
          held[i].chunks.push(chunk as Buffer);
          held[i].bytes += (chunk as Buffer).length;
          wake();
          while (!failed && held[i].bytes > aheadBytes) await changed();
          if (failed) break;
        }
      } catch (err) {
        broken.add(c);
        fail(unavailableOr(err) as Error);
        return;
      } finally {
        streams.delete(stream);
      }
      held[i].done = true;
      wake();
    }
  };
  const writer = async () => {
    for (; writing < parts.length && !failed; ) {
      const h = held[writing];
      while (h.chunks.length) {
        const chunk = h.chunks.shift()!;
        h.bytes -= chunk.length;
        wake();
        if (!out.write(chunk)) await drainedOrClosed(out);
        if (failed) return;
      }
      if (h.done) {
        writing++;
        wake();
      } else await changed();
    }
    if (!failed) out.end();
  };
  void Promise.allSettled([writer(), ...clients.map(copier)]).then(releaseAll);
  return out;
}

function drainedOrClosed(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** Whether a directory holds a PostgreSQL data directory (PG_VERSION is its first file). */
const holdsCluster = (dir: string) => existsSync(join(dir, 'PG_VERSION'));

/**
 * Opens the data directory; a directory without a cluster is first filled from `template` when
 * given (a cluster the build made and migrated, scripts/pglite-template.mjs): copying it takes
 * a fraction of a second where PGlite's initdb takes several. Should the copy not open, it is
 * removed again and PGlite makes the cluster itself.
 */
async function openLite(dataDir: string, template?: string): Promise<PGlite> {
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

/**
 * Embedded Postgres in WASM. One process per data directory; `memory://` for throwaway stores.
 * `template`: see openLite.
 */
export async function pgliteDb(dataDir: string, opts: { template?: string } = {}): Promise<Db> {
  if (!dataDir.startsWith('memory://')) privateDir(dataDir);
  const lite = await openLite(dataDir, opts.template);
  const parse = { 20: (v: string) => Number(v) };
  // In process, no socket: what is noted is what PostgreSQL would take as a round trip
  // (lite.transaction's own BEGIN and COMMIT or ROLLBACK included), so counts match pgDb's.
  const seen = observers();
  const run = async (q: { query: PGlite['query'] }, sql: string, params?: unknown[]) => {
    seen.note(sql);
    return (await q.query(sql, params as any[], { parsers: parse })).rows;
  };
  /** lite.transaction, noting its BEGIN and its COMMIT or ROLLBACK. */
  const transaction = <T>(fn: (t: any) => Promise<T>): Promise<T> =>
    lite.transaction(async (t) => {
      seen.note('BEGIN');
      try {
        const result = await fn(t);
        seen.note('COMMIT');
        return result;
      } catch (err) {
        seen.note('ROLLBACK');
        throw err;
      }
    });
  const begin = async (): Promise<OpenTx> => {
    let settle!: { resolve(): void; reject(err: Error): void };
    let handed!: (t: { query: PGlite['query']; exec: PGlite['exec'] }) => void;
    const got = new Promise<{ query: PGlite['query']; exec: PGlite['exec'] }>((resolve) => (handed = resolve));
    const done = transaction((t) => {
      handed(t as any);
      return new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    });
    done.catch(() => {});
    const t = await Promise.race([got, done.then(() => Promise.reject(new Error('transaction ended before it began')))]);
    let closed = false;
    return {
      q: {
        query: (sql, params) => run(t, sql, params) as any,
        exec: async (sql) => {
          seen.note(sql);
          await t.exec(sql);
        },
      },
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
    query: (sql: string, params?: unknown[]) => run(lite, sql, params) as any,
    tx: <T>(fn: (q: Queryable) => Promise<T>): Promise<T> =>
      transaction((t) =>
        fn({
          query: (sql, params) => run(t as any, sql, params) as any,
          exec: async (sql) => {
            seen.note(sql);
            await t.exec(sql);
          },
        }),
      ),
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
  return db;
}

/** The cheapest statement: does the database answer? */
export async function ping(q: Queryable) {
  await q.query('SELECT 1');
}
