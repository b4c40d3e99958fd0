import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { PGlite } from '@electric-sql/pglite';
import type { Readable } from 'node:stream';
import { privateDir } from './lock.ts';

/** The one query layer: plain parameterised SQL over `pg` or PGlite. */
export interface Queryable {
  query<T = Record<string, any>>(sql: string, params?: unknown[], opts?: QueryOptions): Promise<T[]>;
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
}

export interface QueryOptions {
  /**
   * Prepare the statement under this name once per connection (PostgreSQL), skipping parse and
   * plan on later runs. Only for hot statements whose text is fixed for the name. PGlite ignores it.
   */
  prepare?: string;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /** Runs fn in one database transaction; rolls back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
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
  close(): Promise<void>;
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

// bigint columns hold minor units that fit a JS safe integer; parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

export interface PgOptions {
  url: string;
  schema?: string;
  /** connections for queries */
  max?: number;
  /** connections for CSV reports (copyCsv), opened on the first report */
  reportMax?: number;
}

export function pgDb({ url, schema, max = 10, reportMax = 2 }: PgOptions): Db {
  const options = schema ? `-c search_path=${schema}` : undefined;
  // named for pg_stat_activity: tender / tender-report, with the schema when there is one
  const newPool = (size: number, name: string) => {
    const p = new pg.Pool({ connectionString: url, max: size, options, application_name: schema ? `${name} ${schema}` : name });
    p.on('error', () => {}); // an idle client's error must not kill the process
    return p;
  };
  const pool = newPool(max, 'tender');
  let reportPool: pg.Pool | undefined;
  const run = async (c: pg.Pool | pg.PoolClient, sql: string, params?: unknown[], opts?: QueryOptions) =>
    (opts?.prepare ? await c.query({ name: opts.prepare, text: sql, values: params as any[] }) : await c.query(sql, params as any[])).rows;
  return {
    kind: 'postgres',
    query: (sql, params, opts) => run(pool, sql, params, opts) as any,
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: (sql, params, opts) => run(client, sql, params, opts) as any,
          exec: async (sql) => void (await client.query(sql)),
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async listen(channel, onNotify) {
      const client = new pg.Client({ connectionString: url, options });
      client.on('error', () => {});
      await client.connect();
      client.on('notification', () => onNotify());
      await client.query(`LISTEN ${channel}`);
      return async () => {
        await client.end().catch(() => {});
      };
    },
    async copyCsv(select, params) {
      const client = await (reportPool ??= newPool(reportMax, 'tender-report')).connect();
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
    async close() {
      await Promise.all([pool.end(), reportPool?.end()]);
    },
  };
}

/** Embedded Postgres in WASM. One process per data directory; `memory://` for throwaway stores. */
export async function pgliteDb(dataDir: string): Promise<Db> {
  if (!dataDir.startsWith('memory://')) privateDir(dataDir);
  const lite = await PGlite.create(dataDir);
  const parse = { 20: (v: string) => Number(v) };
  const run = async (q: { query: PGlite['query'] }, sql: string, params?: unknown[]) =>
    (await q.query(sql, params as any[], { parsers: parse })).rows;
  return {
    kind: 'pglite',
    query: (sql, params) => run(lite, sql, params) as any,
    tx: (fn) =>
      lite.transaction((t) =>
        fn({ query: (sql, params) => run(t as any, sql, params) as any, exec: async (sql) => void (await t.exec(sql)) }),
      ),
    async exec(sql) {
      await lite.exec(sql);
    },
    async listen(channel, onNotify) {
      const stop = await lite.listen(channel, () => onNotify());
      return async () => stop();
    },
    close: () => lite.close(),
  };
}
