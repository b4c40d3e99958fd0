import type { Queryable } from '../../store/db/db.ts';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { touchOrder } from '../../store/payments/ledger.ts';
import { ApiError, notFound, type ErrorType } from '../../domain/errors.ts';
import { captureLegs, debitLegs, figures, releaseLegs } from '../../domain/ledger.ts';
import { capabilityProblem, type OperationKind } from '../../acquirer/connector.ts';
import { cancelJob, cancelJobsPart } from '../../store/platform/jobs.ts';
import { lockAttemptRows, type PaymentRows } from '../../store/payments/payment-rows.ts';
import { attemptsOf, inFlight, recordAttempt, type AttemptRow } from '../../store/payments/attempts.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { loadOrderView } from './order-view.ts';
import { moveTransaction, planMove } from './transitions.ts';
import { connectorFor, operationRef } from './connectors.ts';
import {
  answered,
  awaitAttempt,
  callAcquirer,
  newAttempt,
  NO_ANSWER,
  planAnswered,
  processingOf,
  resultOf,
  type Answer,
} from './attempts.ts';
import {
  book,
  createChildOrder,
  creditRule,
  debitRule,
  ensureSettlement,
  planBook,
  planChildOrder,
  planSettlement,
  planTouchOrder,
  renderPlanned,
  type ChildSpec,
  type MoneyTransaction,
  type PlannedChild,
} from './operations.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderId } from '../../domain/ids.ts';

/*
 * Capture, void and refund: an operation on an authorized payment, recorded, committed, sent to
 * the acquirer with no transaction open, and applied (services/payments/attempts.ts).
 * Round trips: record (BEGIN with the locking read, the attempt with COMMIT), then apply (the same
 * again); four where the acquirer was asked under the lock in two (docs/performance-cards.md).
 */

export type FollowUpOp = 'capture' | 'void' | 'refund';

const ERROR_OF: Record<FollowUpOp, ErrorType> = {
  capture: 'CanNotCaptureTransaction',
  void: 'CanNotVoidTransaction',
  refund: 'RefundError',
};

/** What the request asks, as checked against the locked payment. */
export interface Decision {
  amount: number;
  /** the in-flight amounts of these kinds count against `max` (what is left) */
  kinds: OperationKind[];
  max: number;
  /** the request is for the operation already in flight of this kind (a full capture, a full void): answer with its result */
  same?: boolean;
  /** capability check: the amount of what this is part of, and how much was done before */
  of?: number;
  earlier?: number;
}

export interface FollowUpRequest {
  op: FollowUpOp;
  source: string;
  /** the payment, locked with its order */
  lock(q: Queryable): Promise<PaymentRows | undefined>;
  /** checks the request (throws its ApiError) and says what it reserves */
  decide(rows: PaymentRows, now: Date): Decision;
  /** what applying needs besides the amount (a refund's description, order lines) */
  request?: Record<string, unknown>;
}

/** The order that records the operation, as the API answers it. */
export async function followUp(ctx: Ctx, project: ProjectRow, req: FollowUpRequest) {
  const errorType = ERROR_OF[req.op];
  // record
  const recorded = await ctx.db.tx(async (q) => {
    const rows = await req.lock(q);
    if (!rows) throw notFound('transaction');
    const now = nowFor(project);
    const d = req.decide(rows, now);
    if (d.same) return { same: true as const, txn: rows.txn };
    const problem = capabilityProblem(connectorFor(ctx, project).capabilities, {
      kind: req.op,
      amount: d.amount,
      of: d.of,
      earlier: d.earlier,
    });
    if (problem) throw new ApiError(errorType, problem);
    const a = newAttempt(project, rows.txn, req.op, d.amount, now, {
      authorization_reference: rows.reference,
      request: { source: req.source, ...req.request },
    });
    const recoveryAt = new Date(now.getTime() + ctx.config.acquirer.recoveryMs);
    if (!(await recordAttempt(q, a, recoveryAt, { kinds: d.kinds, max: d.max }, { commit: true })))
      throw new ApiError(errorType, 'the amount is no longer available: another request reserved it first');
    return { same: false as const, attempt: a, txn: rows.txn };
  });
  if (recorded.same) {
    const running = (await attemptsOf(ctx.db, project.id, recorded.txn.id)).find((x) => x.kind === req.op && inFlight(x));
    const a = running && (await awaitAttempt(ctx, running.id));
    if (!a) throw new ApiError(errorType, `the ${req.op} did not go through`);
    return viewOf(ctx, project, resultOf(a, errorType).orderId);
  }
  // call, with no transaction open
  const { attempt: a, txn } = recorded;
  const connector = connectorFor(ctx, project);
  const answer = await callAcquirer(ctx, a, () =>
    connector[req.op]({ ...operationRef(txn, a.created, a.id, a.amount), reference: a.authorization_reference ?? '' }),
  );
  // apply
  const applied = await applyFollowUp(ctx, a.id, answer);
  if (applied.order) return applied.order;
  return viewOf(ctx, project, resultOf(applied.attempt, errorType).orderId);
}

const viewOf = async (ctx: Ctx, project: ProjectRow, orderId: OrderId) => (await loadOrderView(ctx.db, ctx, project.id, orderId))!;

/**
 * Applies an answer (or its absence) to a capture, void or refund attempt still in flight, in one
 * short transaction: the first to come (the request, the recovery job) applies it; later ones find
 * it settled. Answers the order view when the planned path rendered it.
 */
export async function applyFollowUp(
  ctx: Ctx,
  attemptId: string,
  answer: Answer,
): Promise<{ attempt: AttemptRow; order?: Awaited<ReturnType<typeof renderPlanned>> }> {
  const applied = await applyInTx(ctx, attemptId, answer);
  if (!applied.planned) return { attempt: applied.attempt };
  // rendered once the transaction is over: it may read the project's data key, and on PGlite's
  // one connection a read from outside the transaction waits for it (a restarted process, whose
  // key cache is empty, hung there for good recovering an operation the killed one had not applied)
  return { attempt: applied.attempt, order: await renderPlanned(ctx, ctx.db, applied.planned) };
}

function applyInTx(ctx: Ctx, attemptId: string, answer: Answer): Promise<{ attempt: AttemptRow; planned?: PlannedChild }> {
  return ctx.db.tx(async (q) => {
    const rows = await lockAttemptRows(q, attemptId);
    if (!rows) throw new Error(`attempt ${attemptId} vanished`);
    const a = rows.attempt;
    if (!inFlight(a)) return { attempt: a };
    const now = nowFor(rows.project);
    const change = answered(answer, now);
    const w = new WriteSet();
    const outcomes = 'outcome' in answer ? processingOf(answer.outcome) : { processing: NO_ANSWER };
    const child = a.result_order_id ? await childOf(q, a) : undefined;
    if (change.status === 'succeeded') {
      const planned = !child && planSettled(ctx, w, rows, a, now, outcomes);
      if (planned) {
        change.result_order_id = planned.order.id;
        planAnswered(ctx, w, a, change, now);
        await w.run(q, { commit: true });
        return { attempt: { ...a, ...change }, planned };
      }
      change.result_order_id = await writeSettled(ctx, q, rows, a, now, outcomes, child);
    } else if (change.status === 'failed') {
      if (child) await moveTransaction(ctx, q, child.txn, 'error', now, { reason: 'processing_error', source: 'acquirer' });
      // a void refused late, after a capture (or a void) of the rest closed the authorization:
      // what it reserved is no longer capturable, so its hold goes, as an expiry's would
      if (a.kind === 'void' && rows.txn.status !== 'accepted') await book(q, rows.txn, rows.txn, now, releaseLegs(a.amount, 'expiry'));
    } else if (!child) {
      // processing, or no answer: the merchant sees a processing order until the acquirer settles it
      const spec = specOf(rows, a, 'processing', outcomes);
      change.result_order_id = (await createChildOrder(ctx, q, rows.project, rows.order, rows.txn, spec, now)).order.id;
    }
    planAnswered(ctx, w, a, change, now);
    await w.run(q, { commit: true });
    return { attempt: { ...a, ...change } };
  });
}

/** The child order of an attempt that was left processing, with its transaction. */
async function childOf(q: Queryable, a: AttemptRow) {
  const order = (await orders.findOrder(q, a.project_id, a.result_order_id!))!;
  const [txn] = await orders.transactionsOf(q, a.project_id, [order.id]);
  return { order, txn };
}

/** The order that records the movement: a capture order is accepted, a void or refund order completed. */
function specOf(rows: PaymentRows, a: AttemptRow, status: ChildSpec['status'] | 'final', outcomes: Record<string, unknown>): ChildSpec {
  const source = String(a.request.source ?? 'merchant');
  const p = rows.project;
  const final = a.kind === 'capture' ? 'accepted' : 'completed';
  const base = { amount: a.amount, status: status === 'final' ? final : status, source, outcomes } as const;
  if (a.kind === 'capture')
    return { ...base, kind: 'capture', direction: 'credit', figures: figures('credit', a.amount, creditRule(p, rows.txn.payment_method)) };
  if (a.kind === 'void')
    return {
      ...base,
      kind: 'void',
      direction: 'credit',
      description: a.request.description as string | undefined,
      figures: { fee: 0, settlement: 0 },
    };
  return {
    ...base,
    kind: 'refund',
    direction: 'debit',
    description: a.request.description as string | undefined,
    flags: ['is-refund'],
    figures: figures('debit', a.amount, debitRule(p, 'refund')),
    body: a.request.order_lines ? { order_lines: a.request.order_lines } : undefined,
  };
}

const AUTHORIZATION_JOBS = ['delayed_capture', 'authorization_expiry'];

/** The original's change when the operation succeeded. */
function originalChange(txn: MoneyTransaction, a: AttemptRow, now: Date) {
  if (a.kind === 'capture')
    return {
      to: 'completed' as const,
      change: {
        source: String(a.request.source ?? 'merchant'),
        patch: { captured_amount: txn.captured_amount + a.amount, is_capturable: false },
      },
    };
  if (a.kind === 'void') {
    const voided = txn.voided_amount + a.amount;
    // a void answered late, after a capture of the rest closed the authorization: counted, no move
    if (txn.status === 'accepted' && voided + txn.captured_amount >= txn.authorized_amount)
      return {
        to: 'cancelled' as const,
        change: { reason: 'voided', source: 'merchant', patch: { voided_amount: voided, is_capturable: false } },
      };
    return { patch: { voided_amount: voided, modified: now } };
  }
  return { patch: { refunded_amount: txn.refunded_amount + a.amount, modified: now } };
}

const legsOf = (a: AttemptRow, spec: ChildSpec) =>
  a.kind === 'capture'
    ? captureLegs(a.amount, spec.figures.fee, true)
    : a.kind === 'void'
      ? releaseLegs(a.amount, 'void')
      : debitLegs(a.amount, spec.figures.fee, 'refund');
const flagOf = (a: AttemptRow) => (a.kind === 'capture' ? 'has-captures' : a.kind === 'void' ? 'has-voids' : 'has-refunds');

/**
 * What a capture leaves held that nothing will take: a capture takes the rest after the voids in
 * flight, so when one of them was refused meanwhile (its answer came late, the authorization
 * still open), its part would stay held on a completed payment. Released as an expiry's would.
 */
function leftOpen({ txn, reserved }: PaymentRows, a: AttemptRow) {
  if (a.kind !== 'capture') return 0;
  return Math.max(0, txn.authorized_amount - txn.captured_amount - a.amount - txn.voided_amount - (reserved.void ?? 0));
}

/** A succeeded operation's writes gathered in `w` (one statement); undefined when a status hook needs the general path. */
function planSettled(ctx: Ctx, w: WriteSet, rows: PaymentRows, a: AttemptRow, now: Date, outcomes: Record<string, unknown>) {
  const { txn, order, project } = rows;
  const spec = specOf(rows, a, 'final', outcomes);
  const child = planChildOrder(ctx, w, project, order, txn, spec, now, project);
  if (!child) return undefined;
  const c = originalChange(txn, a, now);
  const left = leftOpen(rows, a); // before the move updates txn
  if ('to' in c && c.to) {
    if (planMove(ctx, w, txn, rows, c.to, now, c.change) !== 'planned') return undefined;
    w.add(cancelJobsPart(AUTHORIZATION_JOBS, txn.id));
  } else w.update('transactions', txn.id, c.patch!);
  planTouchOrder(w, order, now, { flag: flagOf(a), ...(a.kind === 'refund' ? { refunded: a.amount } : {}) });
  planBook(w, child.txn, txn, now, legsOf(a, spec));
  if (left) planBook(w, txn, txn, now, releaseLegs(left, 'expiry'));
  if (a.kind !== 'void') planSettlement(w, project, now);
  return child;
}

/** The same, statement by statement; `child`: the order left processing, now settled. Answers the child order's id. */
async function writeSettled(
  ctx: Ctx,
  q: Queryable,
  rows: PaymentRows,
  a: AttemptRow,
  now: Date,
  outcomes: Record<string, unknown>,
  child?: { order: OrderRow; txn: TransactionRow },
) {
  const { txn, order, project } = rows;
  const spec = specOf(rows, a, 'final', outcomes);
  if (child) await moveTransaction(ctx, q, child.txn, spec.status, now, { source: 'acquirer', patch: { outcomes } });
  const made = child ?? (await createChildOrder(ctx, q, project, order, txn, spec, now));
  const c = originalChange(txn, a, now);
  const left = leftOpen(rows, a); // before the move updates txn
  if ('to' in c && c.to) {
    await moveTransaction(ctx, q, txn, c.to, now, c.change);
    for (const kind of AUTHORIZATION_JOBS) await cancelJob(q, kind, txn.id);
  } else if (a.kind === 'void') await orders.setVoidedAmount(q, txn.id, c.patch!.voided_amount!, now);
  else await orders.setRefundedAmount(q, txn.id, c.patch!.refunded_amount!, now);
  await touchOrder(q, order.id, now, { flag: flagOf(a), ...(a.kind === 'refund' ? { refunded: a.amount } : {}) });
  await book(q, made.txn, txn, now, legsOf(a, spec));
  if (left) await book(q, txn, txn, now, releaseLegs(left, 'expiry'));
  if (a.kind !== 'void') await ensureSettlement(q, project, now);
  return made.order.id;
}
