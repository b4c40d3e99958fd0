import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { touchOrder } from '../../store/payments/ledger.ts';
import { ApiError, invalid } from '../../domain/errors.ts';
import { debitLegs, figures, refundable } from '../../domain/ledger.ts';
import { loadOrderView } from './order-view.ts';
import {
  askAcquirer,
  book,
  createChildOrder,
  debitRule,
  ensureSettlement,
  guarded,
  lockOrderPayment,
  planBook,
  planChildOrder,
  planSettlement,
  planTouchOrder,
  renderPlanned,
  type ChildSpec,
} from './operations.ts';
import { lockOrderPaymentRows } from '../../store/payments/payment-rows.ts';
import { WriteSet } from '../../store/db/writes.ts';
import type { ProjectRow } from '../../domain/entities.ts';

export interface RefundInput {
  amount: number;
  description?: string;
  order_lines?: Record<string, unknown>[];
}

/**
 * POST /v1/orders/{id}/refunds/: gives back part or all of the captured money not yet refunded
 * or charged back. Answers the refund order (flag is-refund, a debit transaction).
 * Round trips as for a capture (captures.ts); an order without an authorized payment takes the
 * general path, which says why.
 */
export async function refundOrder(ctx: Ctx, project: ProjectRow, orderId: string, input: RefundInput) {
  if (input.amount <= 0) throw invalid('amount', 'amount must be greater than 0');
  return guarded('RefundError', () =>
    ctx.db.tx(async (q) => {
      const read = await lockOrderPaymentRows(q, project.id, orderId);
      const { order, txn } = read ?? (await lockOrderPayment(q, project.id, orderId, 'RefundError'));
      if (txn.captured_amount === 0) throw new ApiError('RefundError', 'nothing has been captured on this order');
      const left = refundable(txn);
      if (input.amount > left)
        throw new ApiError('RefundError', `amount ${input.amount} is above the ${left} that can still be refunded`, 'amount');
      const now = nowFor(project);
      const outcomes = await askAcquirer(ctx, q, project, txn, 'refund', input.amount, now, 'RefundError', read);
      const f = figures('debit', input.amount, debitRule(project, 'refund'));
      const spec: ChildSpec = {
        kind: 'refund',
        amount: input.amount,
        direction: 'debit',
        status: 'completed',
        description: input.description,
        flags: ['is-refund'],
        figures: f,
        source: 'merchant',
        outcomes,
        body: input.order_lines ? { order_lines: input.order_lines } : undefined,
      };
      const w = new WriteSet();
      const child = read && planChildOrder(ctx, w, project, order, txn, spec, now, read.project);
      if (child) {
        w.update('transactions', txn.id, { refunded_amount: txn.refunded_amount + input.amount, modified: now });
        planTouchOrder(w, order, now, { flag: 'has-refunds', refunded: input.amount });
        planBook(w, child.txn, txn, now, debitLegs(input.amount, f.fee, 'refund'));
        planSettlement(w, project, now);
        await w.run(q, { commit: true });
        return renderPlanned(ctx, ctx.db, child);
      }
      const created = await createChildOrder(ctx, q, project, order, txn, spec, now);
      await orders.setRefundedAmount(q, txn.id, txn.refunded_amount + input.amount, now);
      await touchOrder(q, order.id, now, { flag: 'has-refunds', refunded: input.amount });
      await book(q, created.txn, txn, now, debitLegs(input.amount, f.fee, 'refund'));
      await ensureSettlement(q, project, now);
      return (await loadOrderView(q, ctx, project.id, created.order.id))!;
    }),
  );
}
