import type { Queryable } from '../store/db.ts';
import type { Ctx } from './context.ts';
import { nowFor } from './context.ts';
import * as orders from '../store/orders.ts';
import { findProject } from '../store/projects.ts';
import { touchOrder } from '../store/ledger.ts';
import { ApiError } from '../domain/errors.ts';
import { captureLegs, captureProblem, figures, releaseLegs, remainingAuthorization, voidProblem } from '../domain/ledger.ts';
import { cancelJob } from '../store/jobs.ts';
import { loadOrderView } from './order-view.ts';
import { moveTransaction } from './transitions.ts';
import { askAcquirer, book, createChildOrder, creditRule, ensureSettlement, guarded, lockPayment, type MoneyTransaction } from './operations.ts';
import type { OrderRow, ProjectRow } from '../domain/entities.ts';

/** POST .../captures/: captures all that remains of a pre-authorization, once. Answers the capture order. */
export async function captureTransaction(ctx: Ctx, project: ProjectRow, orderId: string, txnId: string) {
  return guarded('CanNotCaptureTransaction', () =>
    ctx.db.tx(async (q) => {
      const { order, txn } = await lockPayment(q, project.id, orderId, txnId);
      const now = nowFor(project);
      const problem = order.kind === 'payment' ? captureProblem(txn, now) : `a ${order.kind} order can not be captured`;
      if (problem) throw new ApiError('CanNotCaptureTransaction', problem);
      const capture = await captureIn(ctx, q, project, order, txn, now, 'merchant');
      return (await loadOrderView(q, ctx, project.id, capture.id))!;
    }),
  );
}

/** The capture itself, on a locked, capturable transaction: capture order, counters, ledger. */
async function captureIn(ctx: Ctx, q: Queryable, project: ProjectRow, order: OrderRow, txn: MoneyTransaction, now: Date, source: string) {
  const amount = remainingAuthorization(txn);
  const outcomes = await askAcquirer(ctx, q, project, txn, 'capture', amount, now, 'CanNotCaptureTransaction');
  const f = figures('credit', amount, creditRule(project, txn.payment_method));
  const child = await createChildOrder(ctx, q, project, order, txn, { kind: 'capture', amount, direction: 'credit', status: 'accepted', figures: f, source, outcomes }, now);
  await moveTransaction(ctx, q, txn, 'completed', now, { source, patch: { captured_amount: txn.captured_amount + amount, is_capturable: false } });
  await touchOrder(q, order.id, now, { flag: 'has-captures' });
  await book(q, child.txn, txn, now, captureLegs(amount, f.fee, true));
  await dropAuthorizationJobs(q, txn.id);
  await ensureSettlement(q, project, now);
  return child.order;
}

/**
 * POST .../voids/ (amount undefined: all that remains) and .../voids/amount/. A void that
 * leaves nothing cancels the authorization; a partial one keeps the rest capturable.
 */
export async function voidTransaction(ctx: Ctx, project: ProjectRow, orderId: string, txnId: string, part?: { amount: number; description: string }) {
  return guarded('CanNotVoidTransaction', () =>
    ctx.db.tx(async (q) => {
      const { order, txn } = await lockPayment(q, project.id, orderId, txnId);
      const now = nowFor(project);
      const problem = order.kind === 'payment' ? voidProblem(txn, now, part?.amount) : `a ${order.kind} order can not be voided`;
      if (problem) throw new ApiError('CanNotVoidTransaction', problem);
      const amount = part?.amount ?? remainingAuthorization(txn);
      const outcomes = await askAcquirer(ctx, q, project, txn, 'void', amount, now, 'CanNotVoidTransaction');
      const child = await createChildOrder(
        ctx,
        q,
        project,
        order,
        txn,
        { kind: 'void', amount, direction: 'credit', status: 'completed', description: part?.description, figures: { fee: 0, settlement: 0 }, source: 'merchant', outcomes },
        now,
      );
      const voided = txn.voided_amount + amount;
      if (voided + txn.captured_amount >= txn.authorized_amount) {
        await moveTransaction(ctx, q, txn, 'cancelled', now, { reason: 'voided', source: 'merchant', patch: { voided_amount: voided, is_capturable: false } });
        await dropAuthorizationJobs(q, txn.id);
      } else {
        await orders.setVoidedAmount(q, txn.id, voided, now);
      }
      await touchOrder(q, order.id, now, { flag: 'has-voids' });
      await book(q, child.txn, txn, now, releaseLegs(amount, 'void'));
      return (await loadOrderView(q, ctx, project.id, child.order.id))!;
    }),
  );
}

async function dropAuthorizationJobs(q: Queryable, txnId: string) {
  await cancelJob(q, 'delayed_capture', txnId);
  await cancelJob(q, 'authorization_expiry', txnId);
}

/**
 * Job `delayed_capture`: at the end of its expiration_period a delayed pre-authorization is
 * captured in full (what partial voids left). The worker runs it when due, so the schedule
 * is trusted rather than compared again with a clock that may differ by milliseconds.
 */
export async function runDelayedCapture(ctx: Ctx, txnId: string) {
  await ctx.db.tx(async (q) => {
    const txn = (await orders.transactionById(q, txnId, true)) as MoneyTransaction | undefined;
    if (!txn || txn.capture_mode !== 'delayed' || txn.status !== 'accepted' || !txn.is_capturable) return;
    const project = (await findProject(q, txn.project_id))!;
    const now = nowFor(project);
    if (captureProblem(txn, now)) return;
    const order = (await orders.findOrder(q, project.id, txn.order_id))!;
    await captureIn(ctx, q, project, order, txn, now, 'delayed_capture');
  });
}

/** Job `authorization_expiry`: a manual pre-authorization not captured within the capture window lapses and its hold is released. */
export async function expireAuthorization(ctx: Ctx, txnId: string) {
  await ctx.db.tx(async (q) => {
    const txn = (await orders.transactionById(q, txnId, true)) as MoneyTransaction | undefined;
    if (!txn || txn.capture_mode !== 'manual' || txn.status !== 'accepted' || !txn.is_capturable) return;
    const project = (await findProject(q, txn.project_id))!;
    const now = nowFor(project);
    const remaining = remainingAuthorization(txn);
    await moveTransaction(ctx, q, txn, 'expired', now, { reason: 'authorization expired', source: 'expiry', patch: { is_capturable: false } });
    await book(q, txn, txn, now, releaseLegs(remaining, 'expiry'));
  });
}
