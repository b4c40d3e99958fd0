import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import { captureProblem, releaseLegs, remainingAuthorization, voidProblem } from '../../domain/ledger.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { lockPaymentRows, type PaymentRows } from '../../store/payments/payment-rows.ts';
import { attemptsOf, inFlight, type AttemptRow } from '../../store/payments/attempts.ts';
import { moveTransaction } from './transitions.ts';
import { book, guarded, type MoneyTransaction } from './operations.ts';
import { followUp, type Decision, type FollowUpRequest } from './attempts/follow-up.ts';
import { captureLines, capturedQuantities, type CaptureLineRequest, type CapturedLine } from '../../domain/capture-lines.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { OrderId } from '../../domain/ids.ts';

/** A capture request: nothing (all that remains), or the order lines it takes (docs/money.md). */
export interface CaptureInput {
  order_lines?: CaptureLineRequest[];
}

/**
 * POST .../captures/: captures all that remains of a pre-authorization, or the order lines
 * named (each line's quantity at most what earlier captures left of it). Answers the capture
 * order: completed, or processing while the acquirer has not answered (its webhook comes when it
 * settles). Recorded, committed, asked with no lock held, applied (attempts/follow-up.ts). A full capture
 * asked while one is in flight answers with that one's result.
 */
export async function captureTransaction(ctx: Ctx, project: ProjectRow, orderId: OrderId, txnId: string, input: CaptureInput = {}) {
  return guarded('CanNotCaptureTransaction', () => followUp(ctx, project, captureRequest(project, orderId, txnId, 'merchant', input)));
}

/** The follow-up of a capture: the payment locked with its earlier captures, the decision, the lines it records. */
function captureRequest(project: ProjectRow, orderId: OrderId, txnId: string, source: string, input: CaptureInput): FollowUpRequest {
  let earlier: AttemptRow[] = [];
  const request: Record<string, unknown> = {};
  return {
    op: 'capture',
    source,
    lock: async (q) => {
      const rows = await lockPaymentRows(q, project.id, orderId, txnId);
      // the captures that took (or are taking) money, read under the payment's lock
      if (rows && (input.order_lines || rows.reserved.capture))
        earlier = (await attemptsOf(q, project.id, rows.txn.id)).filter((a) => a.kind === 'capture' && a.status !== 'failed');
      return rows;
    },
    decide: (rows, now) => {
      if (!input.order_lines) return captureDecision(rows, now, earlier);
      const { decision, lines } = lineDecision(rows, now, input.order_lines, earlier);
      request.order_lines = lines; // recorded with the attempt: the capture order lists them, later captures count them
      return decision;
    },
    request,
  };
}

/** What a capture takes: all that remains after what voids and captures in flight reserve. */
function captureDecision({ order, txn, reserved }: PaymentRows, now: Date, earlier: AttemptRow[] = []): Decision {
  checkCapturable(order, txn, now);
  const remaining = remainingAuthorization(txn);
  // the same request again while a full capture is in flight; one per order line leaves the rest to take
  if (reserved.capture && earlier.some((a) => inFlight(a) && !a.request.order_lines)) return { same: true, amount: 0, kinds: [], max: 0 };
  const amount = remaining - (reserved.void ?? 0) - (reserved.capture ?? 0);
  if (amount <= 0)
    throw new DomainError('CanNotCaptureTransaction', 'nothing is left to capture: a void or capture of the rest is in progress');
  return {
    amount,
    kinds: ['capture', 'void'],
    max: remaining,
    of: txn.authorized_amount,
    earlier: txn.captured_amount + (reserved.capture ?? 0),
  };
}

/** A capture per order line: the lines' amount, within what remains; a line unknown or captured already is a 400. */
function lineDecision(
  rows: PaymentRows,
  now: Date,
  requested: CaptureLineRequest[],
  earlier: AttemptRow[],
): { lines: CapturedLine[]; decision: Decision } {
  const { order, txn, reserved } = rows;
  checkCapturable(order, txn, now);
  const captured = capturedQuantities(earlier.map((a) => a.request.order_lines as Record<string, unknown>[] | undefined));
  const r = captureLines(order.body?.order_lines as Record<string, unknown>[] | undefined, requested, captured);
  if ('field' in r) throw invalid(r.field, r.message);
  const remaining = remainingAuthorization(txn);
  const left = remaining - (reserved.void ?? 0) - (reserved.capture ?? 0);
  if (r.amount > left)
    throw new DomainError(
      'CanNotCaptureTransaction',
      `the order lines named add up to ${r.amount}, above the ${Math.max(0, left)} left to capture`,
    );
  return {
    lines: r.lines,
    decision: {
      amount: r.amount,
      kinds: ['capture', 'void'],
      max: remaining,
      of: txn.authorized_amount,
      earlier: txn.captured_amount + (reserved.capture ?? 0),
    },
  };
}

function checkCapturable(order: PaymentRows['order'], txn: PaymentRows['txn'], now: Date) {
  if (order.kind !== 'payment') throw new DomainError('CanNotCaptureTransaction', `a ${order.kind} order can not be captured`);
  const problem = captureProblem(txn, now);
  if (problem) throw new DomainError('CanNotCaptureTransaction', problem);
}

/**
 * POST .../voids/ (amount undefined: all that remains) and .../voids/amount/. A void that
 * leaves nothing cancels the authorization; a partial one keeps the rest capturable.
 * Round trips as for a capture.
 */
export async function voidTransaction(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  txnId: string,
  part?: { amount: number; description: string },
) {
  return guarded('CanNotVoidTransaction', () =>
    followUp(ctx, project, {
      op: 'void',
      source: 'merchant',
      lock: (q) => lockPaymentRows(q, project.id, orderId, txnId),
      decide: ({ order, txn, reserved }, now) => {
        if (order.kind !== 'payment') throw new DomainError('CanNotVoidTransaction', `a ${order.kind} order can not be voided`);
        const problem = voidProblem(txn, now, part?.amount);
        if (problem) throw new DomainError('CanNotVoidTransaction', problem);
        const remaining = remainingAuthorization(txn);
        // a full void while another is in flight is that one
        if (!part && reserved.void && !reserved.capture) return { same: true, amount: 0, kinds: [], max: 0 };
        const left = remaining - (reserved.capture ?? 0) - (reserved.void ?? 0);
        const amount = part?.amount ?? left;
        if (amount <= 0 || amount > left)
          throw new DomainError(
            'CanNotVoidTransaction',
            `only ${Math.max(0, left)} is left to void: another operation on it is in progress`,
          );
        return { amount, kinds: ['capture', 'void'], max: remaining };
      },
      request: part ? { description: part.description } : {},
    }),
  );
}

/**
 * Job `delayed_capture`: at the end of its expiration_period a delayed pre-authorization is
 * captured in full (what partial voids left). The worker runs it when due, so the schedule
 * is trusted rather than compared again with a clock that may differ by milliseconds.
 */
export async function runDelayedCapture(ctx: Ctx, txnId: string) {
  const txn = (await orders.transactionById(ctx.db, txnId)) as MoneyTransaction | undefined;
  if (!txn || txn.capture_mode !== 'delayed' || txn.status !== 'accepted' || !txn.is_capturable) return;
  const project = (await findProject(ctx.db, txn.project_id))!;
  try {
    await followUp(ctx, project, captureRequest(project, txn.order_id, txnId, 'delayed_capture', {}));
  } catch (err) {
    if (!(err instanceof DomainError)) throw err; // nothing to capture any more: not a failure of the job
  }
}

/**
 * Job `authorization_expiry`: a manual pre-authorization not captured within the capture window
 * lapses and its hold is released. While a capture or void of it is in flight at the acquirer it
 * waits for that to settle (the job comes back after ACQUIRER_RECOVERY_MS).
 */
export async function expireAuthorization(ctx: Ctx, txnId: string) {
  await ctx.db.tx(async (q) => {
    const txn = (await orders.transactionById(q, txnId, true)) as MoneyTransaction | undefined;
    if (!txn || txn.capture_mode !== 'manual' || txn.status !== 'accepted' || !txn.is_capturable) return;
    const project = (await findProject(q, txn.project_id))!;
    const now = nowFor(project);
    if ((await attemptsOf(q, project.id, txn.id)).some(inFlight)) {
      const runAt = new Date(now.getTime() + ctx.config.acquirer.recoveryMs);
      await schedule(q, { project_id: project.id, kind: 'authorization_expiry', ref_id: txn.id, run_at: runAt });
      return;
    }
    const remaining = remainingAuthorization(txn);
    // captured in part (per order line): the payment is done with what was captured, the rest released
    if (txn.captured_amount > 0)
      await moveTransaction(ctx, q, txn, 'completed', now, { source: 'expiry', patch: { is_capturable: false } });
    else
      await moveTransaction(ctx, q, txn, 'expired', now, {
        reason: 'authorization expired',
        source: 'expiry',
        patch: { is_capturable: false },
      });
    await book(q, txn, txn, now, releaseLegs(remaining, 'expiry'));
  });
}
