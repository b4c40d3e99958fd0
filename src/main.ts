import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import { openStore } from './store/open.ts';
import type { Db } from './store/db.ts';
import { acquireLock, releaseLock } from './store/lock.ts';
import { buildApp } from './http/app.ts';
import { registerRoutes } from './http/routes.ts';
import { registerJobHandlers } from './jobs/handlers.ts';
import { startWorker } from './jobs/worker.ts';
import { loadMasterKey } from './services/master-key.ts';
import type { Ctx } from './services/context.ts';
import { KeyCache } from './services/key-cache.ts';
import { adminRoutes } from './http/admin.ts';
import { gracefulClose } from './http/shutdown.ts';
import { sealPendingHolderNames } from './services/holder-names.ts';

export interface Service {
  app: FastifyInstance;
  ctx: Ctx & { masterKey: Buffer };
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Config;
  db?: Db;
  log?: Logger;
}

/** config -> store -> surfaces -> workers. Listens, and fills in URLs when the port was 0. */
export async function startService(opts: StartOptions = {}): Promise<Service> {
  const config = opts.config ?? loadConfig();
  const log = opts.log ?? createLogger(config.logLevel);
  const embedded = !opts.db && !config.databaseUrl;
  const adminToken = randomBytes(24).toString('base64url');
  if (embedded) acquireLock(config.dataDir, { pid: process.pid, url: '', token: adminToken });
  let unlistenKeys = async () => {};
  try {
    const db = opts.db ?? (await openStore(config));
    const keyCache = new KeyCache(config.apiKeyCacheMs);
    unlistenKeys = await keyCache.listen(db);
    const ctx = { db, config, log, masterKey: loadMasterKey(config, log), keyCache };
    const sealed = await sealPendingHolderNames(ctx);
    if (sealed) log.info({ sealed }, 'sealed cardholder names stored before names were encrypted');
    registerRoutes();
    registerJobHandlers();
    const app = await buildApp(ctx);
    await app.register(adminRoutes(ctx, adminToken));
    const shutdown = gracefulClose(app.server, config.shutdownGraceMs);
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    if (new URL(config.publicBaseUrl).port === '0') {
      // the surfaces' URLs made before the port was known (PORT=0) get the real one
      const withPort = (url: string) => (new URL(url).port === '0' ? url.replace(/:0(?=\/|$)/, `:${port}`) : url);
      Object.assign(config, { publicBaseUrl: withPort(config.publicBaseUrl), vaultUrl: withPort(config.vaultUrl), walletBTokenUrl: withPort(config.walletBTokenUrl), portalUrl: withPort(config.portalUrl) });
    }
    if (embedded) acquireLock(config.dataDir, { pid: process.pid, url: config.publicBaseUrl, token: adminToken });
    const worker = config.worker.enabled ? startWorker(ctx) : undefined;
    let closed = false;
    return {
      app,
      ctx,
      url: config.publicBaseUrl,
      async close() {
        if (closed) return;
        closed = true;
        await shutdown(() => app.close()); // in-flight requests get SHUTDOWN_GRACE_MS to finish
        await worker?.stop();
        await unlistenKeys();
        if (!opts.db) await db.close();
        if (embedded) releaseLock(config.dataDir);
      },
    };
  } catch (err) {
    await unlistenKeys();
    if (embedded) releaseLock(config.dataDir);
    throw err;
  }
}
