import { randomUUID } from 'node:crypto';
import type { Ctx } from '../../platform/context.ts';
import { nowFor } from '../../platform/context.ts';
import * as orders from '../../../store/payments/orders.ts';
import { findProject } from '../../../store/platform/projects.ts';
import { DomainError, invalid, notFound } from '../../../domain/errors.ts';
import { isSandboxMethod, methodInfo, PAY_NOW, isPaymentMethod, paysWithCard } from '../../../domain/payment-methods.ts';
import { moveTransaction } from '../transitions.ts';
import { planAuthorized } from '../operations.ts';
import { WriteSet } from '../../../store/db/writes.ts';
import { loadOrderView } from '../order-view.ts';
import { methodStart } from './rules.ts';
import type { Queryable } from '../../../store/db/db.ts';
import type { ProjectRow, TransactionRow } from '../../../domain/entities.ts';
import type { OrderId } from '../../../domain/ids.ts';

/**
 * The provider's side of the methods of domain/payment-methods.ts, as the sandbox plays it: the
 * outcome a test customer picks on the method's page, and a bank transfer arriving (test tools).
 * Every move goes through moveTransaction, so each status change has its event and webhook.
 */

const OUTCOMES = ['paid', 'cancelled', 'expired', 'failed', 'open'] as const;
export type SandboxOutcome = (typeof OUTCOMES)[number];
export const isOutcome = (s: unknown): s is SandboxOutcome => typeof s === 'string' && (OUTCOMES as readonly string[]).includes(s);

/** Applies a sandbox outcome to a transaction of such a method, in the caller's database transaction. */
async function apply(ctx: Ctx, q: Queryable, project: ProjectRow, txn: TransactionRow, outcome: SandboxOutcome, now: Date, source: string) {
  const move = (to: TransactionRow['status'], reason: string | null) => moveTransaction(ctx, q, txn, to, now, { reason, source });
  let moved = false;
  switch (outcome) {
    case 'paid': {
      if (!(await move('accepted', null))) break;
      // a sale is captured at once (its journal); BNPL is held until the merchant captures it
      const booked = new WriteSet();
      planAuthorized(booked, project, txn, now);
      await booked.run(q);
      moved = txn.capture_mode ? true : await move('completed', null);
      break;
    }
    case 'cancelled':
      moved = await move('cancelled', 'cancelled');
      break;
    case 'expired':
      moved = await move('expired', 'expired');
      break;
    case 'failed':
      moved = await move('error', 'payment_failed');
      break;
    case 'open':
      moved = txn.status === 'processing' || (await move('processing', null));
      break;
  }
  if (!moved) throw new DomainError('TransactionAlreadyStarted', `the ${txn.payment_method} transaction is ${txn.status}`);
}

/** The customer's choice on the sandbox page of a transaction (test projects). Answers the order as it is afterwards. */
export async function settleAttempt(ctx: Ctx, orderId: OrderId, txnId: string, outcome: SandboxOutcome, issuer?: string) {
  return ctx.db.tx(async (q) => {
    const txn = await orders.transactionById(q, txnId, true);
    if (!txn || txn.order_id !== orderId || !isSandboxMethod(txn.payment_method)) throw notFound('transaction');
    const project = (await findProject(q, txn.project_id))!;
    if (project.mode !== 'test') throw new DomainError('Forbidden', 'the sandbox pages are for test projects only');
    const kind = methodInfo(txn.payment_method).kind;
    // a transfer or a slip is paid outside the page (test tools), not by a button of the customer's
    if ((kind === 'transfer' || kind === 'voucher') && outcome !== 'cancelled')
      throw new DomainError('Forbidden', `a ${txn.payment_method} is completed from the test tools`);
    const now = nowFor(project);
    if (issuer && methodInfo(txn.payment_method).issuer && !txn.details?.issuer_id) {
      await orders.updateRow(q, 'transactions', txn.id, { details: { ...txn.details, issuer_id: issuer } });
      txn.details = { ...txn.details, issuer_id: issuer };
    }
    await apply(ctx, q, project, txn, outcome, now, 'customer');
    return (await orders.findOrder(q, project.id, orderId))!;
  });
}

/**
 * POST /v1/test/orders/{id}/bank-transfer/: the transfer (or the slip's cash) arrives, of exactly
 * the amount, or the merchant lets it expire. Test projects only.
 */
export async function settleTransfer(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  input: { outcome: 'paid' | 'expired'; amount?: number },
) {
  return ctx.db.tx(async (q) => {
    const order = await orders.findOrder(q, project.id, orderId, true);
    if (!order) throw notFound('order');
    const txns = await orders.transactionsOf(q, project.id, [order.id]);
    const txn = txns.find(
      (t) =>
        t.status === 'pending' && isSandboxMethod(t.payment_method) && ['transfer', 'voucher'].includes(methodInfo(t.payment_method).kind),
    );
    if (!txn) throw new DomainError('TransactionAlreadyStarted', 'this order has no bank transfer or viacash payment waiting');
    if (input.outcome === 'paid') {
      if (input.amount === undefined) throw invalid('amount', 'amount is required: what arrived, in minor units');
      if (input.amount !== txn.amount)
        throw invalid('amount', `amount ${input.amount} is not the ${txn.amount} of the transfer: only the exact amount completes it`);
    }
    const locked = (await orders.transactionById(q, txn.id, true))!;
    await apply(ctx, q, project, locked, input.outcome, nowFor(project), 'test-tools');
    return (await loadOrderView(q, ctx, project.id, order.id))!;
  });
}

/**
 * A `pay-now` transaction becomes the method the customer picked on the hosted page: the same
 * attempt, now of that method (with what the method starts with).
 */
export async function chooseForPayNow(ctx: Ctx, txn: TransactionRow, method: string) {
  if (!isPaymentMethod(method) || method === PAY_NOW) throw invalid('payment_method', `payment method ${method} is not known`);
  return ctx.db.tx(async (q) => {
    const locked = await orders.transactionById(q, txn.id, true);
    if (!locked || locked.payment_method !== PAY_NOW || locked.status !== 'new')
      throw new DomainError('TransactionAlreadyStarted', 'this transaction has already started');
    const start = methodStart(method, locked.order_id, locked.id, undefined);
    const card = paysWithCard(method);
    const patch: Record<string, unknown> = {
      payment_method: method,
      details: { ...locked.details, ...start?.details },
      capture_mode: start?.capture_mode ?? locked.capture_mode,
      setup_token: card ? randomUUID() : null,
    };
    await orders.updateRow(q, 'transactions', locked.id, patch);
    Object.assign(locked, patch);
    if (start?.status && start.status !== locked.status) {
      const project = (await findProject(q, locked.project_id))!;
      await moveTransaction(ctx, q, locked, start.status, nowFor(project), { source: 'customer' });
    }
    return locked;
  });
}
