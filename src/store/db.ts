import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { mkdirSync } from 'node:fs';

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
  close(): Promise<void>;
}

// bigint columns hold minor units that fit a JS safe integer; parse them as numbers.
pg.types.setTypeParser(20, (v) => Number(v));

export interface PgOptions {
  url: string;
  schema?: string;
  max?: number;
}

export function pgDb({ url, schema, max = 10 }: PgOptions): Db {
  const options = schema ? `-c search_path=${schema}` : undefined;
  const pool = new pg.Pool({ connectionString: url, max, options });
  pool.on('error', () => {}); // an idle client's error must not kill the process
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
    close: () => pool.end(),
  };
}

/** Embedded Postgres in WASM. One process per data directory; `memory://` for throwaway stores. */
export async function pgliteDb(dataDir: string): Promise<Db> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
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
