import type { Authenticator } from '../../src/acquirer/authenticator.ts';
import type { Connector } from '../../src/acquirer/connector.ts';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { traceMixin } from '../../src/telemetry/tracing.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { dumpLite, pgliteDb } from '../../src/store/db/lite.ts';
import { type Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { startService, type Service, type StartOptions } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { CORE_METHODS } from '../../src/domain/payment-methods.ts';
import type pino from 'pino';
import { customerExample } from '../../src/domain/schemas/examples.ts';
import type { Json } from './json.ts';

/**
 * The settings of a test whose webhooks go to receivers on this machine: test projects' webhooks
 * reach loopback by default only on the embedded store (docs/webhooks.md "Private addresses").
 */
export const LOCAL_RECEIVERS = { WEBHOOK_PRIVATE_ADDRESSES: 'allow' } as const;

/** A fresh, empty store of its own: a PostgreSQL schema when DATABASE_URL is set, else in-memory PGlite. */
export async function freshStore(
  pool: { size?: number; reportSize?: number; statementTimeoutMs?: number; reportTimeoutMs?: number } = {},
): Promise<{ db: Db; drop(): Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await migratedLite();
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

const MIGRATIONS = fileURLToPath(new URL('../../src/store/migrations/', import.meta.url));

/**
 * Where the migrated, empty PGlite cluster of these migrations is kept between test files: named
 * by a hash of every migration's name and text and of PGlite's version, so a changed migration
 * makes a new one.
 */
function templatePath(): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(fileURLToPath(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url))));
  for (const name of readdirSync(MIGRATIONS).sort()) hash.update(name).update(readFileSync(join(MIGRATIONS, name)));
  return join(tmpdir(), `tender-test-pglite-${hash.digest('hex').slice(0, 16)}.tar`);
}

let template: Promise<Blob | undefined> | undefined;
const readTemplate = async (path: string) => {
  try {
    return new Blob([readFileSync(path)]);
  } catch {
    return undefined; // not made yet: the first store of this run makes it
  }
};

/**
 * A fresh in-memory PGlite with every migration applied. PGlite's initdb and the migrations cost
 * about 3 CPU seconds a store, paid by every test file (often more than once); loading the cluster
 * a first store left (a tarball in the temporary directory) costs under one. migrate() still runs
 * after the load and finds nothing to do; should the tarball not open, the store is made afresh.
 */
async function migratedLite(): Promise<Db> {
  const path = templatePath();
  const dump = await (template ??= readTemplate(path));
  if (dump) {
    const db = await pgliteDb('memory://', { loadDataDir: dump }).catch(() => undefined);
    if (db) {
      await migrate(db);
      return db;
    }
  }
  const db = await pgliteDb('memory://');
  await migrate(db);
  // kept before the test writes anything; written under another name first, so no file reads half of it
  const made = await dumpLite(db);
  const part = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(part, Buffer.from(await made.arrayBuffer()));
  renameSync(part, path);
  template = Promise.resolve(made);
  return db;
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

/** A test connector that answers 3-D Secure too (the simulator, a wrapper of it) is the test projects' authenticator. */
const authenticatorIn = (c: Connector | undefined): Authenticator | undefined =>
  c && typeof (c as Partial<Authenticator>).authenticate3ds === 'function' ? (c as Connector & Authenticator) : undefined;

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
    /**
     * the 3-D Secure server of test projects; default: the test connector when it answers 3-D
     * Secure too (the simulator and wrappers of it), else the built-in simulator
     */
    testAuthenticator?: StartOptions['testAuthenticator'];
    /** the 3-D Secure server of live projects; default: the live connector when it answers 3-D Secure too */
    liveAuthenticator?: StartOptions['liveAuthenticator'];
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
      // one test card paid over and over from one address: the velocity limits' own tests turn them on
      RISK_LIMITS: 'off',
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
    testAuthenticator: opts.testAuthenticator ?? authenticatorIn(opts.testConnector),
    liveAuthenticator: opts.liveAuthenticator ?? (opts.liveConnector && ((p) => authenticatorIn(opts.liveConnector!(p)))),
    walletButtons: opts.walletButtons,
  });
  // A test project starts with every method on; the tests' projects offer the card and the wallets,
  // as the hosted-page and API tests expect (the card form at once), unless a test turns more on.
  const narrowed = async (made: Awaited<ReturnType<typeof createProject>>) => {
    await setActiveMethods(svc.ctx, made.project_id, [...CORE_METHODS]);
    return made;
  };
  const project = await narrowed(await createProject(svc.ctx, { name: 'Test shop', mode: 'test' }));
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
    newProject: async (mode = 'test') => narrowed(await createProject(svc.ctx, { name: `Shop ${mode}`, mode })),
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
