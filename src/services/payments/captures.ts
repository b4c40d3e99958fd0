import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { ApiError } from '../../domain/errors.ts';
import { captureProblem, releaseLegs, remainingAuthorization, voidProblem } from '../../domain/ledger.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { lockPaymentRows, type PaymentRows } from '../../store/payments/payment-rows.ts';
import { attemptsOf, inFlight } from '../../store/payments/attempts.ts';
import { moveTransaction } from './transitions.ts';
import { book, guarded, type MoneyTransaction } from './operations.ts';
import { followUp, type Decision } from './follow-ups.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { OrderId } from '../../domain/ids.ts';

/**
 * POST .../captures/: captures all that remains of a pre-authorization, once. Answers the capture
 * order: completed, or processing while the acquirer has not answered (its webhook comes when it
 * settles). Recorded, committed, asked with no lock held, applied (follow-ups.ts). A capture
 * asked while one is in flight answers with that one's result.
 */
export async function captureTransaction(ctx: Ctx, project: ProjectRow, orderId: OrderId, txnId: string) {
  return guarded('CanNotCaptureTransaction', () =>
    followUp(ctx, project, {
      op: 'capture',
      source: 'merchant',
      lock: (q) => lockPaymentRows(q, project.id, orderId, txnId),
      decide: captureDecision,
    }),
  );
}

/** What a capture takes: all that remains after what voids in flight reserve. */
function captureDecision({ order, txn, reserved }: PaymentRows, now: Date): Decision {
  if (order.kind !== 'payment') throw new ApiError('CanNotCaptureTransaction', `a ${order.kind} order can not be captured`);
  const problem = captureProblem(txn, now);
  if (problem) throw new ApiError('CanNotCaptureTransaction', problem);
  const remaining = remainingAuthorization(txn);
  if (reserved.capture) return { same: true, amount: 0, kinds: [], max: 0 };
  const amount = remaining - (reserved.void ?? 0);
  if (amount <= 0) throw new ApiError('CanNotCaptureTransaction', 'nothing is left to capture: a void of the rest is in progress');
  return { amount, kinds: ['capture', 'void'], max: remaining, of: txn.authorized_amount, earlier: 0 };
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
        if (order.kind !== 'payment') throw new ApiError('CanNotVoidTransaction', `a ${order.kind} order can not be voided`);
        const problem = voidProblem(txn, now, part?.amount);
        if (problem) throw new ApiError('CanNotVoidTransaction', problem);
        const remaining = remainingAuthorization(txn);
        // a full void while another is in flight is that one
        if (!part && reserved.void && !reserved.capture) return { same: true, amount: 0, kinds: [], max: 0 };
        const left = remaining - (reserved.capture ?? 0) - (reserved.void ?? 0);
        const amount = part?.amount ?? left;
        if (amount <= 0 || amount > left)
          throw new ApiError('CanNotVoidTransaction', `only ${Math.max(0, left)} is left to void: another operation on it is in progress`);
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
    await followUp(ctx, project, {
      op: 'capture',
      source: 'delayed_capture',
      lock: (q) => lockPaymentRows(q, project.id, txn.order_id, txnId),
      decide: captureDecision,
    });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err; // nothing to capture any more: not a failure of the job
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
    await moveTransaction(ctx, q, txn, 'expired', now, {
      reason: 'authorization expired',
      source: 'expiry',
      patch: { is_capturable: false },
    });
    await book(q, txn, txn, now, releaseLegs(remaining, 'expiry'));
  });
}
