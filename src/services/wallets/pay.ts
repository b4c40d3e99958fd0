import { randomBytes, randomUUID } from 'node:crypto';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { nowFor, type Ctx } from '../platform/context.ts';
import { dataKeyFor } from '../platform/crypto-envelope.ts';
import { openCard } from '../vault/cards.ts';
import { completeAuthentication, returnUrlFor, threeDsUrl } from '../payments/card.ts';
import { startAuthentication } from '../payments/attempts/three-ds.ts';
import { checkCryptogram, recipientKeys, sandboxRootKey, tokenClock, tokenize } from './keys.ts';
import { outcomeOf, transactionOf, type Checkout } from '../payments/checkout.ts';
import { startTransaction } from '../payments/orders.ts';
import { sealToken } from '../../wallets/wallet-b-token.ts';
import type { ThreeDsResult } from '../../acquirer/connector.ts';
import { authenticatorFor, connectorFor, operationRef } from '../payments/connectors.ts';
import { eciFor } from '../../domain/card.ts';
import { DomainError, invalid, notFound } from '../../domain/errors.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { ADDRESS_PATTERN, customerProblem, missingBilling, NAME_PATTERN, POSTAL_CODE_PATTERN, isCountry } from '../../domain/customer.ts';
import { settingsOf } from '../../domain/project.ts';
import type { OrderId, TransactionId } from '../../domain/ids.ts';
import { WALLET_B, type WalletMethod } from '../../domain/payment-methods.ts';

/**
 * The pay step of a wallet transaction once its card is vaulted: for wallet-b-pay (POST
 * /pay/{order_id}/select-payment-method/wallet-b-pay/{transaction_id}/) by the token service or
 * the merchant's own decryption, for wallet-a-pay by wallet-a-pay.ts from the token:
 *   cryptogram    the wallet authenticated the customer on the device: authorized at once,
 *                 with liability shift, through the same authorization as cards
 *   no cryptogram PAN_ONLY: 3-D Secure like a card; the customer goes to the 3-D Secure page
 * Both run on the card tables (card_authentications) so the 3-D Secure pages, the late
 * decline and the CVC-free authorization of payments.ts apply unchanged.
 */

export interface BrowserInfo {
  browser_info_screen_width?: number;
  browser_info_screen_height?: number;
  browser_info_color_depth?: number;
  browser_info_user_agent?: string;
  browser_info_time_zone_offset?: number;
  browser_info_language?: string;
  browser_info_java_enabled?: boolean;
}

export interface WalletPayInput extends BrowserInfo {
  vaultToken: string;
  cryptogram?: string;
  eciIndicator?: string;
}

export interface WalletPayResult {
  is_successful: boolean;
  redirect_url: string;
  /** '' when authorized; authentication_required when the customer must pass 3-D Secure; else why it failed */
  reason: string;
}

const AUTHENTICATION_REQUIRED = 'authentication_required';

/** Starts the transaction: decides its 3-D Secure (the device's, or the issuer's) and moves it to pending. */
async function begin(ctx: Ctx, project: ProjectRow, txn: TransactionRow, input: WalletPayInput): Promise<ThreeDsResult> {
  // a live project with no acquirer is refused before anything is recorded
  connectorFor(ctx, project);
  const authenticator = authenticatorFor(ctx, project);
  const dk = await dataKeyFor(ctx, project.id);
  const cryptogram = input.cryptogram ?? '';
  if (cryptogram) await checkCryptogram(ctx, project.id, input.vaultToken, cryptogram);
  return startAuthentication(ctx, project, txn.order_id, txn.id, {
    vaultToken: input.vaultToken,
    field: 'vaultToken',
    source: 'wallet',
    // The device authenticated the customer: a cryptogram stands for a successful 3-D Secure (Y).
    device: (card) =>
      cryptogram ? { trans_status: 'Y', eci: input.eciIndicator || eciFor(card.brand, 'Y'), liability_shift: true } : undefined,
    ask: (card, started, now, operationId) =>
      authenticator.authenticate3ds({ ...operationRef(started, now, operationId), card: openCard(dk, card) }),
  });
}

/** The wallet transaction a pay step names, of the order named and paid with `method`. */
export async function walletTransactionOf(ctx: Ctx, orderId: OrderId, transactionId: TransactionId, method: WalletMethod) {
  const txn = await orders.transactionById(ctx.db, transactionId);
  if (!txn || txn.order_id !== orderId) throw notFound('transaction');
  const project = await findProject(ctx.db, txn.project_id);
  if (!project) throw notFound('transaction');
  if (txn.payment_method !== method) throw invalid('transaction_id', `a ${txn.payment_method} transaction is not paid with ${method}`);
  return { txn, project };
}

/**
 * Pays a wallet transaction with its vaulted card: with a cryptogram authorized at once, without
 * one (PAN_ONLY) sent to 3-D Secure.
 */
export async function payVaulted(ctx: Ctx, project: ProjectRow, txn: TransactionRow, input: WalletPayInput): Promise<WalletPayResult> {
  const cryptogram = input.cryptogram ?? '';
  if (!cryptogram && input.eciIndicator) throw invalid('eciIndicator', 'eciIndicator must be empty when cryptogram is empty (PAN_ONLY)');
  await begin(ctx, project, txn, input);
  if (!cryptogram) return { is_successful: true, redirect_url: threeDsUrl(ctx.config, txn.id), reason: AUTHENTICATION_REQUIRED };
  const order = await completeAuthentication(ctx, txn.id, { kind: 'frictionless' });
  const done = await orders.transactionById(ctx.db, txn.id);
  if (!order || !done) throw notFound('transaction');
  const accepted = done.status === 'accepted' || done.status === 'completed';
  return { is_successful: accepted, redirect_url: returnUrlFor(ctx.config, order), reason: accepted ? '' : (done.reason ?? done.status) };
}

/** Pays a wallet-b-pay transaction with a vaulted card. Bound to the order and transaction ids and the vault token. */
export async function payWithWalletB(
  ctx: Ctx,
  orderId: OrderId,
  transactionId: TransactionId,
  input: WalletPayInput,
): Promise<WalletPayResult> {
  const { txn, project } = await walletTransactionOf(ctx, orderId, transactionId, WALLET_B);
  return payVaulted(ctx, project, txn, input);
}

// ---- the billing address a wallet hands over --------------------------------------------

/** The billing fields a wallet sheet collects (address_type is always billing). */
export const BILLING_INPUT = ['first_name', 'last_name', 'address', 'postal_code', 'city', 'country', 'state'] as const;
export type BillingField = (typeof BILLING_INPUT)[number];
export type Billing = Partial<Record<BillingField, string>>;

/**
 * The billing fields a wallet payment of this order still needs: none unless the project
 * requires a billing address for wallets (wallet_billing_required) and the order lacks one.
 * Real wallet sheets hand the address over with the token; the sandbox sheet asks for it.
 */
export function billingNeeded(c: Checkout): BillingField[] {
  if (!settingsOf(c.project.settings).wallet_billing_required) return [];
  // asked whole, so the address is one person's (state only counts where the country has states)
  return missingBilling(c.order.body?.customer).length ? [...BILLING_INPUT] : [];
}

const BILLING_RULES: Record<BillingField, { max: number; pattern: RegExp }> = {
  first_name: { max: 120, pattern: new RegExp(NAME_PATTERN, 'u') },
  last_name: { max: 120, pattern: new RegExp(NAME_PATTERN, 'u') },
  address: { max: 120, pattern: new RegExp(ADDRESS_PATTERN, 'u') },
  postal_code: { max: 10, pattern: new RegExp(POSTAL_CODE_PATTERN, 'u') },
  city: { max: 120, pattern: new RegExp(ADDRESS_PATTERN, 'u') },
  country: { max: 2, pattern: /^[A-Z]{2}$/ },
  state: { max: 2, pattern: /^[A-Z]{2}$/ },
};

/**
 * The order's own rules (the Customer schema's and customerProblem) for the fields a sheet
 * asked for. Returns an error code per field (billing_required, billing_format, state_required,
 * state_unknown) or the billing to store.
 */
export function checkBilling(
  fields: readonly BillingField[],
  body: Record<string, unknown>,
): { billing?: Billing; errors: Partial<Record<BillingField, string>>; keep: Billing } {
  const errors: Partial<Record<BillingField, string>> = {};
  const billing: Billing = {};
  for (const f of fields) {
    let v = (typeof body[f] === 'string' ? (body[f] as string) : '').trim().replace(/\s+/g, ' ');
    if (f === 'postal_code' || f === 'country' || f === 'state') v = v.toUpperCase();
    if (v) billing[f] = v;
    const rule = BILLING_RULES[f];
    if (!v) {
      if (f !== 'state') errors[f] = 'billing_required';
    } else if (v.length > rule.max || !rule.pattern.test(v) || (f === 'country' && !isCountry(v))) errors[f] = 'billing_format';
  }
  if (!errors.country && !errors.state && billing.country) {
    const p = customerProblem({ country: billing.country, state: billing.state });
    if (p) errors.state = billing.state ? 'state_unknown' : 'state_required';
    else if (billing.state && !p) {
      // a state only where the country has states
      const withStates = customerProblem({ country: billing.country });
      if (!withStates) delete billing.state;
    }
  }
  const keep = Object.fromEntries(Object.entries(billing).map(([k, v]) => [k, v.slice(0, 120)])) as Billing;
  return Object.keys(errors).length ? { errors, keep } : { billing, errors, keep };
}

/**
 * Stores the billing address a wallet handed over on the order's customer, before its
 * transaction starts: never on an order whose transaction a second tap has started meanwhile
 * (the order's lock orders this against startTransaction).
 */
async function addBilling(ctx: Ctx, c: Checkout, billing: Billing) {
  await ctx.db.tx(async (q) => {
    const order = await orders.findOrder(q, c.project.id, c.order.id, true);
    if (!order) throw notFound('order');
    if ((await orders.transactionsOf(q, c.project.id, [order.id])).length)
      throw new DomainError('TransactionAlreadyStarted', 'this order already has a transaction');
    const customer = { ...(order.body?.customer ?? {}), ...billing, address_type: 'billing' as const };
    const body = { ...order.body, customer };
    await orders.setOrderCustomer(q, order.id, { body, modified: nowFor(c.project) });
    c.order.body = body;
  });
}

/** The wallet transaction a hosted page pays: the one named, or one started now for the order (with the billing the wallet handed over). */
export async function walletTransaction(
  ctx: Ctx,
  c: Checkout,
  transactionId: TransactionId | undefined,
  method: WalletMethod,
  billing?: Billing,
): Promise<TransactionRow> {
  const { outcome } = outcomeOf(c);
  if (outcome !== 'open') throw new DomainError('TransactionAlreadyStarted', `this order is ${outcome}`);
  if (transactionId) {
    const txn = transactionOf(c, transactionId);
    if (!txn) throw notFound('transaction');
    if (txn.payment_method !== method || txn.status !== 'new' || txn.setup_token_used)
      throw new DomainError('TransactionAlreadyStarted', 'this transaction has already started');
    return txn;
  }
  if (!c.methods.includes(method)) throw new DomainError('Forbidden', `${method} is not offered for this order`);
  if (c.transactions.length) throw new DomainError('TransactionAlreadyStarted', 'this order already has a transaction');
  if (billing) await addBilling(ctx, c, billing);
  const view = await startTransaction(ctx, c.project, c.order.id, { payment_method: method });
  const txn = await orders.transactionById(ctx.db, view.transactions[0].id);
  if (!txn) throw notFound('transaction');
  c.transactions.push(txn);
  return txn;
}

/**
 * Pays from the hosted page with a token the wallet gave: the token service, then the pay step,
 * as a merchant would. `billing`: the address the wallet handed over, stored on the order first.
 */
export async function payOnPage(
  ctx: Ctx,
  c: Checkout,
  transactionId: TransactionId | undefined,
  walletBPayMessage: string,
  browser: BrowserInfo = {},
  billing?: Billing,
) {
  const txn = await walletTransaction(ctx, c, transactionId, WALLET_B, billing);
  const test = c.project.mode === 'test';
  const token = await tokenize(ctx, { walletBPayMessage, setupToken: txn.setup_token!, transactionId: txn.id }, { test });
  return { transaction_id: txn.id, ...(await payWithWalletB(ctx, txn.order_id, txn.id, { ...token, ...browser })) };
}

export type SandboxAuthMethod = 'CRYPTOGRAM_3DS' | 'PAN_ONLY';

/**
 * A token as the wallet would make it for a test card, signed with the project's sandbox root
 * key and encrypted to its recipient key (ECv2), valid for an hour of the token clock.
 */
export async function sandboxToken(
  ctx: Ctx,
  project: ProjectRow,
  card: { pan: string; brand: string; authMethod: SandboxAuthMethod },
): Promise<string> {
  const root = await sandboxRootKey(ctx, project);
  const recipient = await recipientKeys(ctx, project);
  const now = tokenClock(project);
  const details: Record<string, unknown> = {
    pan: card.pan,
    expirationMonth: 12,
    expirationYear: nowFor(project).getUTCFullYear() + 3,
    authMethod: card.authMethod,
  };
  if (card.authMethod === 'CRYPTOGRAM_3DS')
    Object.assign(details, { cryptogram: randomBytes(20).toString('base64'), eciIndicator: eciFor(card.brand, 'Y') });
  const payload = {
    messageExpiration: String(now.getTime() + 60 * 60 * 1000),
    messageId: `sandbox-${randomUUID()}`,
    paymentMethod: 'CARD',
    paymentMethodDetails: details,
  };
  return sealToken(payload, {
    protocolVersion: 'ECv2',
    rootPrivateKey: root.privateKey,
    recipientId: recipient.recipientId,
    recipientPublicKey: recipient.publicKey,
    now,
  });
}
