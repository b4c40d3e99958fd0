import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { traceMixin } from '../../src/telemetry/tracing.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import { type Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { startService, type Service, type StartOptions } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import type pino from 'pino';
import { customerExample } from '../../src/domain/schemas/examples.ts';
import type { Json } from './json.ts';

/** A fresh, empty store of its own: a PostgreSQL schema when DATABASE_URL is set, else in-memory PGlite. */
export async function freshStore(
  pool: { size?: number; reportSize?: number; statementTimeoutMs?: number; reportTimeoutMs?: number } = {},
): Promise<{ db: Db; drop(): Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await pgliteDb('memory://');
    await migrate(db);
    return { db, drop: async () => db.close() };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  // behind PgBouncer (npm run test:cluster), which passes no search_path option: a database per file
  const viaBouncer = {
    prepared: process.env.DATABASE_PREPARED_STATEMENTS !== 'off',
    listenUrl: process.env.DATABASE_LISTEN_URL || undefined,
  };
  if (process.env.TEST_DATABASE_PER_FILE === '1') return databasePerFile(url, schema, pool, viaBouncer);
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const db = pgDb({
    url,
    schema,
    max: pool.size ?? 20,
    reportMax: pool.reportSize,
    statementTimeoutMs: pool.statementTimeoutMs,
    reportTimeoutMs: pool.reportTimeoutMs,
    ...viaBouncer,
  });
  await migrate(db);
  return {
    db,
    async drop() {
      await db.close();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}

/** A database of its own, on the server (or PgBouncer, whose `*` entry forwards any name) of url. */
async function databasePerFile(
  url: string,
  name: string,
  pool: { size?: number; reportSize?: number },
  opts: { prepared: boolean; listenUrl?: string },
) {
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await admin(`CREATE DATABASE ${name}`);
  const at = (u: string) => Object.assign(new URL(u), { pathname: `/${name}` }).toString();
  const db = pgDb({
    url: at(url),
    max: pool.size ?? 20,
    reportMax: pool.reportSize,
    prepared: opts.prepared,
    listenUrl: opts.listenUrl && at(opts.listenUrl),
  });
  await migrate(db);
  return {
    db,
    async drop() {
      await db.close();
      await admin(`DROP DATABASE ${name} WITH (FORCE)`);
    },
  };
}

export interface ApiResponse<T = Json> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface TestService {
  svc: Service;
  url: string;
  config: Config;
  db: Db;
  project: { merchant_id: string; project_id: string; api_key: string };
  /** Calls the API as a client would: Basic auth with the key (the project's unless given). */
  api<T = Json>(
    method: string,
    path: string,
    body?: unknown,
    opts?: { key?: string | null; headers?: Record<string, string>; raw?: string },
  ): Promise<ApiResponse<T>>;
  newProject(mode?: 'test' | 'live'): Promise<{ merchant_id: string; project_id: string; api_key: string }>;
  close(): Promise<void>;
}

export const basic = (key: string) => 'Basic ' + Buffer.from(`${key}:`).toString('base64');

export async function request<T = Json>(
  url: string,
  method: string,
  body?: unknown,
  headers: Record<string, string> = {},
  raw?: string,
): Promise<ApiResponse<T>> {
  const init: RequestInit = { method, headers: { ...headers }, redirect: 'manual' };
  if (raw !== undefined) {
    init.body = raw;
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  } else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: Json = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Starts the whole service on a random port with its own store and a test project. */
export async function startTestService(
  opts: {
    config?: Partial<Config>;
    env?: Record<string, string>;
    logStream?: pino.DestinationStream;
    pool?: { size?: number; reportSize?: number };
    /** handed to the service as they are: the live acquirer, the pages' wallet buttons */
    liveConnector?: StartOptions['liveConnector'];
    /** the acquirer of test projects instead of the simulator (a fault-injecting wrapper) */
    testConnector?: StartOptions['testConnector'];
    walletButtons?: StartOptions['walletButtons'];
    /** the store search, reports and the portal's lists read (DATABASE_REPLICA_URL's role), made from the test's own store */
    replica?: (db: Db) => Promise<Db>;
  } = {},
): Promise<TestService> {
  // the statement timeouts of the store as the service would open it, when a test sets them
  const store = await freshStore({
    ...opts.pool,
    ...(opts.env?.DATABASE_STATEMENT_TIMEOUT_MS ? { statementTimeoutMs: Number(opts.env.DATABASE_STATEMENT_TIMEOUT_MS) } : {}),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'tender-test-'));
  const config = loadConfig(
    // plain HTTP on loopback: live projects are let in (the TLS tests set LIVE_REQUIRES_TLS themselves)
    {
      TENDER_DATA_DIR: dataDir,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      TENDER_WORKER_POLL_MS: '200',
      LIVE_REQUIRES_TLS: 'false',
      ...opts.env,
    },
    { port: 0, masterKey: randomBytes(32).toString('hex'), ...opts.config },
  );
  const log = createLogger(opts.logStream ? 'info' : config.logLevel, opts.logStream, traceMixin);
  const replica = opts.replica ? await opts.replica(store.db) : undefined;
  const svc = await startService({
    config,
    db: store.db,
    replica,
    log,
    liveConnector: opts.liveConnector,
    testConnector: opts.testConnector,
    walletButtons: opts.walletButtons,
  });
  const project = await createProject(svc.ctx, { name: 'Test shop', mode: 'test' });
  const api: TestService['api'] = (method, path, body, o = {}) => {
    const key = o.key === undefined ? project.api_key : o.key;
    const headers: Record<string, string> = { ...(key !== null ? { authorization: basic(key) } : {}), ...o.headers };
    return request(`${svc.url}${path}`, method, body, headers, o.raw);
  };
  return {
    svc,
    url: svc.url,
    config,
    db: store.db,
    project,
    api,
    newProject: (mode = 'test') => createProject(svc.ctx, { name: `Shop ${mode}`, mode }),
    async close() {
      await svc.close();
      await store.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A valid order body that tests change one field of. */
export const validOrder = (over: Record<string, unknown> = {}) => ({
  merchant_order_id: 'shop-1001',
  description: 'Two mugs',
  currency: 'EUR',
  amount: 1995,
  return_url: 'https://shop.example/return',
  customer: { ...customerExample }, // the API reference's example customer
  ...over,
});

export const cardOrder = (over: Record<string, unknown> = {}, txn: Record<string, unknown> = {}) =>
  validOrder({ transactions: [{ payment_method: 'credit-card', ...txn }], ...over });
