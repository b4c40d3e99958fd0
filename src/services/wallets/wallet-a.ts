import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import * as store from '../../store/wallets/keys.ts';
import { nowFor, type Ctx } from '../platform/context.ts';
import { checkDataKey, dataKeyFor, openField, sealedRecord } from '../platform/crypto-envelope.ts';
import { storeCard } from '../vault/cards.ts';
import { renamed, tokenClock, TokenRefused } from './keys.ts';
import { payVaulted, walletTransaction, walletTransactionOf, type Billing, type BrowserInfo, type WalletPayResult } from './pay.ts';
import type { Checkout } from '../payments/checkout.ts';
import { makeSandboxChain, type Signer } from '../../wallets/wallet-a-pki.ts';
import { openPaymentToken, publicKeyHash, sealPaymentToken, WalletATokenError, type WalletAPayment } from '../../wallets/wallet-a-token.ts';
import { merchantIdentifierOf } from '../../domain/project.ts';
import { currencyNumeric } from '../../domain/currency.ts';
import { eciFor } from '../../domain/card.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderId, TransactionId } from '../../domain/ids.ts';
import { WALLET_A } from '../../domain/payment-methods.ts';

/**
 * wallet-a-pay payments: the project's payment processing key (tokens are encrypted to it),
 * the roots tokens must be signed under, the pay step that verifies, decrypts and vaults a
 * token and authorizes it with its cryptogram, and the sandbox wallet of test projects.
 * Merchant sessions are in wallets.ts. See docs/wallets.md "wallet-a-pay payments".
 */

const TOKEN_FIELD = 'paymentToken';

// ---- keys -----------------------------------------------------------------------------

/** The project's active key row of a kind (public halves only), made on first use. */
async function keyRow(ctx: Ctx, project: Pick<ProjectRow, 'id' | 'mode'>, kind: store.WalletAKeyKind): Promise<store.WalletAKeyRow> {
  let row = await store.activeWalletAKey(ctx.db, project.id, kind);
  if (!row) {
    await insertKey(ctx, project, kind, kind === 'processing' ? newProcessingKey() : newSandboxSigner(project), false);
    row = await store.activeWalletAKey(ctx.db, project.id, kind);
  }
  if (!row) throw new DomainError('ServerError', `the project has no wallet-a-pay ${kind} key`);
  return row;
}

/** A key row's private key (PKCS#8 PEM): opened only where it signs or decrypts. */
async function openKey(ctx: Ctx, row: store.WalletAKeyRow): Promise<string> {
  const dk = await dataKeyFor(ctx, row.project_id);
  checkDataKey(dk, row.data_key_id);
  return openField(dk, row.id, `wallet-a/${row.kind}`, row.private_key_ct);
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const certificatesIn = (pem: string) => pem.match(CERTIFICATE) ?? [];

interface NewKey {
  privateKey: string; // PKCS#8 PEM
  publicPem: string;
  publicKeyHash: string | null;
}

function newProcessingKey(): NewKey {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return processingKeyOf(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
}

function processingKeyOf(pem: string): NewKey {
  const publicPem = createPublicKey(pem).export({ format: 'pem', type: 'spki' }).toString();
  return { privateKey: pem, publicPem, publicKeyHash: publicKeyHash(publicPem) };
}

function newSandboxSigner(project: Pick<ProjectRow, 'id' | 'mode'>): NewKey {
  if (project.mode !== 'test') throw new DomainError('Forbidden', 'the sandbox wallet is available to test projects only');
  // valid for any instant a test clock is likely to be moved or pinned to
  const chain = makeSandboxChain(
    `Tender sandbox wallet-a ${project.id.slice(0, 8)}`,
    new Date('2000-01-01T00:00:00Z'),
    new Date('2100-01-01T00:00:00Z'),
  );
  return { privateKey: chain.leafKey, publicPem: [chain.leaf, chain.intermediate, chain.root].join(''), publicKeyHash: null };
}

async function insertKey(ctx: Ctx, project: Pick<ProjectRow, 'id'>, kind: store.WalletAKeyKind, key: NewKey, replace: boolean) {
  const row = {
    ...(await sealedRecord(ctx, project.id, `wallet-a/${kind}`, key.privateKey)),
    kind,
    public_key_hash: key.publicKeyHash,
    public_pem: key.publicPem,
    created: new Date(),
  };
  await ctx.db.tx((q) => store.insertWalletAKey(q, row, replace));
}

/** What a merchant needs to get the provider's payment processing certificate for the project's key. */
export async function paymentProcessing(ctx: Ctx, project: ProjectRow) {
  const row = await keyRow(ctx, project, 'processing');
  return { merchant_identifier: merchantIdentifierOf(project.id), public_key: row.public_pem, public_key_hash: row.public_key_hash! };
}

/** Imports the project's payment processing private key (PEM, EC P-256), retiring the previous one. */
export async function importProcessingKey(ctx: Ctx, project: ProjectRow, input: { private_key: string }) {
  let key;
  try {
    key = createPrivateKey(input.private_key);
  } catch {
    throw invalid('private_key', 'private_key must be a PEM private key');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
    throw invalid('private_key', 'private_key must be an EC P-256 key');
  await insertKey(ctx, project, 'processing', processingKeyOf(key.export({ format: 'pem', type: 'pkcs8' }).toString()), true);
  return paymentProcessing(ctx, project);
}

/** A test project's sandbox chain: leaf, intermediate and root certificates (PEM). */
async function sandboxChain(ctx: Ctx, project: ProjectRow) {
  if (project.mode !== 'test') throw new DomainError('Forbidden', 'the sandbox wallet is available to test projects only');
  const row = await keyRow(ctx, project, 'sandbox_signer');
  const [leaf, intermediate, root] = certificatesIn(row.public_pem);
  if (!leaf || !intermediate || !root) throw new DomainError('ServerError', 'the sandbox wallet-a chain of this project is unreadable');
  return { row, leaf, intermediate, root };
}

// ---- trusted roots --------------------------------------------------------------------

const caCache = new Map<string, { mtimeMs: number; certs: X509Certificate[] }>();

/** The certificates of a PEM bundle, re-read when the file changes. */
function readCaFile(path: string | undefined): X509Certificate[] {
  if (!path) return [];
  try {
    const { mtimeMs } = statSync(path);
    const hit = caCache.get(path);
    if (hit?.mtimeMs === mtimeMs) return hit.certs;
    const certs = certificatesIn(readFileSync(path, 'utf8')).map((pem) => new X509Certificate(pem));
    caCache.set(path, { mtimeMs, certs });
    return certs;
  } catch (err) {
    throw Object.assign(new DomainError('ServerError', 'the wallet-a-pay root certificates file cannot be read'), { cause: err });
  }
}

/** Live projects trust the provider's roots; test projects also the test roots and their own sandbox root. */
async function trustedRoots(ctx: Ctx, project: ProjectRow): Promise<X509Certificate[]> {
  const roots = readCaFile(ctx.config.walletA.rootCaFile);
  if (project.mode !== 'test') return roots;
  const { root } = await sandboxChain(ctx, project);
  return [...roots, ...readCaFile(ctx.config.walletA.testRootCaFile), new X509Certificate(root)];
}

// ---- the pay step ---------------------------------------------------------------------

export interface WalletAPayInput extends BrowserInfo {
  /** the wallet's payment token (`{paymentData, paymentMethod, transactionIdentifier}`) or its paymentData */
  paymentToken: unknown;
  setupToken: string;
}

const alreadyUsed = () =>
  new TokenRefused('token_already_used', 'paymentToken refused: this token (header.transactionId) has already been used', TOKEN_FIELD);

/** Verifies and decrypts a token for the transaction: signature chain, key, amount and currency, one use. */
async function openFor(ctx: Ctx, project: ProjectRow, txn: TransactionRow, token: unknown): Promise<WalletAPayment> {
  const roots = await trustedRoots(ctx, project);
  if (!roots.length)
    throw new DomainError(
      'ServerError',
      'no wallet-a-pay root certificates are configured (WALLET_A_ROOT_CA_FILE)',
      undefined,
      'unavailable',
    );
  const row = await keyRow(ctx, project, 'processing');
  const privateKey = await openKey(ctx, row);
  let payment: WalletAPayment;
  try {
    payment = openPaymentToken(token, {
      roots,
      keys: [{ privateKey, publicKeyHash: row.public_key_hash! }],
      merchantIdentifier: merchantIdentifierOf(project.id),
      now: tokenClock(project),
    });
  } catch (err) {
    if (!(err instanceof WalletATokenError)) throw err;
    throw new TokenRefused(err.code, `paymentToken refused: ${err.message}`, TOKEN_FIELD);
  }
  if (payment.amount !== txn.amount || payment.currencyNumeric !== currencyNumeric(txn.currency)) {
    throw new TokenRefused(
      'amount_mismatch',
      `paymentToken refused: it pays ${payment.amount} in currency ${payment.currencyNumeric}, the transaction is ${txn.amount} ${txn.currency}`,
      TOKEN_FIELD,
    );
  }
  if (await store.walletATokenSeen(ctx.db, project.id, payment.tokenId)) {
    throw alreadyUsed();
  }
  return payment;
}

/**
 * POST /pay/{order_id}/select-payment-method/wallet-a-pay/{transaction_id}/: the token is
 * verified and decrypted, its card vaulted against the transaction's one-use setupToken, and
 * authorized with the token's cryptogram (3-D Secure done on the device: liability shift).
 * Nothing is stored unless every check passes.
 */
export async function payWithWalletA(
  ctx: Ctx,
  orderId: OrderId,
  transactionId: TransactionId,
  input: WalletAPayInput,
): Promise<WalletPayResult> {
  const { txn, project } = await walletTransactionOf(ctx, orderId, transactionId, WALLET_A);
  return payToken(ctx, project, txn, input);
}

/** The pay step once the transaction and its project are known (the hosted page has them already). */
async function payToken(ctx: Ctx, project: ProjectRow, txn: TransactionRow, input: WalletAPayInput): Promise<WalletPayResult> {
  if (txn.setup_token !== input.setupToken) throw invalid('setupToken', `setupToken does not belong to transaction ${txn.id}`);
  const payment = await openFor(ctx, project, txn, input.paymentToken);
  let vaulted;
  try {
    vaulted = await storeCard(ctx, { pan: payment.pan, expiry: payment.expiry, setup_token: input.setupToken }, { transactionId: txn.id });
  } catch (err) {
    throw renamed(err, TOKEN_FIELD);
  }
  const first = await store.insertWalletAToken(ctx.db, {
    vault_token: vaulted.vault_token,
    project_id: project.id,
    transaction_id: txn.id,
    token_id: payment.tokenId,
    created: nowFor(project),
  });
  // a request racing with the same token got there first: this one must not pay too
  if (!first) throw alreadyUsed();
  const { paymentToken: _token, setupToken: _setup, ...browser } = input;
  return payVaulted(ctx, project, txn, {
    ...browser,
    vaultToken: vaulted.vault_token,
    cryptogram: payment.cryptogram,
    eciIndicator: payment.eci,
  });
}

/**
 * Pays from the hosted page with the device's token (or the sandbox's), as a merchant's server
 * would. `billing`: the address the wallet handed over, stored on the order first.
 */
export async function payOnPageWithWalletA(
  ctx: Ctx,
  c: Checkout,
  transactionId: TransactionId | undefined,
  paymentToken: unknown,
  browser: BrowserInfo = {},
  billing?: Billing,
) {
  const txn = await walletTransaction(ctx, c, transactionId, WALLET_A, billing);
  return { transaction_id: txn.id, ...(await payToken(ctx, c.project, txn, { ...browser, paymentToken, setupToken: txn.setup_token! })) };
}

/** A token as the wallet would make it for a test card, for the transaction's amount, signed by the project's sandbox chain. */
export async function sandboxWalletAToken(
  ctx: Ctx,
  project: ProjectRow,
  txn: Pick<TransactionRow, 'amount' | 'currency'>,
  card: { pan: string; brand: string },
) {
  const chain = await sandboxChain(ctx, project);
  const signer: Signer = { leaf: chain.leaf, intermediate: chain.intermediate, privateKey: await openKey(ctx, chain.row) };
  const processing = await keyRow(ctx, project, 'processing');
  const now = tokenClock(project);
  const expires = `${String(now.getUTCFullYear() + 3).slice(2)}1231`;
  const payload = {
    applicationPrimaryAccountNumber: card.pan,
    applicationExpirationDate: expires,
    currencyCode: currencyNumeric(txn.currency),
    transactionAmount: txn.amount,
    deviceManufacturerIdentifier: '040010030273',
    paymentDataType: '3DSecure',
    paymentData: { onlinePaymentCryptogram: randomBytes(20).toString('base64'), eciIndicator: eciFor(card.brand, 'Y') },
  };
  const paymentData = sealPaymentToken(payload, {
    signer,
    recipient: processing.public_pem,
    merchantIdentifier: merchantIdentifierOf(project.id),
    signingTime: now,
  });
  return {
    paymentData,
    paymentMethod: { displayName: `${card.brand} ${card.pan.slice(-4)}`, network: card.brand, type: 'debit' },
    transactionIdentifier: paymentData.header.transactionId.toUpperCase(),
  };
}
