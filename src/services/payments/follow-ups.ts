import type { Queryable } from '../../store/db/db.ts';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { ApiError, notFound, type ErrorType } from '../../domain/errors.ts';
import { captureLegs, debitLegs, figures, releaseLegs } from '../../domain/ledger.ts';
import { capabilityProblem, type OperationKind } from '../../acquirer/connector.ts';
import { cancelJobsPart } from '../../store/platform/jobs.ts';
import { lockAttemptRows, lockOrderContext, type PaymentRows } from '../../store/payments/payment-rows.ts';
import { changeTransaction } from '../../store/payments/changes.ts';
import { attemptsOf, findAttempt, gateAsRecorded, inFlight, recordAttempt, type AttemptRow } from '../../store/payments/attempts.ts';
import { keyedAttemptId } from './operation-key.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { loadOrderView } from './order-view.ts';
import { planMove } from './transitions.ts';
import { connectorFor, operationRef } from './connectors.ts';
import {
  answered,
  awaitAttempt,
  newAttempt,
  NO_ANSWER,
  planAnswered,
  processingOf,
  refuseHeld,
  resultOf,
  sendFirstCall,
  type Answer,
} from './attempts.ts';
import {
  creditRule,
  debitRule,
  planBook,
  planChildOrder,
  planSettlement,
  planTouchOrder,
  renderPlanned,
  type ChildSpec,
  type MoneyTransaction,
  type PlannedChild,
} from './operations.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderId } from '../../domain/ids.ts';

/*
 * Capture, void and refund: an operation on an authorized payment, recorded, committed, sent to
 * the acquirer with no transaction open, and applied (services/payments/attempts.ts).
 * Round trips: record (BEGIN with the locking read, the attempt with COMMIT), then apply (one
 * statement gated on the rows as recorded; the locked read and write again when it is held back):
 * three, where the acquirer was asked under the lock in two (docs/performance-cards.md).
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
  refuseHeld(ctx, { kind: req.op }); // before the record: a broken rule leaves nothing behind
  // record
  const recorded = await ctx.db.tx(async (q) => {
    const rows = await req.lock(q);
    if (!rows) throw notFound('transaction');
    // the retry of an Idempotency-Key whose request recorded its attempt: that attempt's result
    const keyed = keyedAttemptId(req.op);
    if (keyed && (await findAttempt(q, keyed))) return { same: true as const, id: keyed, txn: rows.txn };
    const now = nowFor(project);
    const d = req.decide(rows, now);
    if (d.same) return { same: true as const, id: undefined, txn: rows.txn };
    const problem = capabilityProblem(connectorFor(ctx, project).capabilities, {
      kind: req.op,
      amount: d.amount,
      of: d.of,
      earlier: d.earlier,
    });
    if (problem) throw new ApiError(errorType, problem);
    const a = newAttempt(ctx, project, rows.txn, req.op, d.amount, now, {
      authorization_reference: rows.reference,
      request: { source: req.source, ...req.request },
    });
    if (!(await recordAttempt(q, a, { kinds: d.kinds, max: d.max }, { commit: true })))
      throw new ApiError(errorType, 'the amount is no longer available: another request reserved it first');
    return { same: false as const, attempt: a, txn: rows.txn, rows };
  });
  if (recorded.same) {
    const id = recorded.id ?? (await attemptsOf(ctx.db, project.id, recorded.txn.id)).find((x) => x.kind === req.op && inFlight(x))?.id;
    const a = id && (await awaitAttempt(ctx, id));
    if (!a) throw new ApiError(errorType, `the ${req.op} did not go through`);
    return viewOf(ctx, project, resultOf(a, errorType).orderId);
  }
  // call, with no transaction open
  const { attempt: a, txn } = recorded;
  const connector = connectorFor(ctx, project);
  const answer = await sendFirstCall(
    ctx,
    project,
    a,
    () => connector[req.op]({ ...operationRef(txn, a.created, a.id, a.amount), reference: a.authorization_reference ?? '' }),
    connector,
  );
  // apply
  const applied = await applyFollowUp(ctx, a.id, answer, { rows: recorded.rows, attempt: a });
  if (applied.order) return applied.order;
  return viewOf(ctx, project, resultOf(applied.attempt, errorType).orderId);
}

const viewOf = async (ctx: Ctx, project: ProjectRow, orderId: OrderId) => (await loadOrderView(ctx.db, ctx, project.id, orderId))!;

/**
 * Applies an answer (or its absence) to a capture, void or refund attempt still in flight, once:
 * the first to come (the request, the recovery job) applies it; later ones find it settled.
 * Answers the order view of a child order made here (rendered from what was written, no read back).
 *
 * The request's apply is planned from the rows its record read (`recorded`, the payment as the
 * record left it), in one statement gated on those rows being unchanged (gateAsRecorded): one
 * round trip. When the gate holds it back (the recovery job, another operation or an expiry came
 * first), and for the recovery job, the same plan is made from the rows read again under the
 * lock: a locking read, then the statement with the COMMIT.
 */
export async function applyFollowUp(
  ctx: Ctx,
  attemptId: string,
  answer: Answer,
  recorded?: Recorded,
): Promise<{ attempt: AttemptRow; order?: Awaited<ReturnType<typeof renderPlanned>> }> {
  const applied = (recorded && (await applyAsRecorded(ctx, answer, recorded))) || (await applyInTx(ctx, attemptId, answer));
  if (!applied.planned) return { attempt: applied.attempt };
  // rendered once the transaction is over: it may read the project's data key, and on PGlite's
  // one connection a read from outside the transaction waits for it (a restarted process, whose
  // key cache is empty, hung there for good recovering an operation the killed one had not applied)
  return { attempt: applied.attempt, order: await renderPlanned(ctx, ctx.db, applied.planned) };
}

type Applied = { attempt: AttemptRow; planned?: PlannedChild };

/** The payment as the record read it, and the attempt it wrote. */
interface Recorded {
  rows: PaymentRows;
  attempt: AttemptRow;
}

/**
 * The apply in one statement, from the rows the record read with the attempt it wrote (in flight,
 * its own amount now reserved too); undefined when the gate held it back. An order of several
 * transactions is left to the locked apply: its status derives from its siblings as they are now.
 */
async function applyAsRecorded(ctx: Ctx, answer: Answer, { rows: r, attempt: a }: Recorded): Promise<Applied | undefined> {
  if (r.statuses.length !== 1) return undefined;
  const reserved = { ...r.reserved, [a.kind]: (r.reserved[a.kind] ?? 0) + a.amount };
  // planned on copies: the rows in memory stay as recorded if the gate holds the writes back
  const rows = { ...r, txn: { ...r.txn }, order: { ...r.order }, statuses: [...r.statuses], reserved, attempt: a };
  const w = new WriteSet();
  gateAsRecorded(w, r.seen, rows.txn, a.id, reserved);
  const applied = planApply(ctx, w, rows, answer);
  return (await w.run(ctx.db)) ? applied : undefined;
}

function applyInTx(ctx: Ctx, attemptId: string, answer: Answer): Promise<Applied> {
  return ctx.db.tx(async (q) => {
    const rows = await lockAttemptRows(q, attemptId);
    if (!rows) throw new Error(`attempt ${attemptId} vanished`);
    if (!inFlight(rows.attempt)) return { attempt: rows.attempt };
    // an attempt answered "processing" before has its order already (a late answer): read it
    const child = rows.attempt.result_order_id ? await childOf(q, rows, rows.attempt.result_order_id) : undefined;
    const w = new WriteSet();
    const applied = planApply(ctx, w, rows, answer, child);
    await w.run(q, { commit: true });
    return applied;
  });
}

/** The answer's writes gathered in `w`: the child order, what a success changes on the original, the attempt settled. */
function planApply(ctx: Ctx, w: WriteSet, rows: PaymentRows & { attempt: AttemptRow }, answer: Answer, child?: Child): Applied {
  const a = rows.attempt;
  const now = nowFor(rows.project);
  const change = answered(answer, now);
  const outcomes = 'outcome' in answer ? processingOf(answer.outcome) : { processing: NO_ANSWER };
  let made: PlannedChild | undefined;
  if (change.status === 'succeeded') {
    const spec = specOf(rows, a, 'final', outcomes);
    if (child) planMove(ctx, w, child.txn, child, spec.status, now, { source: 'acquirer', patch: { outcomes } });
    else made = planChildOrder(ctx, w, rows.project, rows.order, rows.txn, spec, now);
    planSettled(ctx, w, rows, a, now, spec, child?.txn ?? made!.txn);
    change.result_order_id = child?.order.id ?? made!.order.id;
  } else if (change.status === 'failed') {
    if (child) planMove(ctx, w, child.txn, child, 'error', now, { reason: 'processing_error', source: 'acquirer' });
    // a void refused late, after a capture of all that remained closed the authorization:
    // what it reserved is no longer capturable, so its hold goes, as an expiry's would
    if (a.kind === 'void' && rows.txn.status !== 'accepted') planBook(w, rows.txn, rows.txn, now, releaseLegs(a.amount, 'expiry'));
  } else if (!child) {
    // processing, or no answer: the merchant sees a processing order until the acquirer settles it
    made = planChildOrder(ctx, w, rows.project, rows.order, rows.txn, specOf(rows, a, 'processing', outcomes), now);
    change.result_order_id = made.order.id;
  }
  planAnswered(ctx, w, a, change, now);
  return { attempt: { ...a, ...change }, ...(made ? { planned: made } : {}) };
}

type Child = Awaited<ReturnType<typeof childOf>>;

/** The child order of an attempt that was left processing, locked, with its one transaction. */
async function childOf(q: Queryable, rows: PaymentRows, orderId: OrderId) {
  const view = (await lockOrderContext(q, rows.project.id, orderId))!;
  const [txn] = await orders.transactionsOf(q, rows.project.id, [orderId]);
  return { ...view, txn };
}

/** The order that records the movement: a capture order is accepted, a void or refund order completed. */
function specOf(rows: PaymentRows, a: AttemptRow, status: ChildSpec['status'] | 'final', outcomes: Record<string, unknown>): ChildSpec {
  const source = String(a.request.source ?? 'merchant');
  const p = rows.project;
  const final = a.kind === 'capture' ? 'accepted' : 'completed';
  const base = { amount: a.amount, status: status === 'final' ? final : status, source, outcomes } as const;
  if (a.kind === 'capture')
    return {
      ...base,
      kind: 'capture',
      direction: 'credit',
      figures: figures('credit', a.amount, creditRule(p, rows.txn.payment_method)),
      // a capture per order line lists the lines it took
      body: a.request.order_lines ? { order_lines: a.request.order_lines } : undefined,
    };
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
  if (a.kind === 'capture') {
    const captured = txn.captured_amount + a.amount;
    // a capture per order line may leave part of the authorization capturable (captures.ts); one of all that remains closes it
    if (a.request.order_lines && captured + txn.voided_amount < txn.authorized_amount)
      return { patch: { captured_amount: captured, modified: now } };
    return {
      to: 'completed' as const,
      change: { source: String(a.request.source ?? 'merchant'), patch: { captured_amount: captured, is_capturable: false } },
    };
  }
  if (a.kind === 'void') {
    const voided = txn.voided_amount + a.amount;
    // a void answered late, after a capture of all that remained closed the authorization: counted, no move
    if (txn.status === 'accepted' && voided + txn.captured_amount >= txn.authorized_amount)
      // the rest of one captured in part: the payment is done with what was captured
      return txn.captured_amount > 0
        ? { to: 'completed' as const, change: { source: 'merchant', patch: { voided_amount: voided, is_capturable: false } } }
        : {
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
 * What a capture of all that remained leaves held that nothing will take: it takes the rest after
 * the voids in flight, so when one of them was refused meanwhile (its answer came late, the
 * authorization still open), its part would stay held on a completed payment. Released as an
 * expiry's would.
 */
function leftOpen({ txn, reserved }: PaymentRows, a: AttemptRow) {
  if (a.kind !== 'capture') return 0;
  return Math.max(0, txn.authorized_amount - txn.captured_amount - a.amount - txn.voided_amount - (reserved.void ?? 0));
}

/** What a succeeded operation changes on the original payment, gathered in `w`: its counters or status, its flag, the journal of the child's money. */
function planSettled(ctx: Ctx, w: WriteSet, rows: PaymentRows, a: AttemptRow, now: Date, spec: ChildSpec, childTxn: TransactionRow) {
  const { txn, order, project } = rows;
  const c = originalChange(txn, a, now);
  // only a capture that closes the authorization leaves nothing capturable (before the move updates txn)
  const left = 'to' in c && c.to ? leftOpen(rows, a) : 0;
  if ('to' in c && c.to) {
    planMove(ctx, w, txn, rows, c.to, now, c.change);
    w.add(cancelJobsPart(AUTHORIZATION_JOBS, txn.id));
  } else changeTransaction(w, txn.id, c.patch!);
  planTouchOrder(w, order, now, { flag: flagOf(a), ...(a.kind === 'refund' ? { refunded: a.amount } : {}) });
  planBook(w, childTxn, txn, now, legsOf(a, spec));
  if (left) planBook(w, txn, txn, now, releaseLegs(left, 'expiry'));
  if (a.kind !== 'void') planSettlement(w, project, now);
}
