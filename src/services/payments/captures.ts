import type { Queryable } from '../../store/db/db.ts';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { touchOrder } from '../../store/payments/ledger.ts';
import { ApiError } from '../../domain/errors.ts';
import { captureLegs, captureProblem, figures, releaseLegs, remainingAuthorization, voidProblem } from '../../domain/ledger.ts';
import { cancelJob, cancelJobsPart } from '../../store/platform/jobs.ts';
import { lockPaymentRows } from '../../store/payments/payment-rows.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { notFound } from '../../domain/errors.ts';
import { loadOrderView } from './order-view.ts';
import { moveTransaction, planMove } from './transitions.ts';
import {
  askAcquirer,
  book,
  createChildOrder,
  creditRule,
  ensureSettlement,
  guarded,
  planBook,
  planChildOrder,
  planSettlement,
  planTouchOrder,
  renderPlanned,
  type ChildSpec,
  type MoneyTransaction,
} from './operations.ts';
import type { OrderRow, ProjectRow } from '../../domain/entities.ts';

/**
 * POST .../captures/: captures all that remains of a pre-authorization, once. Answers the capture order.
 * Two round trips: BEGIN with one read that locks the payment and its order, then one statement
 * of every write (store/writes.ts) with the COMMIT (store/pipeline.ts); the acquirer is asked
 * between, under the lock. Where a
 * status hook needs more than was read, the writes go one by one (captureWrites).
 */
export async function captureTransaction(ctx: Ctx, project: ProjectRow, orderId: string, txnId: string) {
  return guarded('CanNotCaptureTransaction', () =>
    ctx.db.tx(async (q) => {
      const rows = await lockPaymentRows(q, project.id, orderId, txnId);
      if (!rows) throw notFound('transaction');
      const { order, txn } = rows;
      const now = nowFor(project);
      const problem = order.kind === 'payment' ? captureProblem(txn, now) : `a ${order.kind} order can not be captured`;
      if (problem) throw new ApiError('CanNotCaptureTransaction', problem);
      const amount = remainingAuthorization(txn);
      const outcomes = await askAcquirer(ctx, q, project, txn, 'capture', amount, now, 'CanNotCaptureTransaction', rows);
      const w = new WriteSet();
      const f = figures('credit', amount, creditRule(project, txn.payment_method));
      const spec = captureSpec(amount, f, 'merchant', outcomes);
      const child = planChildOrder(ctx, w, project, order, txn, spec, now, rows.project);
      if (child && planMove(ctx, w, txn, rows, 'completed', now, captureMove(txn, amount, 'merchant')) !== 'general') {
        planTouchOrder(w, order, now, { flag: 'has-captures' });
        planBook(w, child.txn, txn, now, captureLegs(amount, f.fee, true));
        w.add(cancelJobsPart(AUTHORIZATION_JOBS, txn.id));
        planSettlement(w, project, now);
        await w.run(q, { commit: true });
        return renderPlanned(ctx, ctx.db, child);
      }
      const capture = await captureWrites(ctx, q, project, order, txn, now, 'merchant', amount, outcomes);
      return (await loadOrderView(q, ctx, project.id, capture.id))!;
    }),
  );
}

const captureSpec = (
  amount: number,
  f: { fee: number; settlement: number },
  source: string,
  outcomes: Record<string, unknown>,
): ChildSpec => ({ kind: 'capture', amount, direction: 'credit', status: 'accepted', figures: f, source, outcomes });
const captureMove = (txn: MoneyTransaction, amount: number, source: string) => ({
  source,
  patch: { captured_amount: txn.captured_amount + amount, is_capturable: false },
});

/** The capture itself, on a locked, capturable transaction: capture order, counters, ledger. */
async function captureIn(ctx: Ctx, q: Queryable, project: ProjectRow, order: OrderRow, txn: MoneyTransaction, now: Date, source: string) {
  const amount = remainingAuthorization(txn);
  const outcomes = await askAcquirer(ctx, q, project, txn, 'capture', amount, now, 'CanNotCaptureTransaction');
  return captureWrites(ctx, q, project, order, txn, now, source, amount, outcomes);
}

/** What a capture the acquirer accepted writes, statement by statement. */
async function captureWrites(
  ctx: Ctx,
  q: Queryable,
  project: ProjectRow,
  order: OrderRow,
  txn: MoneyTransaction,
  now: Date,
  source: string,
  amount: number,
  outcomes: Record<string, unknown>,
) {
  const f = figures('credit', amount, creditRule(project, txn.payment_method));
  const child = await createChildOrder(ctx, q, project, order, txn, captureSpec(amount, f, source, outcomes), now);
  await moveTransaction(ctx, q, txn, 'completed', now, captureMove(txn, amount, source));
  await touchOrder(q, order.id, now, { flag: 'has-captures' });
  await book(q, child.txn, txn, now, captureLegs(amount, f.fee, true));
  await dropAuthorizationJobs(q, txn.id);
  await ensureSettlement(q, project, now);
  return child.order;
}

/**
 * POST .../voids/ (amount undefined: all that remains) and .../voids/amount/. A void that
 * leaves nothing cancels the authorization; a partial one keeps the rest capturable.
 * Round trips as for a capture.
 */
export async function voidTransaction(
  ctx: Ctx,
  project: ProjectRow,
  orderId: string,
  txnId: string,
  part?: { amount: number; description: string },
) {
  return guarded('CanNotVoidTransaction', () =>
    ctx.db.tx(async (q) => {
      const rows = await lockPaymentRows(q, project.id, orderId, txnId);
      if (!rows) throw notFound('transaction');
      const { order, txn } = rows;
      const now = nowFor(project);
      const problem = order.kind === 'payment' ? voidProblem(txn, now, part?.amount) : `a ${order.kind} order can not be voided`;
      if (problem) throw new ApiError('CanNotVoidTransaction', problem);
      const amount = part?.amount ?? remainingAuthorization(txn);
      const outcomes = await askAcquirer(ctx, q, project, txn, 'void', amount, now, 'CanNotVoidTransaction', rows);
      const spec: ChildSpec = {
        kind: 'void',
        amount,
        direction: 'credit',
        status: 'completed',
        description: part?.description,
        figures: { fee: 0, settlement: 0 },
        source: 'merchant',
        outcomes,
      };
      const voided = txn.voided_amount + amount;
      const all = voided + txn.captured_amount >= txn.authorized_amount;
      const w = new WriteSet();
      const child = planChildOrder(ctx, w, project, order, txn, spec, now, rows.project);
      const moved =
        child &&
        (all
          ? planMove(ctx, w, txn, rows, 'cancelled', now, voidMove(voided))
          : (w.update('transactions', txn.id, { voided_amount: voided, modified: now }), 'planned'));
      if (child && moved !== 'general') {
        if (all) w.add(cancelJobsPart(AUTHORIZATION_JOBS, txn.id));
        planTouchOrder(w, order, now, { flag: 'has-voids' });
        planBook(w, child.txn, txn, now, releaseLegs(amount, 'void'));
        await w.run(q, { commit: true });
        return renderPlanned(ctx, ctx.db, child);
      }
      const created = await createChildOrder(ctx, q, project, order, txn, spec, now);
      if (all) {
        await moveTransaction(ctx, q, txn, 'cancelled', now, voidMove(voided));
        await dropAuthorizationJobs(q, txn.id);
      } else {
        await orders.setVoidedAmount(q, txn.id, voided, now);
      }
      await touchOrder(q, order.id, now, { flag: 'has-voids' });
      await book(q, created.txn, txn, now, releaseLegs(amount, 'void'));
      return (await loadOrderView(q, ctx, project.id, created.order.id))!;
    }),
  );
}

const voidMove = (voided: number) => ({ reason: 'voided', source: 'merchant', patch: { voided_amount: voided, is_capturable: false } });

const AUTHORIZATION_JOBS = ['delayed_capture', 'authorization_expiry'];

async function dropAuthorizationJobs(q: Queryable, txnId: string) {
  for (const kind of AUTHORIZATION_JOBS) await cancelJob(q, kind, txnId);
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
    await moveTransaction(ctx, q, txn, 'expired', now, {
      reason: 'authorization expired',
      source: 'expiry',
      patch: { is_capturable: false },
    });
    await book(q, txn, txn, now, releaseLegs(remaining, 'expiry'));
  });
}
