import type { Queryable } from '../../store/db/db.ts';
import type { Ctx } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import * as ledger from '../../store/payments/ledger.ts';
import { captureLegs, figures, holdLegs, type Direction, type FeeRule, type Leg } from '../../domain/ledger.ts';
import { settingsOf } from '../../domain/project.ts';
import { addDuration } from '../../domain/duration.ts';
import { DomainError, notFound, type ErrorType } from '../../domain/errors.ts';
import type { TransactionStatus } from '../../domain/status.ts';
import { newEventRow, planOrderStatus } from './transitions.ts';
import { canMove, deriveOrderStatus } from '../../domain/status.ts';
import { addEvents, addJournal, addOrder, changeOrder, changeTransaction } from '../../store/payments/changes.ts';
import { dueNow, schedulePart } from '../../store/platform/jobs.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { SEALED, openHolderNames } from '../vault/holder-names.ts';
import { renderOrder } from './order-view.ts';
import { newId, type OrderId, type ProjectId } from '../../domain/ids.ts';
import type { EventRow, OrderKind, OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';

/*
 * What the money operations on a paid order share (captures.ts, refunds.ts, chargebacks.ts):
 * booking an authorization, locking the payment, asking the acquirer, creating the capture,
 * void, refund, chargeback or reversal order, and the ledger journal of each.
 */

/** A transaction whose money moves: TransactionRow, which now has authorized and capture_before (it lacked them). */
export type MoneyTransaction = TransactionRow;

/**
 * Books a successful authorization, gathered in `w` (store/db/writes.ts) with the move to
 * `accepted`; `txn` changes in memory as the row will:
 * - a sale is captured at once: fee and settlement figures, and its sale journal;
 * - a pre-authorization holds the amount (hold journal) and becomes capturable until
 *   `capture_before`: the end of its expiration_period (delayed, then captured by the
 *   `delayed_capture` job) or of the project's capture window (manual, then released by the
 *   `authorization_expiry` job). Its fee is charged on the capture order.
 */
export function planAuthorized(w: WriteSet, project: ProjectRow, txn: TransactionRow, now: Date) {
  if (txn.authorized_amount > 0) return; // booked already: a retried authorization must not book twice
  const sale = !txn.capture_mode;
  const settings = settingsOf(project.settings);
  const f = sale ? figures('credit', txn.amount, creditRule(project, txn.payment_method)) : { fee: 0, settlement: 0 };
  const captureBefore =
    txn.capture_mode === 'delayed'
      ? addDuration(now, txn.expiration_period)
      : txn.capture_mode === 'manual'
        ? addDuration(now, settings.capture_window)
        : null;
  const patch = {
    authorized_amount: txn.amount,
    captured_amount: sale ? txn.amount : 0,
    is_capturable: !sale,
    authorized: now,
    capture_before: captureBefore,
    ...figureColumns(txn.currency, f),
  };
  changeTransaction(w, txn.id, patch);
  Object.assign(txn, patch);
  planBook(w, txn, txn, now, sale ? captureLegs(txn.amount, f.fee, false) : holdLegs(txn.amount));
  const job = txn.capture_mode === 'delayed' ? 'delayed_capture' : txn.capture_mode === 'manual' ? 'authorization_expiry' : undefined;
  if (job) {
    w.add(schedulePart({ project_id: project.id, kind: job, ref_id: txn.id, run_at: captureBefore! }));
    if (dueNow(captureBefore!)) w.notifyJobs();
  }
  if (sale) planSettlement(w, project, now);
}

/** The fee rule of money received with a payment method; refunds, chargebacks and reversals have their own (default none). */
export function creditRule(project: ProjectRow, method: string | null): FeeRule | undefined {
  return (settingsOf(project.settings).fees as Record<string, FeeRule | undefined>)[method ?? ''];
}
export function debitRule(project: ProjectRow, kind: 'refund' | 'chargeback' | 'reversal'): FeeRule | undefined {
  return (settingsOf(project.settings).fees as Record<string, FeeRule | undefined>)[kind];
}

const figureColumns = (currency: string, f: { fee: number; settlement: number }) => ({
  fee_currency: currency,
  fee_amount: f.fee,
  settlement_currency: currency,
  settlement_amount: f.settlement,
});

/** Writes one journal for a movement of `txn`'s money that belongs to the original `payment`. */
export async function book(q: Queryable, txn: TransactionRow, payment: TransactionRow, now: Date, legs: Leg[]) {
  await ledger.insertJournal(q, journalHead(txn, payment, now), legs);
}

const journalHead = (txn: TransactionRow, payment: TransactionRow, now: Date): ledger.JournalHead => ({
  project_id: txn.project_id,
  order_id: txn.order_id,
  transaction_id: txn.id,
  payment_transaction_id: payment.id,
  currency: txn.currency,
  created: now,
});

const settlementJob = (project: ProjectRow, now: Date) => ({
  project_id: project.id,
  kind: 'settlement',
  ref_id: project.id,
  run_at: nextSettlementRun(now),
});

export const nextSettlementRun = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));

/** The original transaction, locked for the rest of the database transaction: every movement of its money queues here. */
async function lockPayment(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  txnId: string,
): Promise<{ order: OrderRow; txn: MoneyTransaction }> {
  const txn = (await orders.findTransaction(q, projectId, orderId, txnId, true)) as MoneyTransaction | undefined;
  if (!txn) throw notFound('transaction');
  const order = (await orders.findOrder(q, projectId, orderId))!;
  return { order, txn };
}

/** The authorized transaction of a payment order, locked. A capture order stands for its original. */
export async function lockOrderPayment(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  errorType: ErrorType,
): Promise<{ order: OrderRow; txn: MoneyTransaction }> {
  let order = await orders.findOrder(q, projectId, orderId);
  if (!order) throw notFound('order');
  if (order.kind === 'capture' && order.related_order_id) order = (await orders.findOrder(q, projectId, order.related_order_id))!;
  if (order.kind !== 'payment') throw new DomainError(errorType, `a ${order.kind} order has no money of its own to move`);
  const txns = await orders.transactionsOf(q, projectId, [order.id]);
  const authorized = txns.find((t) => t.authorized_amount > 0);
  if (!authorized) throw new DomainError(errorType, 'nothing has been captured on this order');
  return lockPayment(q, projectId, order.id, authorized.id);
}

export interface ChildSpec {
  kind: Exclude<OrderKind, 'payment'>;
  amount: number;
  direction: Direction;
  status: TransactionStatus;
  description?: string | null;
  flags?: string[];
  figures: { fee: number; settlement: number };
  source: string;
  body?: Record<string, unknown>;
  /** the acquirer's answer, shown as the transaction's outcomes */
  outcomes?: Record<string, unknown>;
}

/** The rows of a new child order and its transaction, as created (status new). */
function childRows(
  project: ProjectRow,
  parent: OrderRow,
  original: TransactionRow,
  spec: ChildSpec,
  now: Date,
): { order: OrderRow; txn: TransactionRow } {
  const b = parent.body ?? {};
  const order: OrderRow = {
    id: newId(),
    project_id: project.id,
    merchant_id: parent.merchant_id,
    kind: spec.kind,
    status: 'new',
    merchant_order_id: parent.merchant_order_id,
    description: spec.description ?? parent.description,
    currency: parent.currency,
    amount: spec.amount,
    flags: [...(parent.flags.includes('is-test') ? ['is-test'] : []), ...(spec.flags ?? [])],
    customer_email: parent.customer_email,
    merchant_customer_id: parent.merchant_customer_id,
    related_order_id: parent.id,
    payment_link_id: null,
    refunded_amount: 0,
    body: { customer: b.customer, merchant_name: b.merchant_name, webhook_url: b.webhook_url, order_url: false, ...spec.body },
    created: now,
    modified: now,
    completed: null,
  };
  const details: Record<string, unknown> = {};
  for (const k of ['truncated_pan', 'card_expiry', SEALED]) if (original.details?.[k] !== undefined) details[k] = original.details[k];
  const txn: TransactionRow = {
    id: newId(),
    project_id: project.id,
    order_id: order.id,
    status: 'new',
    payment_method: original.payment_method,
    payment_method_brand: original.payment_method_brand,
    currency: original.currency,
    amount: spec.amount,
    credit_debit: spec.direction,
    capture_mode: null,
    transaction_type: original.transaction_type,
    expiration_period: original.expiration_period,
    expires_at: null,
    ...orders.NO_MONEY_MOVED,
    reason: null,
    of_transaction_id: original.id,
    setup_token: null,
    setup_token_used: null,
    details,
    outcomes: spec.outcomes ?? null,
    ...figureColumns(original.currency, spec.figures),
    settled: null,
    authorized: null,
    capture_before: null,
    created: now,
    modified: now,
  };
  return { order, txn };
}

/** A child order as planned: its rows as they will be stored, and its transaction's events. */
export interface PlannedChild {
  order: OrderRow;
  txn: TransactionRow;
  events: EventRow[];
}

/**
 * The order that records a movement of an original order's money (capture, void, refund,
 * chargeback, reversal), gathered in `w` (store/db/writes.ts): one transaction linked by
 * of_transaction_id, moved from new to its status (a row inserted by the statement cannot also
 * be updated by it, so both go in with it), with both events, the order's outbox row and what
 * the status hooks write. `project`: as read with the payment.
 */
export function planChildOrder(
  ctx: Ctx,
  w: WriteSet,
  project: ProjectRow,
  parent: OrderRow,
  original: TransactionRow,
  spec: ChildSpec,
  now: Date,
): PlannedChild {
  const { order, txn } = childRows(project, parent, original, spec, now);
  if (!canMove('new', spec.status)) throw new Error(`a child order cannot start ${spec.status}`);
  const events = [newEventRow(txn, 'new', now, spec.source), newEventRow(txn, spec.status, now, spec.source)];
  Object.assign(txn, { status: spec.status, modified: now });
  const next = deriveOrderStatus('new', [spec.status]);
  if (next !== 'new') Object.assign(order, planOrderStatus(ctx, w, order, next, now, project, true, txn));
  addOrder(w, order, txn);
  addEvents(w, events);
  return { order, txn, events: events.map((e) => ({ ...e })) };
}

/** The view of a planned child order once its statement ran: what loadOrderView would read back. */
export async function renderPlanned(ctx: Ctx, q: Queryable, child: PlannedChild) {
  const holderNames = await openHolderNames(q, ctx.masterKey, [child.txn]);
  return renderOrder(ctx.config, child.order, [child.txn], child.events, [], { holderNames });
}

/** A flag on the original order and its refunded amount, gathered in `w` (the order is locked by the caller, so its counters are current). */
export function planTouchOrder(w: WriteSet, order: OrderRow, now: Date, change: { flag?: string; refunded?: number }) {
  const patch = {
    flags: change.flag && !order.flags.includes(change.flag) ? [...order.flags, change.flag] : order.flags,
    refunded_amount: order.refunded_amount + (change.refunded ?? 0),
    modified: now,
  };
  changeOrder(w, order.id, patch);
  Object.assign(order, patch);
}

/** The journal of a movement of `txn`'s money that belongs to the original `payment`, gathered in `w`. */
export function planBook(w: WriteSet, txn: TransactionRow, payment: TransactionRow, now: Date, legs: Leg[]) {
  addJournal(w, journalHead(txn, payment, now), legs);
}

/** Live projects settle daily: the project's next settlement run (00:00 UTC in its clock), gathered in `w` unless it is scheduled. */
export function planSettlement(w: WriteSet, project: ProjectRow, now: Date) {
  if (project.mode === 'live') w.add(ledger.ensureJobPart(settlementJob(project, now)));
}

/**
 * Runs a money movement, turning a CHECK violation (the database's last line of defence on
 * the counters and journals) into the API error of the operation instead of a 500.
 */
export async function guarded<T>(errorType: ErrorType, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if ((err as { code?: string }).code === '23514')
      throw new DomainError(errorType, 'the amount is no longer available: another request moved it first');
    throw err;
  }
}
