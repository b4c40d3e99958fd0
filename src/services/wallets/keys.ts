import { createPrivateKey, createPublicKey, hkdfSync, X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Ctx, ProjectCreatedHook } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import { findProject, updateProjectSettings } from '../../store/platform/projects.ts';
import * as orders from '../../store/payments/orders.ts';
import * as store from '../../store/wallets/keys.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import { dataKeyFor, fingerprint, openField, sealField, sealedRecord, checkDataKey } from '../platform/crypto-envelope.ts';
import { storeCard } from '../vault/cards.ts';
import { merchantIdentifierOf } from '../../domain/project.ts';
import { generateSandboxKeys, openToken, TokenError, type DecryptedPayment, type RootKey } from '../../wallets/wallet-b-token.ts';
import {
  checkSessionRequest,
  requestLiveSession,
  sandboxSession,
  walletAConfig,
  type MerchantIdentity,
  type SessionRequest,
} from '../../wallets/wallet-a-session.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { ProjectId, TransactionId } from '../../domain/ids.ts';
import { WALLET_B } from '../../domain/payment-methods.ts';

/**
 * A project's wallet keys and what is built on them: the wallet-b-pay recipient and root keys,
 * the token service (verify, decrypt, vault) and the wallet-a-pay merchant identity and sessions.
 * The pay steps are in wallet-pay.ts and wallet-a-pay.ts beside this; the token cryptography in
 * src/wallets/. See docs/wallets.md.
 */

// ---- wallet-b-pay keys ---------------------------------------------------------------

/** A project's recipient id unless it set its own: `merchant:` and the project id without hyphens. */
const defaultRecipientId = (projectId: ProjectId) => `merchant:${merchantIdentifierOf(projectId)}`;
/** merchant:<id> (DIRECT) and gateway:<id> are the provider's forms; any id the tokens are signed for is taken. */
const RECIPIENT_ID = /^[A-Za-z0-9:._-]{1,100}$/;

/** Sandbox root keys never lapse on their own (2100-01-01); a project can only retire them. */
const SANDBOX_ROOT_EXPIRATION = '4102444800000';
const VERSIONS = ['ECv1', 'ECv2', 'ECv2SigningOnly'] as const;

async function insertKey(
  ctx: Ctx,
  project: Pick<ProjectRow, 'id'>,
  kind: store.WalletBKeyKind,
  key: { privateKey: string; publicKey: string; recipientId?: string },
  now: Date,
  replace = false,
) {
  const row = {
    ...(await sealedRecord(ctx, project.id, `wallet-b/${kind}`, key.privateKey)),
    kind,
    recipient_id: key.recipientId ?? null,
    public_key: key.publicKey,
    created: now,
  };
  await ctx.db.tx(async (q) => {
    if (replace) await store.retireKeys(q, project.id, kind, row.id, now);
    await store.insertKey(q, row);
  });
}

/**
 * Gives a project its wallet keys when it has none: a recipient key pair, and for a test
 * project the sandbox root key its wallet sheet signs with. Run at project creation and
 * again lazily (projects made before wallets existed, or a node that raced). Idempotent.
 */
async function ensureWalletKeys(ctx: Ctx, projectId: ProjectId) {
  const project = await findProject(ctx.db, projectId);
  if (!project) return;
  const now = nowFor(project);
  const fresh = () => generateSandboxKeys();
  if (!(await store.activeKeys(ctx.db, project.id, 'recipient')).length) {
    const k = fresh();
    await insertKey(
      ctx,
      project,
      'recipient',
      { privateKey: k.recipientPrivateKey, publicKey: k.recipientPublicKey, recipientId: defaultRecipientId(project.id) },
      now,
    );
  }
  if (project.mode === 'test' && !(await store.activeKeys(ctx.db, project.id, 'sandbox_root')).length) {
    const k = fresh();
    await insertKey(ctx, project, 'sandbox_root', { privateKey: k.rootPrivateKey, publicKey: k.rootPublicKey }, now);
  }
}

/** Project created hook: a new project gets its wallet keys at once. */
export const makeWalletKeys: ProjectCreatedHook = async (ctx, projectId) => {
  await ensureWalletKeys(ctx, projectId);
};

interface OpenedKey {
  row: store.WalletBKeyRow;
  privateKey: string;
}

async function keysOf(ctx: Ctx, project: Pick<ProjectRow, 'id'>, kind: store.WalletBKeyKind): Promise<OpenedKey[]> {
  let rows = await store.activeKeys(ctx.db, project.id, kind);
  if (!rows.length) {
    await ensureWalletKeys(ctx, project.id);
    rows = await store.activeKeys(ctx.db, project.id, kind);
  }
  const dk = await dataKeyFor(ctx, project.id);
  return rows.map((row) => {
    checkDataKey(dk, row.data_key_id);
    return { row, privateKey: openField(dk, row.id, `wallet-b/${kind}`, row.private_key_ct) };
  });
}

export interface RecipientKeys {
  recipientId: string;
  /** newest first */
  privateKeys: string[];
  /** base64 uncompressed point, as DIRECT tokenization parameters take it */
  publicKey: string;
}

export async function recipientKeys(ctx: Ctx, project: Pick<ProjectRow, 'id'>): Promise<RecipientKeys> {
  const keys = await keysOf(ctx, project, 'recipient');
  if (!keys.length) throw new DomainError('ServerError', 'the project has no wallet-b-pay recipient key');
  return { recipientId: keys[0].row.recipient_id!, privateKeys: keys.map((k) => k.privateKey), publicKey: keys[0].row.public_key };
}

/** The sandbox root key of a test project: the private half signs, the public half is trusted. */
export async function sandboxRootKey(ctx: Ctx, project: ProjectRow): Promise<{ privateKey: string; publicKey: string }> {
  if (project.mode !== 'test') throw new DomainError('Forbidden', 'the sandbox wallet is available to test projects only');
  const [key] = await keysOf(ctx, project, 'sandbox_root');
  if (!key) throw new DomainError('ServerError', 'the project has no sandbox root key');
  return { privateKey: key.privateKey, publicKey: key.row.public_key };
}

/** What a merchant configures in wallet-b-pay's DIRECT tokenization. */
export async function tokenizationParameters(ctx: Ctx, project: ProjectRow) {
  const keys = await recipientKeys(ctx, project);
  return {
    recipient_id: keys.recipientId,
    tokenization_specification: { type: 'DIRECT', parameters: { protocolVersion: 'ECv2', publicKey: keys.publicKey } },
    token_service_url: `${ctx.config.walletBTokenUrl}/${project.mode === 'test' ? 'test/' : ''}tokens/`,
  };
}

function uncompressedPoint(pkcs8: string): string {
  let key;
  try {
    key = createPrivateKey({ key: Buffer.from(pkcs8, 'base64'), format: 'der', type: 'pkcs8' });
  } catch {
    throw invalid('private_key', 'private_key must be a base64 PKCS#8 EC P-256 private key');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw invalid('private_key', 'private_key must be an EC P-256 key');
  }
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]).toString('base64');
}

/**
 * Sets the project's recipient id (such as the merchant id the wallet provider assigned) and,
 * optionally, imports its recipient private key (base64 PKCS#8), retiring the previous key.
 */
export async function configureRecipient(ctx: Ctx, project: ProjectRow, input: { recipient_id?: string; private_key?: string }) {
  if (input.recipient_id !== undefined && !RECIPIENT_ID.test(input.recipient_id)) {
    throw invalid('recipient_id', 'recipient_id must be 1 to 100 letters, digits or : . _ -, such as merchant:<id>');
  }
  const current = await recipientKeys(ctx, project);
  const recipientId = input.recipient_id ?? current.recipientId;
  if (input.private_key !== undefined) {
    const publicKey = uncompressedPoint(input.private_key);
    await insertKey(ctx, project, 'recipient', { privateKey: input.private_key, publicKey, recipientId }, nowFor(project), true);
  } else if (input.recipient_id !== undefined) {
    await store.setRecipientId(ctx.db, project.id, recipientId);
  }
  return tokenizationParameters(ctx, project);
}

// ---- root signing keys and the token clock --------------------------------------------

const fileCache = new Map<string, { mtimeMs: number; keys: RootKey[] }>();

/** Root keys from a keys file of the provider's shape `{keys: [{keyValue, protocolVersion, keyExpiration}]}`. */
function readRootKeysFile(path: string | undefined): RootKey[] {
  if (!path) return [];
  let keys: RootKey[];
  try {
    const { mtimeMs } = statSync(path);
    const hit = fileCache.get(path);
    if (hit && hit.mtimeMs === mtimeMs) return hit.keys;
    const parsed = JSON.parse(readFileSync(path, 'utf8'));
    if (!Array.isArray(parsed?.keys)) throw new Error('no keys array');
    keys = parsed.keys.filter(
      (k: { keyValue?: unknown; protocolVersion?: unknown } | null) =>
        typeof k?.keyValue === 'string' && typeof k?.protocolVersion === 'string',
    );
    fileCache.set(path, { mtimeMs, keys });
  } catch (err) {
    throw Object.assign(new DomainError('ServerError', 'the wallet-b-pay root signing keys file cannot be read'), { cause: err });
  }
  return keys;
}

export type RootKeySet = 'production' | 'test';

/** The production set is the keys file; the test set is the test keys file plus the project's sandbox root key. */
async function rootKeysFor(ctx: Ctx, project: ProjectRow, set: RootKeySet): Promise<RootKey[]> {
  if (set === 'production') return readRootKeysFile(ctx.config.walletBRootKeysFile);
  const { publicKey } = await sandboxRootKey(ctx, project);
  const sandbox = VERSIONS.map((protocolVersion) => ({ keyValue: publicKey, protocolVersion, keyExpiration: SANDBOX_ROOT_EXPIRATION }));
  return [...readRootKeysFile(ctx.config.walletBTestRootKeysFile), ...sandbox];
}

/**
 * The clock the token checks run on (messageExpiration, key expirations): the project's
 * clock, or for a test project the instant pinned in its settings (`wallet_b_clock`), so
 * recorded tokens such as the public test vectors can be replayed.
 */
export function tokenClock(project: Pick<ProjectRow, 'mode' | 'settings' | 'clock_offset_ms'>): Date {
  const pinned = project.settings?.wallet_b_clock;
  if (project.mode === 'test' && typeof pinned === 'string' && !Number.isNaN(Date.parse(pinned))) return new Date(pinned);
  return nowFor(project);
}

/** Pins (or with null, releases) a test project's token clock. */
export async function pinTokenClock(ctx: Ctx, project: ProjectRow, at: string | null) {
  if (project.mode !== 'test') throw new DomainError('Forbidden', 'the token clock can be pinned in test projects only');
  if (at !== null && Number.isNaN(Date.parse(at))) throw invalid('now', 'now must be an ISO 8601 date-time');
  const settings = { ...project.settings };
  if (at === null) delete settings.wallet_b_clock;
  else settings.wallet_b_clock = new Date(at).toISOString();
  await updateProjectSettings(ctx.db, project.id, settings);
  ctx.keyCache?.clear();
  project.settings = settings;
  return { now: tokenClock(project).toISOString(), pinned: at !== null };
}

// ---- the token service ---------------------------------------------------------------

export interface TokenizeInput {
  walletBPayMessage: string;
  setupToken: string;
  transactionId: TransactionId;
}

export interface TokenizeResult {
  vaultToken: string;
  cryptogram: string;
  eciIndicator: string;
}

/** A refused token: the API error body with the token check's `code` beside `value`. */
export class TokenRefused extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    field = 'walletBPayMessage',
  ) {
    super('ValidationError', message, field);
    this.extra = { code };
  }
}

/** The vault names its own fields; the token service's caller knows them by other names (the token's field for the card). */
export function renamed(err: unknown, tokenField = 'walletBPayMessage'): unknown {
  if (!(err instanceof DomainError) || !err.field) return err;
  const field = err.field === 'setup_token' ? 'setupToken' : err.field === 'pan' || err.field === 'expiry' ? tokenField : err.field;
  const message = err.message.replaceAll('setup_token', 'setupToken').replace(/^(pan|expiry) /, "the token's $1 ");
  return new DomainError(err.type, message, field, err.kind);
}

/** The cryptogram as the vault keeps it: a keyed HMAC, never the value. */
const cryptogramMac = (dk: Awaited<ReturnType<typeof dataKeyFor>>, cryptogram: string) =>
  fingerprint(dk, `wallet-b-pay/cryptogram\n${cryptogram}`);

/**
 * {wallet_b_token_url}/tokens/ and /test/tokens/: verifies and opens a wallet-b-pay token
 * with the project's keys, vaults its card against the transaction's one-use setupToken and
 * answers the vault token with the cryptogram and ECI (empty for PAN_ONLY). Nothing is
 * stored unless every check passes.
 */
export async function tokenize(ctx: Ctx, input: TokenizeInput, opts: { test: boolean }): Promise<TokenizeResult> {
  const txn = await orders.transactionById(ctx.db, input.transactionId);
  if (!txn || txn.setup_token !== input.setupToken)
    throw invalid('setupToken', `setupToken does not belong to transaction ${input.transactionId}`);
  const project = await findProject(ctx.db, txn.project_id);
  if (!project) throw invalid('setupToken', `setupToken does not belong to transaction ${input.transactionId}`);
  if (txn.payment_method !== WALLET_B)
    throw invalid('transactionId', `transaction ${txn.id} is a ${txn.payment_method} transaction, not wallet-b-pay`);
  if (opts.test && project.mode !== 'test')
    throw new DomainError('Forbidden', 'the test token service takes tokens of test projects only; use /tokens/');

  const roots = await rootKeysFor(ctx, project, opts.test ? 'test' : 'production');
  if (!roots.length)
    throw new DomainError(
      'ServerError',
      'no wallet-b-pay root signing keys are configured (WALLET_B_ROOT_KEYS_FILE)',
      undefined,
      'unavailable',
    );
  const keys = await recipientKeys(ctx, project);
  let payment: DecryptedPayment;
  try {
    payment = openToken(input.walletBPayMessage, {
      rootKeys: roots,
      recipientId: keys.recipientId,
      recipientPrivateKeys: keys.privateKeys,
      now: tokenClock(project),
    });
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    if (err.code === 'invalid_config') {
      ctx.log.error({ project_id: project.id, code: err.code, msg: err.message }, 'wallet-b-pay keys are unusable');
      throw new DomainError('ServerError', 'the wallet-b-pay keys of this project are unusable');
    }
    throw new TokenRefused(err.code, `walletBPayMessage refused: ${err.message}`);
  }
  const messageId = typeof payment.messageId === 'string' ? payment.messageId : null;
  if (messageId && (await store.messageSeen(ctx.db, project.id, messageId))) {
    throw new TokenRefused('token_already_used', 'walletBPayMessage refused: this token (messageId) has already been used');
  }

  const d = payment.paymentMethodDetails;
  const expiry = `${String(d.expirationMonth).padStart(2, '0')}${d.expirationYear}`;
  let vaulted;
  try {
    vaulted = await storeCard(ctx, { pan: d.pan, expiry, setup_token: input.setupToken }, { transactionId: txn.id });
  } catch (err) {
    throw renamed(err);
  }
  const withCryptogram = d.authMethod === 'CRYPTOGRAM_3DS';
  const cryptogram = withCryptogram ? String(d.cryptogram) : '';
  const dk = await dataKeyFor(ctx, project.id);
  await store.insertToken(ctx.db, {
    vault_token: vaulted.vault_token,
    project_id: project.id,
    transaction_id: txn.id,
    auth_method: d.authMethod,
    cryptogram_mac: withCryptogram ? cryptogramMac(dk, cryptogram) : null,
    message_id: messageId,
    created: nowFor(project),
  });
  return { vaultToken: vaulted.vault_token, cryptogram, eciIndicator: withCryptogram ? (d.eciIndicator ?? '') : '' };
}

/** Whether a cryptogram sent to the pay step is the one the token carried (when the token service vaulted the card). */
export async function checkCryptogram(ctx: Ctx, projectId: ProjectId, vaultToken: string, cryptogram: string) {
  const record = await store.findToken(ctx.db, projectId, vaultToken);
  if (!record || !cryptogram) return; // the merchant's own decryption (no record), or PAN_ONLY processing
  if (record.auth_method === 'PAN_ONLY') throw invalid('cryptogram', 'cryptogram must be empty: the token of this vaultToken was PAN_ONLY');
  const dk = await dataKeyFor(ctx, projectId);
  if (record.cryptogram_mac !== cryptogramMac(dk, cryptogram))
    throw invalid('cryptogram', 'cryptogram is not the one of the token of this vaultToken');
}

// ---- wallet-a-pay ---------------------------------------------------------------------

/** The sandbox validator's signing key, derived from the master key (stable across nodes). */
const sandboxSigningKey = (master: Buffer) =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'tender/wallet-a/sandbox-session/v1', 32));

/** POST /v1/wallet-a-pay/sessions/: the merchant session for the browser's completeMerchantValidation. */
export async function createSession(ctx: Ctx, project: ProjectRow, input: SessionRequest): Promise<{ sessionData: unknown }> {
  const cfg = walletAConfig(ctx.config.walletA);
  const url = checkSessionRequest(project.id, input, cfg.hosts);
  if (project.mode === 'test') return { sessionData: sandboxSession(input, nowFor(project), sandboxSigningKey(ctx.masterKey)) };
  const identity = (await merchantIdentity(ctx, project)) ?? cfg.identity;
  if (!identity) throw new DomainError('Forbidden', 'no wallet-a-pay merchant identity certificate is configured for this project');
  return { sessionData: await requestLiveSession(url, input, identity, cfg) };
}

async function merchantIdentity(ctx: Ctx, project: ProjectRow): Promise<MerchantIdentity | undefined> {
  const row = await store.findIdentity(ctx.db, project.id);
  if (!row) return undefined;
  const dk = await dataKeyFor(ctx, project.id);
  checkDataKey(dk, row.data_key_id);
  return { certificate: row.certificate, privateKey: openField(dk, project.id, 'wallet-a/identity-key', row.private_key_ct) };
}

/** Stores the project's merchant identity (PEM certificate and its private key) for live validation. */
export async function setMerchantIdentity(ctx: Ctx, project: ProjectRow, input: { certificate: string; private_key: string }) {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(input.certificate);
  } catch {
    throw invalid('certificate', 'certificate must be a PEM X.509 certificate');
  }
  let key;
  try {
    key = createPrivateKey(input.private_key);
  } catch {
    throw invalid('private_key', 'private_key must be a PEM private key');
  }
  if (!cert.checkPrivateKey(key)) throw invalid('private_key', 'private_key is not the key of this certificate');
  const now = nowFor(project);
  if (new Date(cert.validTo) <= now) throw invalid('certificate', `certificate expired on ${new Date(cert.validTo).toISOString()}`);
  const dk = await dataKeyFor(ctx, project.id);
  const pem = key.export({ format: 'pem', type: 'pkcs8' }).toString();
  await store.upsertIdentity(
    ctx.db,
    {
      project_id: project.id,
      data_key_id: dk.id,
      certificate: cert.toString(),
      private_key_ct: sealField(dk, project.id, 'wallet-a/identity-key', pem),
    },
    now,
  );
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    valid_to: new Date(cert.validTo).toISOString(),
    fingerprint256: cert.fingerprint256,
  };
}
