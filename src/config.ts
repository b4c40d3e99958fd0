import { resolve } from 'node:path';
import { parseMethodAliases, type MethodAliases } from './domain/project.ts';

/** Every setting, from the environment, with a default that runs on a laptop. */
export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  vaultUrl: string;
  walletBTokenUrl: string;
  portalUrl: string;
  databaseUrl?: string;
  /** PostgreSQL connections per process: for the API, hosted pages and workers; and, apart, for CSV reports */
  databasePool: { size: number; reportSize: number };
  dataDir: string;
  masterKey?: string;
  logLevel: string;
  /** Which surfaces this process serves: api (with /pay), vault, wallet-b-token, portal. */
  surfaces: Surface[];
  worker: { enabled: boolean; pollMs: number; concurrency: number };
  webhook: { timeoutMs: number; retryIntervalMs: number; maxAttempts: number; concurrency: number };
  setupTokenTtlSeconds: number;
  /** other identifiers clients use for Tender's payment methods (PAYMENT_METHOD_ALIASES) */
  paymentMethodAliases: MethodAliases;
  captureWindow: string;
  defaultExpiration: string;
  lateDeclineMs: number;
  /** API requests per project (API key) per minute, on the API and the vault; 0: off */
  rateLimitPerMinute: number;
  /** requests per minute per client address and per resource on the anonymous surfaces, and failed authentications per address; 0: off */
  publicRateLimitPerMinute: number;
  /** card-testing protection on the hosted pages: declines per client or payment link within the window (0 declines: off) */
  cardTesting: { maxDeclines: number; windowSeconds: number };
  /** how long an API key's project stays cached (ms; 0: no cache); changes clear it at once */
  apiKeyCacheMs: number;
  /** how long a stopping server lets requests in flight finish before cutting them (ms) */
  shutdownGraceMs: number;
  redisUrl?: string;
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
export const ALL_SURFACES: Surface[] = ['api', 'vault', 'wallet-b-token', 'portal'];

const int = (v: string | undefined, d: number) => (v === undefined || v === '' ? d : Number.parseInt(v, 10));
/** A whole-number setting within [min, max]; anything else is an error naming the setting. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, d: number, min: number, max: number): number {
  const v = env[name];
  if (v === undefined || v === '') return d;
  const n = /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${v}"`);
  return n;
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
  if (!certFile || !keyFile) throw new Error(`${certFile ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'} must be set with ${certFile ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE'}`);
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

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? int(env.PORT, 8080);
  const host = env.HOST ?? '127.0.0.1';
  const tls = tlsFiles(env);
  const base = trim(overrides.publicBaseUrl ?? env.PUBLIC_BASE_URL ?? `${tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`);
  const surfaces = (env.TENDER_SURFACES ? env.TENDER_SURFACES.split(',').map((s) => s.trim()) : ALL_SURFACES) as Surface[];
  const cfg: Config = {
    port,
    host,
    publicBaseUrl: base,
    vaultUrl: trim(env.VAULT_URL ?? `${base}/vault`),
    walletBTokenUrl: trim(env.WALLET_B_TOKEN_URL ?? `${base}/wallet-b-token`),
    portalUrl: trim(env.PORTAL_URL ?? `${base}/portal`),
    databaseUrl: env.DATABASE_URL || undefined,
    databasePool: { size: int(env.DATABASE_POOL_SIZE, 10), reportSize: int(env.REPORT_CONNECTIONS, 2) },
    dataDir: resolve(env.TENDER_DATA_DIR ?? '.tender'),
    masterKey: env.TENDER_MASTER_KEY || undefined,
    logLevel: env.LOG_LEVEL ?? 'info',
    surfaces,
    worker: {
      enabled: env.TENDER_WORKER !== 'off',
      pollMs: int(env.TENDER_WORKER_POLL_MS, 1000),
      concurrency: int(env.TENDER_WORKER_CONCURRENCY, 8),
    },
    webhook: {
      timeoutMs: int(env.WEBHOOK_TIMEOUT_MS, 4000),
      retryIntervalMs: int(env.WEBHOOK_RETRY_INTERVAL_MS, 120_000),
      maxAttempts: int(env.WEBHOOK_MAX_ATTEMPTS, 10),
      concurrency: int(env.WEBHOOK_CONCURRENCY, 16),
    },
    setupTokenTtlSeconds: int(env.SETUP_TOKEN_TTL_SECONDS, 300),
    paymentMethodAliases: parseMethodAliases(env.PAYMENT_METHOD_ALIASES),
    captureWindow: env.CAPTURE_WINDOW ?? 'P5D',
    defaultExpiration: env.DEFAULT_EXPIRATION_PERIOD ?? 'PT30M',
    lateDeclineMs: int(env.LATE_DECLINE_MS, 3000),
    rateLimitPerMinute: wholeNumber(env, 'RATE_LIMIT_PER_MINUTE', 120_000, 0, 1e9),
    publicRateLimitPerMinute: wholeNumber(env, 'PUBLIC_RATE_LIMIT_PER_MINUTE', 600, 0, 1e9),
    cardTesting: {
      maxDeclines: wholeNumber(env, 'CARD_TESTING_MAX_DECLINES', 10, 0, 1e6),
      windowSeconds: wholeNumber(env, 'CARD_TESTING_WINDOW_SECONDS', 3600, 1, 7 * 86_400),
    },
    apiKeyCacheMs: int(env.API_KEY_CACHE_MS, 10_000),
    shutdownGraceMs: int(env.SHUTDOWN_GRACE_MS, 10_000),
    redisUrl: env.REDIS_URL || undefined,
    tls,
    trustProxy: trustProxy(env),
    liveRequiresTls: bool(env, 'LIVE_REQUIRES_TLS', true),
    walletBRootKeysFile: env.WALLET_B_ROOT_KEYS_FILE || undefined,
    walletBTestRootKeysFile: env.WALLET_B_TEST_ROOT_KEYS_FILE || undefined,
    walletA: {
      validationHosts: (env.WALLET_A_VALIDATION_HOSTS ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean),
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
