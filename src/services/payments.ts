import type { Queryable } from '../store/db.ts';
import * as orders from '../store/orders.ts';
import type { OrderRow, TransactionRow } from '../store/orders.ts';
import { findProject, type ProjectRow } from '../store/projects.ts';
import { nowFor } from './context.ts';
import type { KeyedCtx } from './crypto-envelope.ts';
import { dataKeyFor } from './crypto-envelope.ts';
import { deleteCvc, findVaultCard, openCard, storeCvc } from './vault.ts';
import { moveTransaction, orderStatusHooks } from './transitions.ts';
import { onAuthorized } from './money.ts';
import { schedule } from '../jobs/queue.ts';
import { ApiError, invalid, notFound } from '../domain/errors.ts';
import { isFinalOrder } from '../domain/status.ts';
import { liabilityShift, type TransStatus } from '../domain/card.ts';
import { authenticationFailed, connectorFor, type Outcome, type ThreeDsResult } from '../acquirer/connector.ts';
import type { Config } from '../config.ts';
import { SEALED, sealHolderName } from './holder-names.ts';

/**
 * Card payments after the vault: authenticate (3-D Secure), authorize through the project's
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

export interface CardAuthRow {
  transaction_id: string;
  project_id: string;
  vault_token: string;
  trans_status: TransStatus;
  eci: string | null;
  acquirer_reference: string | null;
}

/** The simulated 3-D Secure page of a transaction, on the API host. */
export const threeDsUrl = (config: Config, transactionId: string) => `${config.publicBaseUrl}/pay/3ds/${transactionId}/`;
export const resultUrl = (config: Config, orderId: string) => `${config.publicBaseUrl}/pay/${orderId}/result/`;

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

const CVC = /^[0-9]{3}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** POST /v1/orders/{order_id}/transactions/{transaction_id}/authenticate/ */
export function authenticate(ctx: KeyedCtx, project: ProjectRow, orderId: string, transactionId: string, input: StartInput) {
  return start(ctx, project, orderId, transactionId, input);
}

/** For the hosted card form: the same start, bound to the transaction instead of an API key. */
export async function startCardPayment(ctx: KeyedCtx, transactionId: string, input: StartInput) {
  const txn = UUID.test(transactionId) ? await orders.transactionById(ctx.db, transactionId) : undefined;
  const project = txn && (await findProject(ctx.db, txn.project_id));
  if (!txn || !project) throw notFound('transaction');
  return start(ctx, project, txn.order_id, txn.id, input);
}

async function start(ctx: KeyedCtx, project: ProjectRow, orderId: string, transactionId: string, input: StartInput): Promise<{ redirect_url: string }> {
  if (typeof input.vault_token !== 'string' || !UUID.test(input.vault_token)) throw invalid('vault_token', 'vault_token must be a uuid');
  if (typeof input.cvc !== 'string' || !CVC.test(input.cvc)) throw invalid('cvc', 'cvc must be 3 digits');
  const connector = connectorFor(project);
  const dk = await dataKeyFor(ctx, project.id);
  await ctx.db.tx(async (q) => {
    const txn = await orders.findTransaction(q, project.id, orderId, transactionId, true);
    if (!txn) throw notFound('transaction');
    if (txn.payment_method !== 'credit-card') throw invalid('transaction_id', `a ${txn.payment_method} transaction is not authenticated with a card`);
    if (txn.status !== 'new') throw new ApiError('TransactionAlreadyStarted', `transaction already started: it is ${txn.status}`);
    const now = nowFor(project);
    if (txn.expires_at && now >= new Date(txn.expires_at)) throw new ApiError('TransactionAlreadyStarted', 'transaction has expired');
    const row = await findVaultCard(q, project.id, input.vault_token, true);
    if (!row || row.transaction_id !== txn.id) throw invalid('vault_token', 'vault_token is not a card stored for this transaction');
    const card = openCard(dk, row);
    const three = await connector.authenticate3ds({ ...refOf(txn, now), card });
    await storeCvc(q, dk, row, input.cvc);
    await q.query(
      'INSERT INTO card_authentications (transaction_id, project_id, vault_token, trans_status, eci, created, modified) VALUES ($1, $2, $3, $4, $5, $6, $6)',
      [txn.id, project.id, row.id, three.trans_status, three.eci ?? null, now],
    );
    const details: Record<string, unknown> = {
      ...txn.details,
      truncated_pan: row.truncated_pan,
      card_expiry: row.expiry,
      ...(card.name !== undefined ? { [SEALED]: sealHolderName(dk, card.name) } : {}),
      vault_token: row.id,
    };
    if (three.trans_status !== 'C') details.liability_shift = three.liability_shift;
    await moveTransaction(q, txn, 'pending', now, { patch: { payment_method_brand: row.brand, details } });
  });
  return { redirect_url: threeDsUrl(ctx.config, transactionId) };
}

const refOf = (txn: TransactionRow, now: Date) => ({ project_id: txn.project_id, transaction_id: txn.id, amount: txn.amount, currency: txn.currency, now });

export interface ThreeDsView {
  txn: TransactionRow;
  order: OrderRow;
  project: ProjectRow;
  auth?: CardAuthRow;
}

/** What the 3-D Secure page needs to know about a transaction (no lock). */
export async function loadThreeDs(ctx: KeyedCtx, transactionId: string): Promise<ThreeDsView | undefined> {
  if (!UUID.test(transactionId)) return undefined;
  const txn = await orders.transactionById(ctx.db, transactionId);
  if (!txn) return undefined;
  const [order, project, auth] = await Promise.all([
    orders.findOrder(ctx.db, txn.project_id, txn.order_id),
    findProject(ctx.db, txn.project_id),
    findAuth(ctx.db, txn.project_id, txn.id),
  ]);
  if (!order || !project) return undefined;
  return { txn, order, project, auth };
}

const findAuth = async (q: Queryable, projectId: string, transactionId: string, lock = false) =>
  (await q.query<CardAuthRow>(`SELECT * FROM card_authentications WHERE project_id = $1 AND transaction_id = $2${lock ? ' FOR UPDATE' : ''}`, [projectId, transactionId]))[0];

/** Statuses of 3-D Secure after which the card may be authorized (U: not enrolled, no liability shift). */
const PROCEED = new Set<TransStatus>(['Y', 'A', 'U']);

export type Step = { kind: 'frictionless' } | { kind: 'challenge'; answer: string } | { kind: 'cancel' };

/**
 * Finishes 3-D Secure and authorizes, once: the row lock and the `pending` check make a
 * repeated visit or double submit a no-op. Returns the order as it is afterwards.
 */
export async function completeAuthentication(ctx: KeyedCtx, target: string | ThreeDsView, step: Step): Promise<OrderRow | undefined> {
  const view = typeof target === 'string' ? await loadThreeDs(ctx, target) : target;
  if (!view) return undefined;
  const { project } = view;
  const transactionId = view.txn.id;
  const connector = connectorFor(project);
  const dk = await dataKeyFor(ctx, project.id);
  return ctx.db.tx(async (q) => {
    const txn = await orders.transactionById(q, transactionId, true);
    const auth = txn && (await findAuth(q, project.id, txn.id, true));
    if (!txn || !auth || txn.status !== 'pending') return orders.findOrder(q, project.id, view.order.id);
    const now = nowFor(project);
    if (step.kind === 'cancel') {
      await deleteCvc(q, project.id, [txn.id]);
      await moveTransaction(q, txn, 'cancelled', now, { reason: 'cancelled by customer', source: 'customer' });
      return orders.findOrder(q, project.id, txn.order_id);
    }
    const row = (await findVaultCard(q, project.id, auth.vault_token))!;
    const card = openCard(dk, row);
    let three: ThreeDsResult = { trans_status: auth.trans_status, eci: auth.eci ?? undefined, liability_shift: liabilityShift(auth.trans_status) };
    if (three.trans_status === 'C') {
      if (step.kind !== 'challenge') return orders.findOrder(q, project.id, txn.order_id); // still waiting for the customer
      three = await connector.completeChallenge({ ...refOf(txn, now), card, answer: step.answer });
      await q.query('UPDATE card_authentications SET trans_status = $2, eci = $3, modified = $4 WHERE transaction_id = $1', [txn.id, three.trans_status, three.eci ?? null, now]);
    }
    const outcome = PROCEED.has(three.trans_status)
      ? await connector.authorize({ ...refOf(txn, now), card, three_ds: three, capture: !txn.capture_mode })
      : authenticationFailed(three.trans_status);
    // The CVC served this one authorization request.
    await deleteCvc(q, project.id, [txn.id]);
    await applyOutcome(ctx, q, project, txn, outcome, now, {
      details: { ...txn.details, liability_shift: three.liability_shift },
      three_d_secure: { trans_status: three.trans_status, ...(three.eci ? { eci: three.eci } : {}) },
    });
    return orders.findOrder(q, project.id, txn.order_id);
  });
}

/** Moves the transaction by the connector's answer, in the caller's database transaction. */
async function applyOutcome(
  ctx: { config: Config },
  q: Queryable,
  project: ProjectRow,
  txn: TransactionRow,
  outcome: Outcome,
  now: Date,
  extra: { details?: Record<string, unknown>; three_d_secure?: Record<string, unknown> } = {},
) {
  const outcomes = {
    ...(txn.outcomes ?? {}),
    ...(extra.three_d_secure ? { three_d_secure: extra.three_d_secure } : {}),
    processing: { status: outcome.status, response_code: outcome.response_code, response_code_description: outcome.response_code_description },
  };
  const patch: Partial<TransactionRow> = { outcomes, ...(extra.details ? { details: extra.details } : {}) };
  if (outcome.reference) await q.query('UPDATE card_authentications SET acquirer_reference = $2 WHERE transaction_id = $1', [txn.id, outcome.reference]);
  switch (outcome.status) {
    case 'accepted':
      if (await moveTransaction(q, txn, 'accepted', now, { reason: null, patch })) await onAuthorized(q, project, txn, now);
      return;
    case 'processing':
      // asked again and still in progress: keep waiting
      if (txn.status === 'processing') await orders.updateTransaction(q, txn.id, { ...patch, modified: now });
      else await moveTransaction(q, txn, 'processing', now, { patch });
      await schedule(q, { project_id: project.id, kind: 'late_decline', ref_id: txn.id, run_at: new Date(now.getTime() + ctx.config.lateDeclineMs) });
      return;
    default:
      await moveTransaction(q, txn, outcome.status, now, { reason: outcome.reason ?? outcome.status, patch });
  }
}

/** Job `late_decline`: the acquirer's later answer to an authorization that stayed processing. */
export async function lateDecline(ctx: { db: KeyedCtx['db']; config: Config }, transactionId: string) {
  const txn = await orders.transactionById(ctx.db, transactionId);
  const project = txn && (await findProject(ctx.db, txn.project_id));
  if (!txn || !project || txn.status !== 'processing') return;
  const connector = connectorFor(project);
  await ctx.db.tx(async (q) => {
    const locked = await orders.transactionById(q, transactionId, true);
    const auth = locked && (await findAuth(q, project.id, locked.id, true));
    if (!locked || locked.status !== 'processing' || !auth?.acquirer_reference) return;
    const now = nowFor(project);
    const outcome = await connector.inquire({ ...refOf(locked, now), reference: auth.acquirer_reference });
    await applyOutcome(ctx, q, project, locked, outcome, now);
  });
}

// An order that ends while a CVC is still sealed (expired during the challenge, cancelled by the
// merchant) loses it in the same database transaction.
orderStatusHooks.push(async (q, order, _from, to) => {
  if (!isFinalOrder(to)) return;
  await q.query(
    `UPDATE vault_cards SET cvc_ct = NULL WHERE project_id = $1 AND cvc_ct IS NOT NULL
       AND transaction_id IN (SELECT id FROM transactions WHERE project_id = $1 AND order_id = $2)`,
    [order.project_id, order.id],
  );
});
