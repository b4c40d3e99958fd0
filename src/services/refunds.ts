import type { Ctx } from './context.ts';
import { nowFor } from './context.ts';
import * as orders from '../store/orders.ts';
import { touchOrder } from '../store/ledger.ts';
import { ApiError, invalid } from '../domain/errors.ts';
import { debitLegs, figures, refundable } from '../domain/ledger.ts';
import { loadOrderView } from './order-view.ts';
import { askAcquirer, book, createChildOrder, debitRule, ensureSettlement, guarded, lockOrderPayment } from './operations.ts';
import type { ProjectRow } from '../domain/entities.ts';

export interface RefundInput {
  amount: number;
  description?: string;
  order_lines?: Record<string, unknown>[];
}

/**
 * POST /v1/orders/{id}/refunds/: gives back part or all of the captured money not yet refunded
 * or charged back. Answers the refund order (flag is-refund, a debit transaction).
 */
export async function refundOrder(ctx: Ctx, project: ProjectRow, orderId: string, input: RefundInput) {
  if (input.amount <= 0) throw invalid('amount', 'amount must be greater than 0');
  return guarded('RefundError', () =>
    ctx.db.tx(async (q) => {
      const { order, txn } = await lockOrderPayment(q, project.id, orderId, 'RefundError');
      if (txn.captured_amount === 0) throw new ApiError('RefundError', 'nothing has been captured on this order');
      const left = refundable(txn);
      if (input.amount > left) throw new ApiError('RefundError', `amount ${input.amount} is above the ${left} that can still be refunded`, 'amount');
      const now = nowFor(project);
      const outcomes = await askAcquirer(ctx, q, project, txn, 'refund', input.amount, now, 'RefundError');
      const f = figures('debit', input.amount, debitRule(project, 'refund'));
      const child = await createChildOrder(
        ctx,
        q,
        project,
        order,
        txn,
        {
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
        },
        now,
      );
      await orders.setRefundedAmount(q, txn.id, txn.refunded_amount + input.amount, now);
      await touchOrder(q, order.id, now, { flag: 'has-refunds', refunded: input.amount });
      await book(q, child.txn, txn, now, debitLegs(input.amount, f.fee, 'refund'));
      await ensureSettlement(q, project, now);
      return (await loadOrderView(q, ctx, project.id, child.order.id))!;
    }),
  );
}
