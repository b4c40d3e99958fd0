import { join, resolve } from 'node:path';
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseMethodAliases, type MethodAliases } from './domain/project.ts';
import { DEFAULT_MAX_QUERY_COST } from './domain/query.ts';
import { LIMITS, RISK_SETTINGS, type RiskLimits } from './domain/risk/limits.ts';
import { normalIban, validBic } from './domain/payouts/sepa.ts';

/** Every setting, from the environment, with a default that runs on a laptop. */
export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  vaultUrl: string;
  walletBTokenUrl: string;
  portalUrl: string;
  databaseUrl?: string;
  /**
   * A streaming replica that search, CSV reports and the portal's lists read from (unset: the
   * primary). Writes, and reads that must see the request's own writes, never go there.
   */
  databaseReplicaUrl?: string;
  /** LISTEN/NOTIFY on this URL instead (a direct connection when DATABASE_URL goes through PgBouncer) */
  databaseListenUrl?: string;
  /** named prepared statements for hot queries; off behind PgBouncer in transaction pooling mode */
  databasePreparedStatements: boolean;
  /** PostgreSQL connections per process: for the API, hosted pages and workers; and, apart, for CSV reports */
  databasePool: { size: number; reportSize: number };
  dataDir: string;
  masterKey?: string;
  /** TENDER_RISK_KEY: the platform key of card fingerprints and velocity buckets (docs/risk.md) */
  riskKey?: string;
  /** RISK_BIN_TABLE: a file of `prefix,country` lines, beside the test cards' BINs (docs/risk.md "The BIN table") */
  riskBinTable?: string;
  logLevel: string;
  /** LOG_FORMAT: json lines, or pretty (one readable line per request); unset: pretty on a terminal */
  logFormat?: 'json' | 'pretty';
  /** Prometheus metrics at /metrics on a port of their own (METRICS_PORT; unset: off), on 127.0.0.1 unless METRICS_HOST */
  metrics?: { port: number; host: string };
  /** Which surfaces this process serves: api (with /pay), vault, wallet-b-token, portal. */
  surfaces: Surface[];
  /** leaseMs: how long a claimed job stays reserved (a killed node's jobs are taken over after it) */
  worker: { enabled: boolean; pollMs: number; concurrency: number; leaseMs: number };
  webhook: {
    timeoutMs: number;
    retryIntervalMs: number;
    maxAttempts: number;
    concurrency: number;
    /** test projects' webhooks to private and loopback addresses (unset: allowed on the embedded store only; live projects never) */
    privateAddresses?: 'allow' | 'refuse';
  };
  setupTokenTtlSeconds: number;
  /** other identifiers clients use for Tender's payment methods (PAYMENT_METHOD_ALIASES) */
  paymentMethodAliases: MethodAliases;
  captureWindow: string;
  defaultExpiration: string;
  lateDeclineMs: number;
  /** the acquirer over a network (docs/money.md "Acquirer attempts") */
  acquirer: {
    /** a call without an answer by then is an unknown outcome: the attempt stays processing */
    timeoutMs: number;
    /** how long after a call the recovery job asks the acquirer about an attempt still processing */
    recoveryMs: number;
    /** the simulator's slow test card answers after this long */
    simSlowMs: number;
    /** the simulator's processing captures and refunds settle after this long */
    simSettleMs: number;
    /** test projects' acquirer at this loopback URL instead of the in-process simulator (the chaos test) */
    testUrl?: string;
  };
  /**
   * The ISO 8583 link of live projects (docs/acquirer-iso8583.md): ms without an answer before
   * its outcome is unknown (below acquirer.timeoutMs, so the link gives up first), ms of silence
   * before an echo, and a JSON file of field layout overrides (a processor's variant).
   */
  iso8583: { timeoutMs: number; echoMs: number; layoutFile?: string };
  /** EMV 3-D Secure of live projects (docs/three-d-secure.md) */
  threeDs: {
    /** a DS exchange without an answer by then is U (THREEDS_TIMEOUT_MS, at most the acquirer's timeout less 500 ms) */
    timeoutMs: number;
    /** THREEDS_ALLOW_HTTP=true: a directory server may be plain http:// (tests only) */
    allowHttp: boolean;
  };
  /** API requests per project (API key) per minute, on the API and the vault; 0: off */
  rateLimitPerMinute: number;
  /** requests per minute per client address and per resource on the anonymous surfaces, and failed authentications per address; 0: off */
  publicRateLimitPerMinute: number;
  /** card-testing protection on the hosted pages: declines per client or payment link within the window (0 declines: off) */
  cardTesting: { maxDeclines: number; windowSeconds: number };
  /** velocity limits on card payments (docs/risk.md), each 0: off */
  risk: RiskLimits;
  /** how long an API key's project stays cached (ms; 0: no cache); changes clear it at once */
  apiKeyCacheMs: number;
  /** how long a stopping server lets requests in flight finish before cutting them (ms) */
  shutdownGraceMs: number;
  /** how long a stopping server keeps serving with /readyz red before it closes, for load balancers to notice (ms) */
  shutdownDrainMs: number;
  redisUrl?: string;
  /** where the worker writes payout files, and the operator's account they pay from (docs/payouts.md) */
  payouts: { dir: string; debtor?: { name: string; iban: string; bic?: string } };
  /** where the acquiring host's settlement files arrive: the settlement job imports their dispute stages (docs/payouts.md "Disputes") */
  settlementFileDir?: string;
  /** the merchant portal's sessions and sign-in throttling (docs/portal.md) */
  portal: {
    sessionIdleMs: number;
    sessionMaxMs: number;
    maxFailures: number;
    addressMaxFailures: number;
    /** the first lock of a scope; each further one doubles, up to maxLockSeconds */
    lockSeconds: number;
    maxLockSeconds: number;
  };
  /** fair shares between merchants and bounds on work (docs/security.md "Fair shares") */
  limits: {
    /** searches of one project at a time per node (0: no limit) */
    searchesPerProject: number;
    /** how long a search waits for its project's slot (or search time) before 429 (ms) */
    searchWaitMs: number;
    /** search time a project earns per second on a node (ms; 0: no budget); a burst of up to 10 s of it */
    searchMsPerSecond: number;
    /** refusals by a limit (429, a search too costly) of one project or address in a second before its requests are slowed (0: never) */
    refusalsPerSecond: number;
    /** how long each request of a project or address over refusalsPerSecond waits before it is handled (ms) */
    refusalDelayMs: number;
    /** CSV reports of one project at a time per node (0: no limit) */
    reportsPerProject: number;
    /** the most a search query may cost (domain/query.ts queryCost) */
    maxQueryCost: number;
    /** PostgreSQL statement_timeout of every statement but migrations (ms; 0: none) */
    statementTimeoutMs: number;
    /** max_parallel_workers_per_gather of Tender's sessions: one merchant's query may not take every core (undefined: the server's) */
    parallelWorkers?: number;
    /** a CSV download whose client reads nothing for this long is cut off (ms) */
    reportReadTimeoutMs: number;
    /** a CSV download still running after this long is cut off (ms) */
    reportMaxMs: number;
    /** webhook deliveries of one project in flight at a time per node (default: half of WEBHOOK_CONCURRENCY) */
    webhooksPerProject: number;
    /** consecutive failures of an endpoint that open its circuit breaker (0: no breaker) */
    breakerFailures: number;
    /** how long an open breaker holds an endpoint's deliveries back (ms) */
    breakerOpenMs: number;
  };
  /** native HTTPS: PEM certificate chain and private key files, both or neither */
  tls?: { certFile: string; keyFile: string };
  /** Fastify's trustProxy: behind a TLS terminator, X-Forwarded-Proto/-For are believed from these hops */
  trustProxy: boolean | number | string;
  /** live projects answer only requests that reached Tender over TLS (directly or per X-Forwarded-Proto) */
  liveRequiresTls: boolean;
  walletBRootKeysFile?: string;
  walletBTestRootKeysFile?: string;
  walletA: {
    /** replaces the provider's default validation hosts when non-empty */
    validationHosts: string[];
    timeoutMs: number;
    caFile?: string;
    identityCertFile?: string;
    identityKeyFile?: string;
    /** root CA certificates (PEM) payment tokens must chain to: the provider's; test projects also trust testRootCaFile */
    rootCaFile?: string;
    testRootCaFile?: string;
  };
}

export type Surface = 'api' | 'vault' | 'wallet-b-token' | 'portal';
const ALL_SURFACES: Surface[] = ['api', 'vault', 'wallet-b-token', 'portal'];

/**
 * Every environment setting and what it accepts, checked when the process starts: a bad value
 * stops it with a message naming each setting (an unchecked `WEBHOOK_MAX_ATTEMPTS=abc` became NaN
 * and a failing delivery then retried forever). Unset or empty means the default.
 */
const setting = (pattern: string, accepts: string) => Type.Optional(Type.String({ pattern: `^(?:${pattern})?$`, description: accepts }));
const COUNT = setting('[0-9]+', 'a whole number, 0 or more');
const POSITIVE = setting('0*[1-9][0-9]*', 'a whole number, 1 or more');
const PORT = setting('[0-9]{1,5}', 'a port number, 0 to 65535');
const URL_SETTING = setting('https?://\\S+', 'an http:// or https:// URL');
const DURATION = setting('P\\S+', 'an ISO 8601 duration such as PT30M or P5D');
const SURFACE_NAMES = 'api|vault|wallet-b-token|portal';
const SettingsSchema = Type.Object({
  PORT,
  HOST: setting('\\S+', 'a host name or address'),
  PUBLIC_BASE_URL: URL_SETTING,
  VAULT_URL: URL_SETTING,
  WALLET_B_TOKEN_URL: URL_SETTING,
  PORTAL_URL: URL_SETTING,
  DATABASE_URL: setting('postgres(?:ql)?://\\S+', 'a postgres:// connection URL'),
  DATABASE_POOL_SIZE: POSITIVE,
  DATABASE_REPLICA_URL: setting('postgres(?:ql)?://\\S+', 'a postgres:// connection URL'),
  DATABASE_LISTEN_URL: setting('postgres(?:ql)?://\\S+', 'a postgres:// connection URL'),
  DATABASE_PREPARED_STATEMENTS: setting('on|off', 'on or off'),
  REPORT_CONNECTIONS: POSITIVE,
  LOG_LEVEL: setting('fatal|error|warn|info|debug|trace|silent', 'one of fatal, error, warn, info, debug, trace, silent'),
  LOG_FORMAT: setting('json|pretty', 'json or pretty'),
  METRICS_PORT: PORT,
  METRICS_HOST: setting('\\S+', 'a host name or address'),
  TENDER_SURFACES: setting(
    `\\s*(?:${SURFACE_NAMES})\\s*(?:,\\s*(?:${SURFACE_NAMES})\\s*)*`,
    'a comma-separated list of api, vault, wallet-b-token, portal',
  ),
  TENDER_WORKER: setting('on|off', 'on or off'),
  TENDER_WORKER_POLL_MS: POSITIVE,
  TENDER_WORKER_CONCURRENCY: POSITIVE,
  TENDER_JOB_LEASE_MS: POSITIVE,
  WEBHOOK_TIMEOUT_MS: POSITIVE,
  WEBHOOK_RETRY_INTERVAL_MS: COUNT,
  WEBHOOK_MAX_ATTEMPTS: POSITIVE,
  WEBHOOK_CONCURRENCY: POSITIVE,
  WEBHOOK_PRIVATE_ADDRESSES: setting('allow|refuse', 'allow or refuse'),
  SETUP_TOKEN_TTL_SECONDS: POSITIVE,
  CAPTURE_WINDOW: DURATION,
  DEFAULT_EXPIRATION_PERIOD: DURATION,
  LATE_DECLINE_MS: COUNT,
  ACQUIRER_TIMEOUT_MS: POSITIVE,
  ACQUIRER_RECOVERY_MS: POSITIVE,
  SIM_SLOW_MS: COUNT,
  SIM_SETTLE_MS: COUNT,
  ISO8583_TIMEOUT_MS: POSITIVE,
  ISO8583_ECHO_MS: POSITIVE,
  ISO8583_LAYOUT: setting('\\S+', 'a JSON file of ISO 8583 field layout overrides'),
  TENDER_TEST_ACQUIRER_URL: setting('http://(?:127\\.0\\.0\\.1|localhost|\\[::1\\]):[0-9]+/?\\S*', 'a loopback http:// URL'),
  RATE_LIMIT_PER_MINUTE: COUNT,
  PUBLIC_RATE_LIMIT_PER_MINUTE: COUNT,
  CARD_TESTING_MAX_DECLINES: COUNT,
  CARD_TESTING_WINDOW_SECONDS: POSITIVE,
  RISK_LIMITS: setting('on|off', 'on or off'),
  RISK_BIN_TABLE: setting('\\S.*', 'a file of prefix,country lines'),
  ...Object.fromEntries([...LIMITS, ...RISK_SETTINGS].map((l) => [l.env, COUNT])),
  API_KEY_CACHE_MS: COUNT,
  SHUTDOWN_GRACE_MS: COUNT,
  SHUTDOWN_DRAIN_MS: COUNT,
  REDIS_URL: setting('rediss?://\\S+', 'a redis:// or rediss:// URL'),
  WALLET_A_TIMEOUT_MS: POSITIVE,
  PAYOUT_DIR: setting('\\S.*', 'a directory'),
  ACQUIRER_SETTLEMENT_DIR: setting('\\S.*', 'a directory'),
  PAYOUT_DEBTOR_NAME: setting('\\S.{0,69}', 'the name of the account payouts are paid from, at most 70 characters'),
  PAYOUT_DEBTOR_IBAN: setting('[A-Za-z]{2}[0-9]{2}[A-Za-z0-9 ]{1,40}', 'an IBAN'),
  PAYOUT_DEBTOR_BIC: setting('[A-Z0-9]{8}(?:[A-Z0-9]{3})?', 'a BIC of 8 or 11 characters'),
  PORTAL_SESSION_IDLE_MINUTES: POSITIVE,
  PORTAL_SESSION_MAX_HOURS: POSITIVE,
  PORTAL_SIGNIN_MAX_FAILURES: POSITIVE,
  PORTAL_SIGNIN_MAX_FAILURES_PER_ADDRESS: POSITIVE,
  PORTAL_SIGNIN_LOCK_SECONDS: POSITIVE,
  PORTAL_SIGNIN_MAX_LOCK_SECONDS: POSITIVE,
  SEARCH_CONCURRENCY_PER_PROJECT: COUNT,
  SEARCH_WAIT_MS: COUNT,
  DATABASE_PARALLEL_WORKERS: setting('[0-9]+|server', "a whole number, 0 or more, or server (the server's setting)"),
  SEARCH_TIME_PER_SECOND_MS: COUNT,
  REFUSALS_PER_SECOND: COUNT,
  REFUSAL_DELAY_MS: COUNT,
  REPORT_CONCURRENCY_PER_PROJECT: COUNT,
  SEARCH_MAX_QUERY_COST: POSITIVE,
  DATABASE_STATEMENT_TIMEOUT_MS: COUNT,
  REPORT_READ_TIMEOUT_MS: POSITIVE,
  REPORT_MAX_SECONDS: POSITIVE,
  WEBHOOK_CONCURRENCY_PER_PROJECT: POSITIVE,
  WEBHOOK_BREAKER_FAILURES: COUNT,
  WEBHOOK_BREAKER_SECONDS: POSITIVE,
  TLS_CERT_FILE: setting('\\S+', 'a PEM certificate chain file'),
  TLS_KEY_FILE: setting('\\S+', 'a PEM private key file'),
  TRUST_PROXY: setting(
    'true|false|TRUE|FALSE|True|False|[0-9]+|[0-9a-fA-F:./]+(?:\\s*,\\s*[0-9a-fA-F:./]+)*',
    'true, false, a hop count or proxy addresses',
  ),
  LIVE_REQUIRES_TLS: setting('true|false|1|0|TRUE|FALSE|True|False', 'true or false'),
});

/** A setting the process cannot start with; the message names each one and what it accepts. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid settings:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Each bad setting once, as `NAME="value": expected what it accepts`. */
export function checkSettings(env: NodeJS.ProcessEnv): string[] {
  const props = SettingsSchema.properties as Record<string, TSchema>;
  const given = Object.fromEntries(
    Object.keys(props)
      .filter((k) => env[k] !== undefined)
      .map((k) => [k, env[k]]),
  );
  const bad = new Set<string>();
  for (const e of Value.Errors(SettingsSchema, given)) bad.add(e.path.replace(/^\//, ''));
  return [...bad].map((k) => `${k}=${JSON.stringify(given[k])}: expected ${props[k].description}`);
}

const int = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number.parseInt(v, 10));
/** A whole-number setting within [min, max]; anything else is an error naming the setting. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, d: number, min: number, max: number): number {
  const v = env[name];
  if (v === undefined || v === '') return d;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${v}"`);
  return n;
}
/** RISK_* settings (domain/risk/limits.ts lists them with their defaults). */
function riskLimits(env: NodeJS.ProcessEnv): RiskLimits {
  const n = (l: { env: string; default: number }, min = 0) => wholeNumber(env, l.env, l.default, min, 1e9);
  const other = Object.fromEntries(RISK_SETTINGS.map((s) => [s.env, n(s, s.min)]));
  return {
    enforce: env.RISK_LIMITS !== 'off',
    max: Object.fromEntries(LIMITS.map((l) => [l.rule, n(l)])),
    windowSeconds: other.RISK_WINDOW_SECONDS!,
    projectRateFloor: other.RISK_PROJECT_RATE_FLOOR!,
    projectMinDeclines: other.RISK_PROJECT_MIN_DECLINES!,
    refusalFloorMs: other.RISK_REFUSAL_FLOOR_MS!,
    dryRunTimeoutMs: other.RISK_DRY_RUN_TIMEOUT_MS!,
    dryRunMax: other.RISK_DRY_RUN_MAX_PAYMENTS!,
    hold: {
      sliceSeconds: other.RISK_HOLD_SLICE_SECONDS!,
      slices: other.RISK_HOLD_SLICES!,
      minAuthorizations: other.RISK_HOLD_MIN_AUTHORIZATIONS!,
      minPercent: other.RISK_HOLD_MIN_PERCENT!,
      factor: other.RISK_HOLD_FACTOR!,
      baselineMinutes: other.RISK_HOLD_BASELINE_MINUTES!,
    },
  };
}
const trim = (u: string) => u.replace(/\/+$/, '');

function bool(env: NodeJS.ProcessEnv, name: string, d: boolean): boolean {
  const v = env[name]?.trim().toLowerCase();
  if (v === undefined || v === '') return d;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new Error(`${name} must be true or false, not ${JSON.stringify(env[name])}`);
}

/** TLS_CERT_FILE and TLS_KEY_FILE: both or neither. */
function tlsFiles(env: NodeJS.ProcessEnv): Config['tls'] {
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile)
    throw new Error(`${certFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} must be set with ${certFile ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'}`);
  return { certFile: resolve(certFile), keyFile: resolve(keyFile) };
}

/** TRUST_PROXY: true/false, a hop count, or comma-separated addresses/CIDR ranges of the proxies. */
function trustProxy(env: NodeJS.ProcessEnv): Config['trustProxy'] {
  const v = env.TRUST_PROXY?.trim();
  if (!v || /^(false|0)$/i.test(v)) return false;
  if (/^true$/i.test(v)) return true;
  if (/^[1-9][0-9]?$/.test(v)) return Number(v);
  if (/^[0-9a-fA-F:./]+(\s*,\s*[0-9a-fA-F:./]+)*$/.test(v)) return v;
  throw new Error(`TRUST_PROXY must be true, false, a hop count or proxy addresses, not ${JSON.stringify(v)}`);
}

/** The settings of this process; throws ConfigError when one is not what it accepts. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const problems = checkSettings(env);
  if (problems.length) throw new ConfigError(problems);
  const acquirerTimeoutMs = int(env.ACQUIRER_TIMEOUT_MS, 30_000);
  // the link must give up (an unknown outcome) before Tender stops waiting for it: unset, it
  // follows a shorter ACQUIRER_TIMEOUT_MS down; set, it must be below it
  const isoTimeoutMs = int(env.ISO8583_TIMEOUT_MS, Math.max(1, Math.min(20_000, Math.floor((acquirerTimeoutMs * 2) / 3))));
  if (isoTimeoutMs >= acquirerTimeoutMs)
    throw new ConfigError([`ISO8583_TIMEOUT_MS=${isoTimeoutMs}: expected less than ACQUIRER_TIMEOUT_MS (${acquirerTimeoutMs})`]);
  // recovery asks about an attempt only after its call can no longer arrive (sendFirstCall):
  // unset, it follows a longer ACQUIRER_TIMEOUT_MS up; set, it must be above it
  const recoveryMs = int(env.ACQUIRER_RECOVERY_MS, Math.max(35_000, acquirerTimeoutMs + 5000));
  if (recoveryMs <= acquirerTimeoutMs)
    throw new ConfigError([`ACQUIRER_RECOVERY_MS=${recoveryMs}: expected more than ACQUIRER_TIMEOUT_MS (${acquirerTimeoutMs})`]);
  const port = overrides.port ?? int(env.PORT, 8080);
  const host = env.HOST ?? '127.0.0.1';
  const tls = tlsFiles(env);
  const base = trim(
    overrides.publicBaseUrl ?? env.PUBLIC_BASE_URL ?? `${tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
  );
  const surfaces = env.TENDER_SURFACES
    ? ALL_SURFACES.filter((s) =>
        env
          .TENDER_SURFACES!.split(',')
          .map((n) => n.trim())
          .includes(s),
      )
    : ALL_SURFACES;
  const cfg: Config = {
    port,
    host,
    publicBaseUrl: base,
    vaultUrl: trim(env.VAULT_URL ?? `${base}/vault`),
    walletBTokenUrl: trim(env.WALLET_B_TOKEN_URL ?? `${base}/wallet-b-token`),
    portalUrl: trim(env.PORTAL_URL ?? `${base}/portal`),
    databaseUrl: env.DATABASE_URL || undefined,
    databaseReplicaUrl: env.DATABASE_REPLICA_URL || undefined,
    databaseListenUrl: env.DATABASE_LISTEN_URL || undefined,
    databasePreparedStatements: env.DATABASE_PREPARED_STATEMENTS !== 'off',
    databasePool: { size: int(env.DATABASE_POOL_SIZE, 10), reportSize: int(env.REPORT_CONNECTIONS, 2) },
    dataDir: resolve(env.TENDER_DATA_DIR ?? '.tender'),
    masterKey: env.TENDER_MASTER_KEY || undefined,
    riskKey: env.TENDER_RISK_KEY || undefined,
    riskBinTable: env.RISK_BIN_TABLE ? resolve(env.RISK_BIN_TABLE) : undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
    logFormat: env.LOG_FORMAT === 'json' || env.LOG_FORMAT === 'pretty' ? env.LOG_FORMAT : undefined,
    metrics: env.METRICS_PORT ? { port: int(env.METRICS_PORT, 0), host: env.METRICS_HOST || '127.0.0.1' } : undefined,
    surfaces,
    worker: {
      enabled: env.TENDER_WORKER !== 'off',
      pollMs: int(env.TENDER_WORKER_POLL_MS, 1000),
      concurrency: int(env.TENDER_WORKER_CONCURRENCY, 8),
      leaseMs: int(env.TENDER_JOB_LEASE_MS, 60_000),
    },
    webhook: {
      timeoutMs: int(env.WEBHOOK_TIMEOUT_MS, 4000),
      retryIntervalMs: int(env.WEBHOOK_RETRY_INTERVAL_MS, 120_000),
      maxAttempts: int(env.WEBHOOK_MAX_ATTEMPTS, 10),
      concurrency: int(env.WEBHOOK_CONCURRENCY, 16),
      privateAddresses:
        env.WEBHOOK_PRIVATE_ADDRESSES === 'allow' || env.WEBHOOK_PRIVATE_ADDRESSES === 'refuse' ? env.WEBHOOK_PRIVATE_ADDRESSES : undefined,
    },
    setupTokenTtlSeconds: int(env.SETUP_TOKEN_TTL_SECONDS, 300),
    paymentMethodAliases: parseMethodAliases(env.PAYMENT_METHOD_ALIASES),
    captureWindow: env.CAPTURE_WINDOW ?? 'P5D',
    defaultExpiration: env.DEFAULT_EXPIRATION_PERIOD ?? 'PT30M',
    lateDeclineMs: int(env.LATE_DECLINE_MS, 3000),
    acquirer: {
      timeoutMs: acquirerTimeoutMs,
      recoveryMs,
      simSlowMs: int(env.SIM_SLOW_MS, 10_000),
      simSettleMs: int(env.SIM_SETTLE_MS, 3000),
      testUrl: env.TENDER_TEST_ACQUIRER_URL || undefined,
    },
    threeDs: {
      timeoutMs: Math.max(100, Math.min(int(env.THREEDS_TIMEOUT_MS, 10_000), acquirerTimeoutMs - 500)),
      allowHttp: env.THREEDS_ALLOW_HTTP === 'true',
    },
    iso8583: {
      timeoutMs: isoTimeoutMs,
      echoMs: int(env.ISO8583_ECHO_MS, 30_000),
      layoutFile: env.ISO8583_LAYOUT ? resolve(env.ISO8583_LAYOUT) : undefined,
    },
    rateLimitPerMinute: wholeNumber(env, 'RATE_LIMIT_PER_MINUTE', 120_000, 0, 1e9),
    publicRateLimitPerMinute: wholeNumber(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 600, 0, 1e9),
    cardTesting: {
      maxDeclines: wholeNumber(env, 'CARD_TESTING_MAX_DECLINES', 10, 0, 1e6),
      windowSeconds: wholeNumber(env, 'CARD_TESTING_WINDOW_SECONDS', 3600, 1, 7 * 86_400),
    },
    risk: riskLimits(env),
    apiKeyCacheMs: int(env.API_KEY_CACHE_MS, 10_000),
    shutdownGraceMs: int(env.SHUTDOWN_GRACE_MS, 10_000),
    shutdownDrainMs: int(env.SHUTDOWN_DRAIN_MS, 0),
    redisUrl: env.REDIS_URL || undefined,
    settlementFileDir: env.ACQUIRER_SETTLEMENT_DIR ? resolve(env.ACQUIRER_SETTLEMENT_DIR) : undefined,
    payouts: {
      dir: resolve(env.PAYOUT_DIR || join(resolve(env.TENDER_DATA_DIR ?? '.tender'), 'payouts')),
      debtor: payoutDebtor(env),
    },
    portal: {
      sessionIdleMs: int(env.PORTAL_SESSION_IDLE_MINUTES, 30) * 60_000,
      sessionMaxMs: int(env.PORTAL_SESSION_MAX_HOURS, 12) * 3_600_000,
      maxFailures: int(env.PORTAL_SIGNIN_MAX_FAILURES, 5),
      addressMaxFailures: int(env.PORTAL_SIGNIN_MAX_FAILURES_PER_ADDRESS, 50),
      lockSeconds: int(env.PORTAL_SIGNIN_LOCK_SECONDS, 300),
      maxLockSeconds: int(env.PORTAL_SIGNIN_MAX_LOCK_SECONDS, 3600),
    },
    limits: {
      searchesPerProject: int(env.SEARCH_CONCURRENCY_PER_PROJECT, 1),
      searchWaitMs: int(env.SEARCH_WAIT_MS, 2000),
      searchMsPerSecond: int(env.SEARCH_TIME_PER_SECOND_MS, 250),
      refusalsPerSecond: int(env.REFUSALS_PER_SECOND, 10),
      refusalDelayMs: int(env.REFUSAL_DELAY_MS, 500),
      reportsPerProject: int(env.REPORT_CONCURRENCY_PER_PROJECT, 1),
      maxQueryCost: int(env.SEARCH_MAX_QUERY_COST, DEFAULT_MAX_QUERY_COST),
      statementTimeoutMs: int(env.DATABASE_STATEMENT_TIMEOUT_MS, 30_000),
      parallelWorkers: env.DATABASE_PARALLEL_WORKERS === 'server' ? undefined : int(env.DATABASE_PARALLEL_WORKERS, 0),
      reportReadTimeoutMs: int(env.REPORT_READ_TIMEOUT_MS, 30_000),
      reportMaxMs: int(env.REPORT_MAX_SECONDS, 1800) * 1000,
      // half the slots by default: a lone merchant keeps most of the throughput, a dead endpoint leaves half to the others
      webhooksPerProject: int(env.WEBHOOK_CONCURRENCY_PER_PROJECT, Math.max(1, Math.floor(int(env.WEBHOOK_CONCURRENCY, 16) / 2))),
      breakerFailures: int(env.WEBHOOK_BREAKER_FAILURES, 5),
      breakerOpenMs: int(env.WEBHOOK_BREAKER_SECONDS, 60) * 1000,
    },
    tls,
    trustProxy: trustProxy(env),
    liveRequiresTls: bool(env, 'LIVE_REQUIRES_TLS', true),
    walletBRootKeysFile: env.WALLET_B_ROOT_KEYS_FILE || undefined,
    walletBTestRootKeysFile: env.WALLET_B_TEST_ROOT_KEYS_FILE || undefined,
    walletA: {
      validationHosts: (env.WALLET_A_VALIDATION_HOSTS ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
      timeoutMs: int(env.WALLET_A_TIMEOUT_MS, 10_000),
      caFile: env.WALLET_A_CA_FILE || undefined,
      identityCertFile: env.WALLET_A_IDENTITY_CERT_FILE || undefined,
      identityKeyFile: env.WALLET_A_IDENTITY_KEY_FILE || undefined,
      rootCaFile: env.WALLET_A_ROOT_CA_FILE || undefined,
      testRootCaFile: env.WALLET_A_TEST_ROOT_CA_FILE || undefined,
    },
  };
  return { ...cfg, ...overrides };
}

/** The operator's account of PAYOUT_DEBTOR_*: all of name and IBAN, or none; a bad IBAN stops the start. */
function payoutDebtor(env: NodeJS.ProcessEnv): Config['payouts']['debtor'] {
  const { PAYOUT_DEBTOR_NAME: name, PAYOUT_DEBTOR_IBAN: raw, PAYOUT_DEBTOR_BIC: bic } = env;
  if (!name && !raw && !bic) return undefined;
  if (!name || !raw) throw new Error('PAYOUT_DEBTOR_NAME and PAYOUT_DEBTOR_IBAN are set together');
  const iban = normalIban(raw);
  if (!iban) throw new Error('PAYOUT_DEBTOR_IBAN is not a valid IBAN');
  if (bic && !validBic(bic)) throw new Error('PAYOUT_DEBTOR_BIC is not a valid BIC');
  return { name, iban, ...(bic ? { bic } : {}) };
}
