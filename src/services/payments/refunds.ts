import type { Ctx } from '../platform/context.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import { refundable } from '../../domain/ledger.ts';
import { guarded, lockOrderPayment } from './operations.ts';
import { lockOrderPaymentRows } from '../../store/payments/payment-rows.ts';
import { followUp } from './attempts/follow-up.ts';
import { refusesRefund } from './methods/rules.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { OrderId } from '../../domain/ids.ts';

export interface RefundInput {
  amount: number;
  description?: string;
  order_lines?: Record<string, unknown>[];
}

/**
 * POST /v1/orders/{id}/refunds/: gives back part or all of the captured money not yet refunded,
 * charged back or reserved by refunds in flight. Answers the refund order (flag is-refund, a
 * debit transaction): completed, or processing until the acquirer settles it.
 * Round trips as for a capture (captures.ts); an order without an authorized payment is refused
 * with the reason.
 */
export async function refundOrder(ctx: Ctx, project: ProjectRow, orderId: OrderId, input: RefundInput) {
  if (input.amount <= 0) throw invalid('amount', 'amount must be greater than 0');
  return guarded('RefundError', () =>
    followUp(ctx, project, {
      op: 'refund',
      source: 'merchant',
      // an order without an authorized payment: lockOrderPayment says why
      lock: async (q) =>
        (await lockOrderPaymentRows(q, project.id, orderId)) ?? (await lockOrderPayment(q, project.id, orderId, 'RefundError'), undefined),
      decide: ({ txn, reserved }) => {
        // viacash has no refunds (docs/payment-methods.md): refused from the row already read
        const problem = refusesRefund(txn.payment_method);
        if (problem) throw new DomainError('RefundError', problem, 'payment_method');
        if (txn.captured_amount === 0) throw new DomainError('RefundError', 'nothing has been captured on this order');
        const left = refundable(txn) - (reserved.refund ?? 0);
        if (input.amount > left)
          throw new DomainError('RefundError', `amount ${input.amount} is above the ${left} that can still be refunded`, 'amount');
        return {
          amount: input.amount,
          kinds: ['refund'],
          max: refundable(txn),
          of: txn.captured_amount,
          earlier: txn.refunded_amount + (reserved.refund ?? 0),
        };
      },
      request: { description: input.description, order_lines: input.order_lines },
    }),
  );
}
