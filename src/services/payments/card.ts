import type { Queryable } from '../../store/db/db.ts';
import { isUuid, type OrderId, type TransactionId } from '../../domain/ids.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { nowFor, type Ctx, type OrderStatusHook } from '../platform/context.ts';
import { dataKeyFor } from '../platform/crypto-envelope.ts';
import { cvcSealed, openCard, storeCvc } from '../vault/cards.ts';
import {
  cvcOfOrderPart,
  deleteCvcOfOrder,
  findCardAuth,
  findVaultCard,
  insertCardAuth,
  type VaultCardRow,
} from '../../store/vault/cards.ts';
import { canPlanMove, moveTransaction, planMove } from './transitions.ts';
import { startView } from '../../store/payments/card-flow.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { authorizeStep, type Step, type ThreeDsView } from './authorization.ts';
export type { Step, ThreeDsView, ThreeDsVisit } from './authorization.ts';
import { ApiError, invalid, notFound } from '../../domain/errors.ts';
import { isFinalOrder } from '../../domain/status.ts';
import type { ThreeDsResult } from '../../acquirer/connector.ts';
import { connectorFor, operationRef } from './connectors.ts';
import type { Config } from '../../config.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { SEALED, sealHolderName } from '../vault/holder-names.ts';

/**
 * Card payments after the vault (the authorization itself: authorization.ts): authenticate (3-D Secure), authorize through the project's
 * connector, and where the customer goes afterwards.
 *
 *   authenticate   new -> pending      3-D Secure decided, CVC sealed, redirect_url answered
 *   3DS page       pending -> accepted | declined | error | processing   (authorization)
 *   late_decline   processing -> declined                               (job, inquire)
 */

export interface StartInput {
  vault_token: string;
  cvc: string;
}

/** How a payment method starts card authentication (the hosted form and API with a card; wallets with a device token). */
export interface AuthenticationStart {
  /** the stored card, and the input field that named it (for errors) */
  vaultToken: string;
  field: string;
  /** the payment method the transaction must have, when the caller has not checked it */
  method?: string;
  /** the event source of the move to pending (default set_status) */
  source?: string;
  /** 3-D Secure of the card: the connector's, or the device's */
  decide(card: VaultCardRow, txn: TransactionRow, now: Date): Promise<ThreeDsResult>;
  /** what else the started card keeps (the hosted form: its sealed CVC); details to show */
  keep?(q: Queryable, card: VaultCardRow): Promise<Record<string, unknown>>;
}

/**
 * Starts card authentication, once for cards and wallets alike, in the caller's database
 * transaction: the transaction (locked) must be new and unexpired and the card stored for it;
 * 3-D Secure is decided, its row written, and the transaction moves new -> pending.
 */
export async function startAuthentication(
  ctx: Ctx,
  q: Queryable,
  project: ProjectRow,
  orderId: OrderId,
  transactionId: TransactionId,
  start: AuthenticationStart,
): Promise<ThreeDsResult> {
  const txn = await orders.findTransaction(q, project.id, orderId, transactionId, true);
  const now = nowFor(project);
  checkStart(txn, start, now);
  const row = await findVaultCard(q, project.id, start.vaultToken, true);
  checkCard(txn, row, start);
  const three = await start.decide(row, txn, now);
  const shown = (await start.keep?.(q, row)) ?? {};
  await insertCardAuth(
    q,
    { transaction_id: txn.id, project_id: project.id, vault_token: row.id, trans_status: three.trans_status, eci: three.eci ?? null },
    now,
  );
  const details: Record<string, unknown> = {
    ...txn.details,
    truncated_pan: row.truncated_pan,
    card_expiry: row.expiry,
    ...shown,
    vault_token: row.id,
  };
  if (three.trans_status !== 'C') details.liability_shift = three.liability_shift;
  await moveTransaction(ctx, q, txn, 'pending', now, {
    ...(start.source ? { source: start.source } : {}),
    patch: { payment_method_brand: row.brand, details },
  });
  return three;
}

/** The rules of starting: the transaction exists, has the method, is new and unexpired. */
function checkStart(txn: TransactionRow | undefined, start: Pick<AuthenticationStart, 'method'>, now: Date): asserts txn is TransactionRow {
  if (!txn) throw notFound('transaction');
  if (start.method && txn.payment_method !== start.method)
    throw invalid('transaction_id', `a ${txn.payment_method} transaction is not authenticated with a card`);
  if (txn.status !== 'new') throw new ApiError('TransactionAlreadyStarted', `transaction already started: it is ${txn.status}`);
  if (txn.expires_at && now >= new Date(txn.expires_at)) throw new ApiError('TransactionAlreadyStarted', 'transaction has expired');
}

/** ... and the card was stored for it. */
function checkCard(
  txn: TransactionRow,
  row: VaultCardRow | undefined,
  start: Pick<AuthenticationStart, 'field'>,
): asserts row is VaultCardRow {
  if (!row || row.transaction_id !== txn.id) throw invalid(start.field, `${start.field} is not a card stored for this transaction`);
}

/** The simulated 3-D Secure page of a transaction, on the API host. */
export const threeDsUrl = (config: Config, transactionId: TransactionId) => `${config.publicBaseUrl}/pay/3ds/${transactionId}/`;
const resultUrl = (config: Config, orderId: OrderId) => `${config.publicBaseUrl}/pay/${orderId}/result/`;

const FAILED = new Set(['cancelled', 'expired', 'error']);

/**
 * Where the customer goes when the payment is over: failure_url (else return_url) for
 * cancelled, expired and error orders, return_url otherwise, with order_id and project_id
 * appended to the URL's own query. Without a URL, the service's own result page.
 */
export function returnUrlFor(config: Config, order: Pick<OrderRow, 'id' | 'project_id' | 'status' | 'body'>): string {
  const b = order.body ?? {};
  const target: string | undefined = FAILED.has(order.status) ? (b.failure_url ?? b.return_url) : b.return_url;
  if (!target) return resultUrl(config, order.id);
  const url = new URL(target);
  const extra = `order_id=${encodeURIComponent(order.id)}&project_id=${encodeURIComponent(order.project_id)}`;
  url.search = url.search.length > 1 ? `${url.search}&${extra}` : `?${extra}`;
  return url.toString();
}

/** 3 digits; 4 only for American Express (the hosted form; the API's cvc field takes 3, docs/design.md). */
const CVC = /^[0-9]{3,4}$/;

/** POST /v1/orders/{order_id}/transactions/{transaction_id}/authenticate/ */
export function authenticate(ctx: Ctx, project: ProjectRow, orderId: OrderId, transactionId: TransactionId, input: StartInput) {
  return start(ctx, project, orderId, transactionId, input);
}

/** For the hosted card form: the same start, bound to the transaction instead of an API key. */
export async function startCardPayment(ctx: Ctx, transactionId: TransactionId, input: StartInput) {
  const txn = isUuid(transactionId) ? await orders.transactionById(ctx.db, transactionId) : undefined;
  const project = txn && (await findProject(ctx.db, txn.project_id));
  if (!txn || !project) throw notFound('transaction');
  return start(ctx, project, txn.order_id, txn.id, input);
}

async function start(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  transactionId: TransactionId,
  input: StartInput,
): Promise<{ redirect_url: string }> {
  if (typeof input.vault_token !== 'string' || !isUuid(input.vault_token)) throw invalid('vault_token', 'vault_token must be a uuid');
  if (typeof input.cvc !== 'string' || !CVC.test(input.cvc)) throw invalid('cvc', 'cvc must be 3 digits');
  const connector = connectorFor(ctx, project);
  const dk = await dataKeyFor(ctx, project.id);
  const card: AuthenticationStart = {
    vaultToken: input.vault_token,
    field: 'vault_token',
    method: 'credit-card',
    decide: (row, txn, now) => {
      if (input.cvc.length === 4 && row.brand !== 'amex') throw invalid('cvc', 'cvc must be 3 digits');
      return connector.authenticate3ds({ ...refOf(txn, now), card: openCard(dk, row) });
    },
    async keep(q, row) {
      await storeCvc(q, dk, row, input.cvc);
      const name = openCard(dk, row).name;
      return name !== undefined ? { [SEALED]: sealHolderName(dk, name) } : {};
    },
  };
  // Two round trips: one read, and one statement that writes the start only while the
  // transaction is still new. An order of several transactions, or one whose status hooks need
  // more than was read, takes the general path: one database transaction that locks the rows.
  const view = await startView(ctx.db, project.id, orderId, transactionId, input.vault_token);
  const now = nowFor(project);
  checkStart(view?.txn, card, now);
  // decided first, so that 3-D Secure is asked once whichever path writes
  if (view!.statuses.length === 1 && canPlanMove(ctx, view!.txn, view!, 'pending', now)) {
    const { txn, order, statuses } = view!;
    checkCard(txn, view!.card, card);
    const row = view!.card!;
    const three = await card.decide(row, txn, now);
    const w = new WriteSet();
    w.guard('transactions', txn.id, {}, { status: 'new' });
    w.update('vault_cards', row.id, { cvc_ct: cvcSealed(dk, row, input.cvc) });
    const name = openCard(dk, row).name;
    w.insert('card_authentications', {
      transaction_id: txn.id,
      project_id: project.id,
      vault_token: row.id,
      trans_status: three.trans_status,
      eci: three.eci ?? null,
      created: now,
      modified: now,
    });
    const details: Record<string, unknown> = {
      ...txn.details,
      truncated_pan: row.truncated_pan,
      card_expiry: row.expiry,
      ...(name !== undefined ? { [SEALED]: sealHolderName(dk, name) } : {}),
      vault_token: row.id,
    };
    if (three.trans_status !== 'C') details.liability_shift = three.liability_shift;
    const planned = planMove(ctx, w, txn, { order, statuses, project: view!.project }, 'pending', now, {
      patch: { payment_method_brand: row.brand, details },
    });
    if (planned === 'planned') {
      if (await w.run(ctx.db)) return { redirect_url: threeDsUrl(ctx.config, transactionId) };
      // another request started (or expired, or cancelled) it since the read
      checkStart(await orders.findTransaction(ctx.db, project.id, orderId, transactionId), card, now);
    }
  }
  await ctx.db.tx((q) => startAuthentication(ctx, q, project, orderId, transactionId, card));
  return { redirect_url: threeDsUrl(ctx.config, transactionId) };
}

const refOf = (txn: TransactionRow, now: Date) => operationRef(txn, now);

/** What the 3-D Secure page needs to know about a transaction (no lock). */
export async function loadThreeDs(ctx: Ctx, transactionId: TransactionId): Promise<ThreeDsView | undefined> {
  if (!isUuid(transactionId)) return undefined;
  const txn = await orders.transactionById(ctx.db, transactionId);
  if (!txn) return undefined;
  const [order, project, auth] = await Promise.all([
    orders.findOrder(ctx.db, txn.project_id, txn.order_id),
    findProject(ctx.db, txn.project_id),
    findCardAuth(ctx.db, txn.project_id, txn.id),
  ]);
  if (!order || !project) return undefined;
  return { txn, order, project, auth };
}

/** GET of the 3-D Secure page: what it shows, and for a frictionless transaction still pending, the authorization (authorization.ts). */
export const visitThreeDs = (ctx: Ctx, transactionId: TransactionId) => authorizeStep(ctx, transactionId, { kind: 'frictionless' });

/** Finishes 3-D Secure (a challenge's answer, a cancel) and authorizes, once. Returns the order as it is afterwards. */
export async function completeAuthentication(ctx: Ctx, target: string | ThreeDsView, step: Step): Promise<OrderRow | undefined> {
  return (await authorizeStep(ctx, typeof target === 'string' ? target : target.txn.id, step))?.order;
}

/**
 * Order status hook: an order that ends while a CVC is still sealed (expired during the challenge,
 * cancelled by the merchant) loses it in the same database transaction.
 */
export const dropSealedCvc: OrderStatusHook = async (q, order, _from, to) => {
  if (!isFinalOrder(to)) return;
  await deleteCvcOfOrder(q, order.project_id, order.id);
};
dropSealedCvc.inline = (w, order, _from, to) => {
  if (isFinalOrder(to)) w.add(cvcOfOrderPart(order.project_id, order.id));
  return true;
};
