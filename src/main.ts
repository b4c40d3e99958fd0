import { binTable } from './services/risk/lists.ts';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import { openReplica, openStore } from './store/db/open.ts';
import type { Db } from './store/db/db.ts';
import { acquireLock, releaseLock } from './store/db/lock.ts';
import { createSimulator } from './acquirer/simulator/index.ts';
import { remoteConnector } from './acquirer/remote.ts';
import type { Connector } from './acquirer/connector.ts';
import type { ProjectRow } from './domain/entities.ts';
import type { Connectors, Ctx } from './services/platform/context.ts';
import { unauthenticated, type Authenticator } from './acquirer/authenticator.ts';
import { loadMasterKey } from './services/platform/master-key.ts';
import { KeyCache } from './services/platform/key-cache.ts';
import { dropSealedCvc } from './services/payments/card.ts';
import { countDeclines, countFailedAttempt } from './services/risk/screen.ts';
import { recoverAttempt, sweepDueRecoveries } from './services/payments/attempts/inquiry.ts';
import { RECOVERY_JOB } from './services/payments/attempts/rows.ts';
import { expirePaymentLink, followLinkOrders } from './services/links/payment-links.ts';
import { makeWebhookSecret, queueWebhooks } from './services/webhooks/endpoints.ts';
import { makeWalletKeys } from './services/wallets/keys.ts';
import { deliverOrderWebhooks, deliverWebhookJobs, deliveryLeaseMs } from './services/webhooks/delivery.ts';
import { expireOrder, expireTransaction } from './services/payments/expiry.ts';
import { expireAuthorization, runDelayedCapture } from './services/payments/captures.ts';
import { runSettlement } from './services/payments/chargebacks.ts';
import { runIdempotencyCleanup } from './services/platform/idempotency.ts';
import { settleDueJobs, startWorker, type JobTable } from './jobs/worker.ts';
import { buildApp } from './http/app.ts';
import type { Routes } from './http/registry.ts';
import { adminRoutes, type AdminCommand } from './http/admin.ts';
import { gracefulClose } from './http/shutdown.ts';
import { orderRoutes } from './http/api/orders.ts';
import { projectRoutes } from './http/api/projects.ts';
import { testRoutes } from './http/api/test-tools.ts';
import { webhookRoutes } from './http/api/webhooks.ts';
import { linkRoutes } from './http/api/links.ts';
import { paymentRoutes } from './http/api/payments.ts';
import { testCardRoutes } from './http/api/test-cards.ts';
import { operationRoutes, operationTestRoutes } from './http/api/operations.ts';
import { searchRoutes } from './http/api/search.ts';
import { balanceRoutes } from './http/api/balances.ts';
import { disputeRoutes } from './http/api/disputes.ts';
import { importDisputeDir } from './services/disputes/import.ts';
import { runMerchantPayouts } from './services/payouts/payouts.ts';
import { walletARoutes } from './http/api/wallet-a.ts';
import { walletBRoutes, walletBTestRoutes } from './http/api/wallet-b.ts';
import { linkPageRoutes } from './http/pay/link-page.ts';
import { payPages } from './http/pay/pages.ts';
import { methodPayRoutes } from './http/pay/methods/routes.ts';
import { methodRoutes, methodTestRoutes } from './http/api/methods.ts';
import { assetRoutes } from './http/pay/assets.ts';
import type { WalletButton } from './http/pay/render.ts';
import { threeDsRoutes } from './http/pay/three-ds.ts';
import { threeDsEmvRoutes } from './http/pay/three-ds-emv.ts';
import { threeDsMethodRoutes } from './http/pay/three-ds-method.ts';
import { walletPayRoutes } from './http/pay/wallet-pay.ts';
import { walletAButton, walletAPayRoutes } from './http/pay/wallet-a-pay.ts';
import { walletBButton, walletSheetRoutes } from './http/pay/wallet-sheet.ts';
import { vaultRoutes } from './http/vault/index.ts';
import { walletBTokenRoutes } from './http/wallet-b-token/index.ts';
import { portalRoutes } from './http/portal/index.ts';
import { sealPendingHolderNames } from './services/vault/holder-names.ts';
import type { LinkState } from './services/platform/health.ts';
import { collectGauges, countOrderStatus } from './services/reporting/metrics.ts';
import { paymentEventLog } from './services/reporting/payment-log.ts';
import { observed, observedAuthenticator } from './acquirer/observed.ts';
import { ThreeDsServers } from './acquirer/threeds/servers.ts';
import { RANGES_JOB, refreshProjectRanges } from './services/threeds/ranges.ts';
import { dropMethodCvc } from './services/threeds/method.ts';
import { startMetricsServer } from './telemetry/server.ts';
import { OPERATOR_PAGE_HEADERS, operatorPayoutsPage } from './http/operator/payouts.ts';
import { startTracing, stopTracing, traceMixin } from './telemetry/tracing.ts';
import { readableConsole, readableWanted } from './telemetry/console.ts';
import { IsoLinks, linkSettings } from './acquirer/iso8583/links.ts';
import { linkJournal } from './services/payments/acquirer-link.ts';

/**
 * The wiring of Tender, in one place (docs/architecture.md): what runs when an order's status
 * changes or a project is created, every kind of due work, and the routes of each surface.
 * No module registers itself by being imported.
 */

/** In this order, inside the database transaction of every order status change (after its outbox row). */
const orderStatusHooks = [queueWebhooks, followLinkOrders, dropSealedCvc, dropMethodCvc, countDeclines, countOrderStatus];

/** In this order, after a project is created; what they return is shown once (the webhook secret). */
const projectCreatedHooks = [makeWebhookSecret, makeWalletKeys];

/** Every kind of due work (the jobs table's `kind`) and what runs it. */
export const jobTable: JobTable = {
  expire_transaction: { run: (ctx, job) => expireTransaction(ctx, job.ref_id) },
  expire_order: { run: (ctx, job) => expireOrder(ctx, job.ref_id) },
  // side by side (each order keeps its own sequence), with a lease a bit longer than a round of attempts
  deliver_webhook: { run: deliverOrderWebhooks, runBatch: deliverWebhookJobs, concurrent: true, leaseMs: deliveryLeaseMs },
  expire_payment_link: { run: (ctx, job) => expirePaymentLink(ctx, job.ref_id) },
  // an acquirer attempt still in flight at its recover_at: asked about, or reversed (services/payments/attempts/inquiry.ts)
  [RECOVERY_JOB]: { run: (ctx, job) => recoverAttempt(ctx, job.ref_id), sweep: sweepDueRecoveries },
  delayed_capture: { run: (ctx, job) => runDelayedCapture(ctx, job.ref_id) },
  authorization_expiry: { run: (ctx, job) => expireAuthorization(ctx, job.ref_id) },
  settlement: {
    // the host's dispute stages of this project's payments first (each applied once), then its money
    run: async (ctx, job) => {
      if (ctx.config.settlementFileDir) await importDisputeDir(ctx, ctx.config.settlementFileDir, job.ref_id);
      await runSettlement(ctx, job.ref_id, new Date(job.run_at));
    },
  },
  idempotency_cleanup: { run: (ctx, job) => runIdempotencyCleanup(ctx, job.ref_id) },
  payouts: { run: (ctx, job) => runMerchantPayouts(ctx, job.ref_id).then(() => {}) },
  // the card ranges of a live project's directory servers, daily (services/threeds/ranges.ts)
  [RANGES_JOB]: { run: (ctx, job) => refreshProjectRanges(ctx, job.ref_id) },
};

/** The wallet buttons the hosted order pages offer. */
const walletButtons = [walletAButton, walletBButton];

/** The routes of each surface; app.ts mounts those of the surfaces this process serves. */
const routes = (buttons: WalletButton[]): Routes => ({
  authenticated: [
    orderRoutes,
    projectRoutes,
    webhookRoutes,
    linkRoutes,
    paymentRoutes,
    operationRoutes,
    searchRoutes,
    balanceRoutes,
    disputeRoutes,
    walletARoutes,
    walletBRoutes,
    methodRoutes,
  ],
  test: [testRoutes, testCardRoutes, operationTestRoutes, walletBTestRoutes, methodTestRoutes],
  public: [
    linkPageRoutes,
    payPages(buttons),
    methodPayRoutes,
    assetRoutes,
    threeDsRoutes,
    threeDsEmvRoutes,
    threeDsMethodRoutes,
    walletPayRoutes,
    walletAPayRoutes,
    walletSheetRoutes,
  ],
  vault: [vaultRoutes],
  'wallet-b-token': [walletBTokenRoutes],
  portal: [portalRoutes],
});

export interface ContextParts {
  db: Db;
  /** the streaming replica for search, reports and the portal's lists; db when absent */
  replica?: Db;
  config: Config;
  log: Logger;
  keyCache?: KeyCache;
  /** the acquirer of live projects (none is built in); test projects use the simulator */
  liveConnector?: Connectors['live'];
  /** links to acquirers /readyz reports on (a live connector's) */
  links?: LinkState[];
  /** the acquirer of test projects, when not the built-in simulator (tests: a fault-injecting wrapper) */
  testConnector?: Connector;
  /** the 3-D Secure server of test projects, when not the built-in simulator's ACS */
  testAuthenticator?: Authenticator;
  /** the 3-D Secure server of a live project (none bound: `unauthenticated`) */
  liveAuthenticator?: (project: ProjectRow) => Authenticator | undefined;
}

/** Every connector as built, timed and counted (acquirer/observed.ts); once per connector and mode. */
const observedConnectors = { test: new WeakMap<Connector, Connector>(), live: new WeakMap<Connector, Connector>() };
function observe(connector: Connector, log: Logger, mode: 'test' | 'live'): Connector {
  let o = observedConnectors[mode].get(connector);
  if (!o) {
    o = observed(connector, mode, (operation, outcome) =>
      log.warn({ connector: connector.name, mode, operation, outcome }, 'acquirer call failed'),
    );
    observedConnectors[mode].set(connector, o);
  }
  return o;
}

const observedAuthenticators = { test: new WeakMap<Authenticator, Authenticator>(), live: new WeakMap<Authenticator, Authenticator>() };
function observeAuth(a: Authenticator, log: Logger, mode: 'test' | 'live'): Authenticator {
  let o = observedAuthenticators[mode].get(a);
  if (!o) {
    o = observedAuthenticator(a, mode, (operation, outcome) =>
      log.warn({ authenticator: a.name, mode, operation, outcome }, '3-D Secure call failed'),
    );
    observedAuthenticators[mode].set(a, o);
  }
  return o;
}

/** The simulator of test projects, one per process: it remembers what it did per operation id. */
const simulatorFor = (config: Config) =>
  config.acquirer.testUrl
    ? remoteConnector(config.acquirer.testUrl, config.acquirer.timeoutMs)
    : createSimulator({ slowMs: config.acquirer.simSlowMs, settleMs: config.acquirer.simSettleMs });

/** The context every use case gets: for the running service and for one-off CLI commands alike. */
export function buildContext(parts: ContextParts): Ctx {
  // one simulator is the test projects' acquirer and ACS, unless a test hands in either
  const sim = parts.testConnector && parts.testAuthenticator ? undefined : simulatorFor(parts.config);
  const ctx: Ctx = {
    db: parts.db,
    replica: parts.replica ?? parts.db,
    config: parts.config,
    log: parts.log,
    masterKey: loadMasterKey(parts.config, parts.log),
    keyCache: parts.keyCache,
    connectors: {
      test: observe(parts.testConnector ?? sim!, parts.log, 'test'),
      live: parts.liveConnector && ((project) => ((c) => c && observe(c, parts.log, 'live'))(parts.liveConnector!(project))),
    },
    authenticators: {
      test: observeAuth(parts.testAuthenticator ?? sim!, parts.log, 'test'),
      live: (project) => observeAuth(parts.liveAuthenticator?.(project) ?? unauthenticated, parts.log, 'live'),
    },
    links: parts.links,
    dueWork: { settle: (projectId) => settleDueJobs(ctx, jobTable, projectId) },
    lifecycle: { stopping: false },
    hooks: {
      orderStatus: [...orderStatusHooks, paymentEventLog(parts.log)],
      attemptFailed: [countFailedAttempt],
      projectCreated: projectCreatedHooks,
    },
  };
  return ctx;
}

/** The ISO 8583 links' lines in the service's log. */
const isoLog =
  (log: Logger) =>
  (level: 'info' | 'warn', msg: string, fields: Record<string, unknown> = {}) =>
    log[level](fields, msg);

export interface Service {
  app: FastifyInstance;
  ctx: Ctx;
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  config?: Config;
  /**
   * What `npx tender ...` may run through this process while it holds the embedded store: the
   * CLI's command table, handed in by the CLI (cli/ is the entry point above main; main imports
   * nothing of it). None: the admin endpoint knows no command.
   */
  adminCommands?: Record<string, AdminCommand>;
  db?: Db;
  /** read by search, reports and the portal's lists (with db: tests); else DATABASE_REPLICA_URL's, else db */
  replica?: Db;
  log?: Logger;
  liveConnector?: Connectors['live'];
  /** the acquirer of test projects, when not the built-in simulator */
  testConnector?: Connector;
  /** the 3-D Secure server of test projects, when not the built-in simulator's ACS */
  testAuthenticator?: Authenticator;
  /** the 3-D Secure server of live projects (none: each without a directory server is unauthenticated) */
  liveAuthenticator?: (project: ProjectRow) => Authenticator | undefined;
  /** the hosted pages' wallet buttons, when not the built-in ones (tests of the page layout) */
  walletButtons?: WalletButton[];
  /** links to acquirers whose state /readyz reports (see LinkState) */
  links?: LinkState[];
}

/** config -> store -> context -> surfaces -> workers. Listens, and fills in URLs when the port was 0. */
export async function startService(opts: StartOptions = {}): Promise<Service> {
  const config = opts.config ?? loadConfig();
  // traces first: the request spans hook into Fastify as the app is built
  const tracing = startTracing();
  const log =
    opts.log ??
    createLogger(config.logLevel, readableWanted(config.logFormat, process.stdout.isTTY) ? readableConsole() : undefined, traceMixin);
  const embedded = !opts.db && !config.databaseUrl;
  const adminToken = randomBytes(24).toString('base64url');
  if (embedded) acquireLock(config.dataDir, { pid: process.pid, url: '', token: adminToken });
  let unlistenKeys = async () => {};
  let closeReplica = async () => {};
  let closeMetrics = async () => {};
  let closeLinks = async () => {};
  try {
    const db = opts.db ?? (await openStore(config));
    const replica = opts.replica ?? (opts.db ? undefined : openReplica(config));
    closeReplica = async () => {
      if (replica && !opts.replica) await replica.close();
    };
    const keyCache = new KeyCache(config.apiKeyCacheMs);
    unlistenKeys = await keyCache.listen(db);
    // /readyz's links: the caller's, and each ISO 8583 host's as its link opens (on first use)
    const links: LinkState[] = [...(opts.links ?? [])];
    // live projects bound to an ISO 8583 host (docs/acquirer-iso8583.md): one link per host
    const isoLinks = opts.liveConnector
      ? undefined
      : new IsoLinks(linkJournal(db), linkSettings(config.iso8583), isoLog(log), (link) => links.push(link));
    closeLinks = async () => isoLinks?.close();
    // live projects bound to directory servers (docs/three-d-secure.md): their EMV 3DS Server
    const threeDs = opts.liveConnector
      ? undefined
      : new ThreeDsServers({ timeoutMs: config.threeDs.timeoutMs, log: (msg, fields) => log.warn(fields ?? {}, msg) });
    const ctx = buildContext({
      db,
      replica,
      config,
      log,
      keyCache,
      liveConnector: opts.liveConnector ?? isoLinks?.connectorFor,
      testConnector: opts.testConnector,
      testAuthenticator: opts.testAuthenticator,
      liveAuthenticator: opts.liveAuthenticator ?? threeDs?.authenticatorFor,
      links,
    });
    // RISK_BIN_TABLE is read at start, as the ISO 8583 layout is: a bad line stops it, naming the line
    binTable(ctx);
    const sealed = await sealPendingHolderNames(ctx);
    if (sealed) log.info({ sealed }, 'sealed cardholder names stored before names were encrypted');
    const app = await buildApp(ctx, routes(opts.walletButtons ?? walletButtons));
    await app.register(adminRoutes(ctx, adminToken, opts.adminCommands ?? {}));
    const shutdown = gracefulClose(app.server, config.shutdownGraceMs);
    await app.listen({ port: config.port, host: config.host });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    if (new URL(config.publicBaseUrl).port === '0') {
      // the surfaces' URLs made before the port was known (PORT=0) get the real one
      const withPort = (url: string) => (new URL(url).port === '0' ? url.replace(/:0(?=\/|$)/, `:${port}`) : url);
      Object.assign(config, {
        publicBaseUrl: withPort(config.publicBaseUrl),
        vaultUrl: withPort(config.vaultUrl),
        walletBTokenUrl: withPort(config.walletBTokenUrl),
        portalUrl: withPort(config.portalUrl),
      });
    }
    if (embedded) acquireLock(config.dataDir, { pid: process.pid, url: config.publicBaseUrl, token: adminToken });
    if (config.metrics) {
      // the operator's read-only payouts page lives here too: this listener is the operator's, never the API's
      const pages = { '/payouts': { headers: OPERATOR_PAGE_HEADERS, render: () => operatorPayoutsPage(ctx) } };
      const metrics = await startMetricsServer(
        config.metrics.port,
        config.metrics.host,
        () => collectGauges(ctx, Object.keys(jobTable)),
        pages,
      );
      closeMetrics = metrics.close;
      log.info({ url: metrics.url }, 'Prometheus metrics');
    }
    if (tracing) log.info('OpenTelemetry traces exported over OTLP/HTTP');
    const worker = config.worker.enabled ? startWorker(ctx, jobTable) : undefined;
    let closed = false;
    return {
      app,
      ctx,
      url: config.publicBaseUrl,
      async close() {
        if (closed) return;
        closed = true;
        // /readyz turns red at once; requests keep being served while load balancers notice (SHUTDOWN_DRAIN_MS)
        ctx.lifecycle.stopping = true;
        if (config.shutdownDrainMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDrainMs));
        await shutdown(() => app.close()); // in-flight requests get SHUTDOWN_GRACE_MS to finish
        await worker?.stop();
        await closeLinks();
        await unlistenKeys();
        await closeReplica();
        if (!opts.db) await db.close();
        if (embedded) releaseLock(config.dataDir);
        await closeMetrics();
        await stopTracing();
        log.info('Tender stopped');
      },
    };
  } catch (err) {
    await closeMetrics();
    await closeLinks();
    await unlistenKeys();
    await closeReplica();
    if (embedded) releaseLock(config.dataDir);
    throw err;
  }
}
