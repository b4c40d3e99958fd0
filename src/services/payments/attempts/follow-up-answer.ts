import type { Queryable } from '../../../store/db/db.ts';
import type { WriteSet } from '../../../store/db/writes.ts';
import { nowFor, type Ctx } from '../../platform/context.ts';
import * as orders from '../../../store/payments/orders.ts';
import { releaseLegs } from '../../../domain/ledger.ts';
import { cancelJobsPart } from '../../../store/platform/jobs.ts';
import { lockAttemptRows, lockOrderContext, type PaymentRows } from '../../../store/payments/payment-rows.ts';
import { changeTransaction } from '../../../store/payments/changes.ts';
import { gateAsRecorded, inFlight, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { TransactionRow } from '../../../domain/entities.ts';
import type { OrderId } from '../../../domain/ids.ts';
import { planMove } from '../transitions.ts';
import {
  planBook,
  planChildOrder,
  planSettlement,
  planTouchOrder,
  renderPlanned,
  type ChildSpec,
  type PlannedChild,
} from '../operations.ts';
import type { Answer } from './call.ts';
import { answered, NO_ANSWER, planAnswered, processingOf } from './rows.ts';
import { applyOnce } from './runner.ts';
import type { FollowUpKind } from './follow-up-kind.ts';
import { FOLLOW_UPS } from './kinds.ts';

/*
 * The answer of a capture, void or refund applied, by the request that made the call or by the
 * recovery job's inquiry (inquiry.ts), whichever comes first; the kind's declaration says what
 * its success writes.
 */

/** The payment as the record read it, and the attempt it wrote. */
export interface Recorded {
  rows: PaymentRows;
  attempt: AttemptRow;
}

type Applied = { attempt: AttemptRow; planned?: PlannedChild };

/**
 * Applies an answer (or its absence) to a capture, void or refund attempt still in flight, once
 * (runner.ts applyOnce): planned from the rows its record read (`recorded`) in one statement
 * gated on their being unchanged, else from the rows read again under the lock. Answers the
 * order view of a child order made here (rendered from what was written, no read back).
 */
export async function applyFollowUp(
  ctx: Ctx,
  attemptId: string,
  answer: Answer,
  recorded?: Recorded,
): Promise<{ attempt: AttemptRow; order?: Awaited<ReturnType<typeof renderPlanned>> }> {
  const applied = await applyOnce<Applied>(ctx, {
    // an order of several transactions is left to the locked apply: its status derives from its siblings as they are now
    ...(recorded && recorded.rows.statuses.length === 1 ? { asRecorded: (w) => planAsRecorded(ctx, w, answer, recorded) } : {}),
    underLock: async (q, w) => {
      const rows = await lockAttemptRows(q, attemptId);
      if (!rows) throw new Error(`attempt ${attemptId} vanished`);
      if (!inFlight(rows.attempt)) return { attempt: rows.attempt };
      // an attempt answered "processing" before has its order already (a late answer): read it
      const child = rows.attempt.result_order_id ? await childOf(q, rows, rows.attempt.result_order_id) : undefined;
      return planApply(ctx, w, rows, answer, child);
    },
  });
  if (!applied.planned) return { attempt: applied.attempt };
  // rendered once the transaction is over: it may read the project's data key, and on PGlite's
  // one connection a read from outside the transaction waits for it (a restarted process, whose
  // key cache is empty, hung there for good recovering an operation the killed one had not applied)
  return { attempt: applied.attempt, order: await renderPlanned(ctx, ctx.db, applied.planned) };
}

/** The apply planned from the rows the record read with the attempt it wrote (in flight, its own amount now reserved too). */
function planAsRecorded(ctx: Ctx, w: WriteSet, answer: Answer, { rows: r, attempt: a }: Recorded): Applied {
  const reserved = { ...r.reserved, [a.kind]: (r.reserved[a.kind] ?? 0) + a.amount };
  // planned on copies: the rows in memory stay as recorded if the gate holds the writes back
  const rows = { ...r, txn: { ...r.txn }, order: { ...r.order }, statuses: [...r.statuses], reserved, attempt: a };
  gateAsRecorded(w, r.seen, rows.txn, a.id, reserved);
  return planApply(ctx, w, rows, answer);
}

/** The answer's writes gathered in `w`: the child order, what a success changes on the original, the attempt settled. */
function planApply(ctx: Ctx, w: WriteSet, rows: PaymentRows & { attempt: AttemptRow }, answer: Answer, child?: Child): Applied {
  const a = rows.attempt;
  const kind = FOLLOW_UPS[a.kind as FollowUpKind['op']];
  const now = nowFor(rows.project);
  const change = answered(answer, now);
  const outcomes = 'outcome' in answer ? processingOf(answer.outcome) : { processing: NO_ANSWER };
  const source = String(a.request.source ?? 'merchant');
  const specOf = (status: 'final' | 'processing') => kind.spec(rows, a, { amount: a.amount, status, source, outcomes });
  let made: PlannedChild | undefined;
  if (change.status === 'succeeded') {
    const spec = specOf('final');
    if (child) planMove(ctx, w, child.txn, child, spec.status, now, { source: 'acquirer', patch: { outcomes } });
    else made = planChildOrder(ctx, w, rows.project, rows.order, rows.txn, spec, now);
    planSettled(ctx, w, rows, kind, a, now, spec, child?.txn ?? made!.txn);
    change.result_order_id = child?.order.id ?? made!.order.id;
  } else if (change.status === 'failed') {
    if (child) planMove(ctx, w, child.txn, child, 'error', now, { reason: 'processing_error', source: 'acquirer' });
    // a void refused late, after a capture of all that remained closed the authorization:
    // what it reserved is no longer capturable, so its hold goes, as an expiry's would
    if (a.kind === 'void' && rows.txn.status !== 'accepted') planBook(w, rows.txn, rows.txn, now, releaseLegs(a.amount, 'expiry'));
  } else if (!child) {
    // processing, or no answer: the merchant sees a processing order until the acquirer settles it
    made = planChildOrder(ctx, w, rows.project, rows.order, rows.txn, specOf('processing'), now);
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

const AUTHORIZATION_JOBS = ['delayed_capture', 'authorization_expiry'];

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
function planSettled(
  ctx: Ctx,
  w: WriteSet,
  rows: PaymentRows,
  kind: FollowUpKind,
  a: AttemptRow,
  now: Date,
  spec: ChildSpec,
  childTxn: TransactionRow,
) {
  const { txn, order, project } = rows;
  const c = kind.original(txn, a, now);
  // only a capture that closes the authorization leaves nothing capturable (before the move updates txn)
  const left = c.to ? leftOpen(rows, a) : 0;
  if (c.to) {
    planMove(ctx, w, txn, rows, c.to, now, c.change);
    w.add(cancelJobsPart(AUTHORIZATION_JOBS, txn.id));
  } else changeTransaction(w, txn.id, c.patch);
  planTouchOrder(w, order, now, { flag: kind.flag, ...(a.kind === 'refund' ? { refunded: a.amount } : {}) });
  planBook(w, childTxn, txn, now, kind.legs(a, spec));
  if (left) planBook(w, txn, txn, now, releaseLegs(left, 'expiry'));
  if (kind.settles) planSettlement(w, project, now);
}
