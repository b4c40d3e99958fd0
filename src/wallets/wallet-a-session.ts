import type { Config } from '../config.ts';
/**
 * wallet-a-pay merchant validation (the browser's onvalidatemerchant event): the rules of a
 * session request, the live call to the wallet provider over mutual TLS, and the offline
 * sandbox validator of test projects. No store here; services/wallets/keys.ts wires it up.
 * See docs/wallets.md.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { DomainError, invalid, type ErrorKind } from '../domain/errors.ts';
import { merchantIdentifierOf } from '../domain/project.ts';

/**
 * The wallet provider's documented merchant validation hosts (production pods, the China
 * region and the sandbox). validationUrl must be https on one of these; anything else could
 * make us present the merchant identity certificate to a third party.
 */
export const WALLET_A_VALIDATION_HOSTS: readonly string[] = [
  'apple-pay-gateway.apple.com',
  'cn-apple-pay-gateway.apple.com',
  ...[1, 2, 3, 4, 5].flatMap((n) => [`apple-pay-gateway-nc-pod${n}.apple.com`, `apple-pay-gateway-pr-pod${n}.apple.com`]),
  ...[1, 2, 3].flatMap((n) => [`cn-apple-pay-gateway-sh-pod${n}.apple.com`, `cn-apple-pay-gateway-tj-pod${n}.apple.com`]),
  'apple-pay-gateway-cert.apple.com',
  'cn-apple-pay-gateway-cert.apple.com',
];

export interface WalletAConfig {
  /** allowed `host` values of validationUrl (hostname, plus `:port` for a non-443 port) */
  hosts: string[];
  /** the whole live validation call: connect, send, answer */
  timeoutMs: number;
  /** extra CA certificates (PEM) trusted for the validation hosts, beside the system's */
  ca?: string;
  /** an installation-wide merchant identity, for projects without their own */
  identity?: MerchantIdentity;
}

export interface MerchantIdentity {
  certificate: string; // PEM
  privateKey: string; // PEM
}

/** The wallet-a settings of config.ts, with the certificate files read. */
export function walletAConfig(c: Config['walletA']): WalletAConfig {
  const cfg: WalletAConfig = {
    hosts: c.validationHosts.length ? [...c.validationHosts] : [...WALLET_A_VALIDATION_HOSTS],
    timeoutMs: c.timeoutMs > 0 ? c.timeoutMs : 10_000,
  };
  if (c.caFile) cfg.ca = readFileSync(c.caFile, 'utf8');
  if (c.identityCertFile && c.identityKeyFile) {
    cfg.identity = { certificate: readFileSync(c.identityCertFile, 'utf8'), privateKey: readFileSync(c.identityKeyFile, 'utf8') };
  }
  return cfg;
}

export interface SessionRequest {
  validationUrl: string;
  merchantIdentifier: string;
  displayName: string;
  initiativeContext: string;
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** validationUrl as a URL when it is https on an allowed host; throws a ValidationError otherwise. */
function checkValidationUrl(text: string, hosts: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid('validationUrl', 'validationUrl must be an absolute URL');
  }
  if (url.protocol !== 'https:') throw invalid('validationUrl', 'validationUrl must use https');
  if (url.username || url.password) throw invalid('validationUrl', 'validationUrl must not carry credentials');
  if (!hosts.includes(url.host.toLowerCase())) {
    throw invalid('validationUrl', `validationUrl host ${url.host} is not one of the wallet provider's merchant validation hosts`);
  }
  return url;
}

/** Every rule of a session request beyond its schema, in field order. */
export function checkSessionRequest(projectId: string, input: SessionRequest, hosts: readonly string[]): URL {
  const url = checkValidationUrl(input.validationUrl, hosts);
  if (input.merchantIdentifier !== merchantIdentifierOf(projectId)) {
    throw invalid('merchantIdentifier', 'merchantIdentifier must be the project id without hyphens');
  }
  if (!input.displayName.trim()) throw invalid('displayName', 'displayName must not be blank');
  if (!DOMAIN.test(input.initiativeContext)) {
    throw invalid('initiativeContext', 'initiativeContext must be the domain name of the payment page, such as shop.example.com');
  }
  return url;
}

/** What the provider is sent: the request's fields with the web initiative. */
const providerBody = (input: SessionRequest) => ({
  merchantIdentifier: input.merchantIdentifier,
  displayName: input.displayName,
  initiative: 'web',
  initiativeContext: input.initiativeContext,
});

/** The merchant session the wallet provider answers, as the browser's completeMerchantValidation takes it. */
export interface MerchantSession {
  epochTimestamp: number;
  expiresAt: number;
  merchantSessionIdentifier: string;
  nonce: string;
  merchantIdentifier: string;
  domainName: string;
  displayName: string;
  signature: string;
  operationalAnalyticsIdentifier: string;
  retries: number;
  pspId: string;
}

const SESSION_TTL_MS = 60 * 60 * 1000; // the provider's sessions last an hour
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * The sandbox validator: a session of the provider's shape, made offline. The provider
 * answers the merchant identifier as an uppercase SHA-256; `signature` here is an HMAC under
 * the installation's sandbox key (hex), not the provider's PKCS#7 signature.
 */
export function sandboxSession(input: SessionRequest, now: Date, signingKey: Buffer): MerchantSession {
  const merchantHash = createHash('sha256').update(input.merchantIdentifier).digest('hex').toUpperCase();
  const epochTimestamp = now.getTime();
  const session: Omit<MerchantSession, 'signature'> = {
    epochTimestamp,
    expiresAt: epochTimestamp + SESSION_TTL_MS,
    merchantSessionIdentifier: `SSH${hex(16).toUpperCase()}_${hex(32).toUpperCase()}`,
    nonce: hex(4),
    merchantIdentifier: merchantHash,
    domainName: input.initiativeContext,
    displayName: input.displayName,
    operationalAnalyticsIdentifier: `${input.displayName}:${merchantHash}`,
    retries: 0,
    pspId: merchantHash,
  };
  const signature = createHmac('sha256', signingKey).update(JSON.stringify(session)).digest('hex');
  return { ...session, signature };
}

const upstream = (message: string, kind: ErrorKind = 'upstream') =>
  new DomainError('FailedToFetchTransactionInformation', message, undefined, kind);

/**
 * The live validation: POSTs the provider body to validationUrl over mutual TLS with the
 * merchant identity, within the timeout. Answers the provider's session unchanged.
 */
export async function requestLiveSession(
  url: URL,
  input: SessionRequest,
  identity: MerchantIdentity,
  cfg: Pick<WalletAConfig, 'timeoutMs' | 'ca'>,
): Promise<unknown> {
  const agent = new Agent({
    connect: { cert: identity.certificate, key: identity.privateKey, ...(cfg.ca ? { ca: cfg.ca } : {}), timeout: cfg.timeoutMs },
    headersTimeout: cfg.timeoutMs,
    bodyTimeout: cfg.timeoutMs,
  });
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(providerBody(input)),
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode > 299)
      throw upstream(`the wallet provider refused merchant validation (HTTP ${res.statusCode})`);
    try {
      return JSON.parse(text);
    } catch {
      throw upstream('the wallet provider answered merchant validation with something that is not JSON');
    }
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const e = err as Error & { code?: string };
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(e.code ?? '')) {
      throw upstream(`the wallet provider did not answer merchant validation within ${cfg.timeoutMs} ms`, 'upstream_timeout');
    }
    throw upstream(`merchant validation with the wallet provider failed (${e.code ?? 'connection error'})`);
  } finally {
    await agent.close().catch(() => {});
  }
}
