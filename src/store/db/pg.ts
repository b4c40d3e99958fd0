import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { PassThrough, type Readable } from 'node:stream';
import { multiHostClient, parseHosts } from './hosts.ts';
import { pipelined } from './pipeline.ts';
import { observeQuery } from '../../telemetry/query.ts';
import {
  ignore,
  isConflict,
  mapped,
  observers,
  scoped,
  statementName,
  unavailableOr,
  type Db,
  type OpenTx,
  type QueryOptions,
  type Queryable,
} from './db.ts';
import { DomainError } from '../../domain/errors.ts';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often a transaction stopped for another (isConflict) is tried in all. */
const TX_ATTEMPTS = 3;

// The PostgreSQL store (node-postgres): a pool for queries, one for CSV reports, LISTEN connections.

// bigint columns hold minor units that fit a JS safe integer; parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * A statement with its $n parameters written in as literals, for COPY, which takes none. A value
 * becomes a quoted literal of unknown type (pg's escapeLiteral), as a bind parameter is text of
 * unknown type, so the server infers the same types. Scalars only: our statements bind no arrays.
 */
function inlineParams(sql: string, params: unknown[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const v = params[Number(n) - 1];
    if (v === null || v === undefined) return 'NULL';
    if (v instanceof Date) return pg.escapeLiteral(v.toISOString());
    if (typeof v === 'object') throw new Error(`parameter $${n} is not a scalar`);
    return pg.escapeLiteral(String(v));
  });
}

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
  /** statement_timeout of its sessions (ms; 0 or unset: the server's); report connections get reportTimeoutMs */
  statementTimeoutMs?: number;
  reportTimeoutMs?: number;
  /** max_parallel_workers_per_gather of its sessions (unset: the server's) */
  parallelWorkers?: number;
}

export function pgDb({
  url,
  schema,
  max = 10,
  reportMax = 2,
  name = 'tender',
  listenUrl,
  prepared = true,
  readOnly = false,
  statementTimeoutMs = 0,
  reportTimeoutMs = 0,
  parallelWorkers,
}: PgOptions): Db {
  const seen = observers();
  const optionsWith = (timeoutMs: number) => {
    // explicit options replace libpq's PGOPTIONS in node-pg: keep the operator's (or a test's) first
    const settings = [
      process.env.PGOPTIONS ?? '',
      schema ? `-c search_path=${schema}` : '',
      readOnly ? '-c default_transaction_read_only=on' : '',
      timeoutMs > 0 ? `-c statement_timeout=${Math.round(timeoutMs)}` : '',
      parallelWorkers !== undefined ? `-c max_parallel_workers_per_gather=${parallelWorkers}` : '',
    ].filter(Boolean);
    return settings.length ? settings.join(' ') : undefined;
  };
  const options = optionsWith(statementTimeoutMs);
  // named for pg_stat_activity: tender / tender-report / tender-listen, with the schema when there is one
  const nameOf = (suffix: string) => (schema ? `${name}${suffix} ${schema}` : `${name}${suffix}`);
  // several hosts (target_session_attrs=read-write): each connection to the one that takes writes now
  const hosts = parseHosts(url);
  const Client = hosts ? multiHostClient(hosts) : pg.Client;
  const newPool = (size: number, suffix: string) => {
    const p = new pg.Pool({
      connectionString: url,
      max: size,
      options: suffix === '-report' ? optionsWith(reportTimeoutMs) : options,
      application_name: nameOf(suffix),
      Client,
    });
    p.on('error', () => {}); // an idle client's error must not kill the process; the pool drops it
    return p;
  };
  const pool = newPool(max, '');
  let reportPool: pg.Pool | undefined;
  const configOf = (sql: string, params?: unknown[], opts?: QueryOptions): pg.QueryConfig => {
    if (!prepared || !opts?.prepare) return { text: sql, values: params };
    return { name: opts.prepare === true ? statementName(sql) : opts.prepare, text: sql, values: params };
  };
  // the driver's edge: a row is what the statement selects, as its caller names it (T)
  const run = async <T>(c: pg.Pool | pg.PoolClient, sql: string, params?: unknown[], opts?: QueryOptions) => {
    seen.note(sql);
    return (await c.query(configOf(sql, params, opts))).rows as T[];
  };
  /**
   * A transaction on a client of its own. Its BEGIN is not sent alone: it goes with the first
   * statement, in the same round trip (store/db/pipeline.ts); a transaction that sent nothing ends
   * without a word. A statement with QueryOptions.commit takes the COMMIT with it.
   */
  const begin = async (): Promise<OpenTx> => {
    const client = await mapped(pool.connect());
    // A checked-out client's connection can drop between statements; without a listener its
    // 'error' event would end the process. Its next statement then fails, and the pool discards it.
    let lost: Error | undefined;
    const onError = (err: Error) => void (lost ??= err);
    client.on('error', onError);
    let begun = false;
    let closed = false;
    const release = (err?: unknown) => {
      closed = true;
      client.removeListener('error', onError);
      client.release(lost ?? (err as Error | undefined));
    };
    const end = async (sql: 'COMMIT' | 'ROLLBACK') => {
      if (closed) return;
      if (!begun) return release();
      let failed: unknown;
      try {
        seen.note(sql);
        await client.query(sql);
      } catch (err) {
        failed = err;
      } finally {
        release(failed);
      }
      if (failed && sql === 'COMMIT') throw unavailableOr(failed);
    };
    const query = async (sql: string, params?: unknown[], opts?: QueryOptions) => {
      if (closed) throw new Error('the transaction has ended: a statement after its COMMIT would run on its own');
      const first = !begun;
      begun = true;
      if (!first && !opts?.commit) return run(client, sql, params, opts);
      seen.note([first && 'BEGIN', sql, opts?.commit && 'COMMIT'].filter(Boolean).join('; '));
      // When it fails, nothing committed and the caller rolls back as usual (mapped makes a lost
      // connection the 503: with a COMMIT sent, it may or may not have committed).
      const rows = await pipelined(client, configOf(sql, params, opts), { begin: first, commit: Boolean(opts?.commit) });
      if (opts?.commit) release();
      return rows;
    };
    return {
      q: {
        query: <T>(sql: string, params?: unknown[], opts?: QueryOptions) =>
          observeQuery('postgres', sql, () => mapped(query(sql, params, opts)) as Promise<T[]>),
        exec: async (sql) => {
          if (closed) throw new Error('the transaction has ended');
          if (!begun) {
            // a script (simple protocol) cannot take BEGIN in the same round trip: it goes alone
            begun = true;
            seen.note('BEGIN');
            await mapped(client.query('BEGIN'));
          }
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
    query: <T>(sql: string, params?: unknown[], opts?: QueryOptions) =>
      observeQuery('postgres', sql, () => mapped(run<T>(pool, sql, params, opts))),
    // A transaction PostgreSQL stopped for another (a deadlock, a serialization failure) did
    // nothing: it runs again, a few times, after a short random pause that lets the other finish.
    // Only a top-level tx() is tried again (a savepoint is its caller's); its callback is database
    // work only (the money rule keeps acquirer calls out of transactions).
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const open = await begin();
        try {
          const result = await fn(open.q);
          await open.commit();
          return result;
        } catch (err) {
          await open.rollback();
          if (attempt >= TX_ATTEMPTS || !isConflict(err)) throw err;
          await sleep(5 + Math.random() * 20 * attempt);
        }
      }
    },
  };
  const db: Db = {
    kind: 'postgres',
    ...scoped(self, own),
    begin,
    pool: () => ({ inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    observe: seen.observe,
    async exec(sql) {
      seen.note(sql);
      await mapped(pool.query(sql));
    },
    async listen(channel, onNotify) {
      const at = listenUrl ?? url;
      const ListenClient = listenUrl ? (parseHosts(listenUrl) ? multiHostClient(parseHosts(listenUrl)!) : pg.Client) : Client;
      const listener = reconnectingListener(
        () => new ListenClient({ connectionString: at, options, application_name: nameOf('-listen') }),
        channel,
        onNotify,
      );
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
    async withCancel(signal, fn) {
      if (signal.aborted) throw new DomainError('ServiceUnavailable', 'the request was abandoned');
      const client = await mapped(pool.connect());
      const pid = (client as unknown as { processID: number }).processID;
      let cancelled = false;
      const onAbort = () => {
        cancelled = true;
        void pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(ignore);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        return await fn({
          query: (sql, params, opts) => mapped(run(client, sql, params, opts)) as never,
          exec: async (sql) => void (await mapped(client.query(sql))),
        });
      } finally {
        signal.removeEventListener('abort', onAbort);
        // a cancel may land after the statement ended: that connection is not handed to anyone else
        client.release(cancelled ? new Error('statement cancelled') : undefined);
      }
    },
    copyCsvParts(partsOf, aheadBytes = 4 * 1024 * 1024) {
      return copyParts((reportPool ??= newPool(reportMax, '-report')), reportMax, partsOf, aheadBytes);
    },
    async close() {
      await Promise.all([pool.end(), reportPool?.end()]);
    },
  };
  return db;
}

/** Db.copyCsvParts over a report pool of `max` connections. */
async function copyParts(
  pool: pg.Pool,
  max: number,
  partsOf: Parameters<NonNullable<Db['copyCsvParts']>>[0],
  aheadBytes: number,
): Promise<Readable> {
  const clients: pg.PoolClient[] = [];
  const broken = new Set<pg.PoolClient>();
  const releaseAll = () => {
    for (const c of clients.splice(0)) {
      if (broken.has(c)) c.release(new Error('COPY abandoned'));
      else
        c.query('COMMIT').then(
          () => c.release(),
          (err: Error) => c.release(err),
        );
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
    parts = await partsOf({
      query: async <T>(sql: string, params?: unknown[]) => (await first.query(sql, params)).rows as T[],
      exec: async (sql) => void (await first.query(sql)),
    });
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
    for (; writing < parts.length && !failed;) {
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
