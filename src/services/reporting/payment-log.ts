import type { OrderStatusHook } from '../platform/context.ts';
import type { Logger } from '../../log.ts';
import type { OrderKind } from '../../domain/entities.ts';
import type { OrderStatus } from '../../domain/status.ts';

/**
 * A log line per payment event (docs/operations.md "Logs"), so an operator's console says what
 * happened to money and not only `POST /pay/.../card/ 303`: `payment authorized`, `payment
 * declined` (with its reason), `payment captured`, `payment refunded`, ... with the project, the
 * order, the amount in minor units, the outcome, the mode and the payment method. Never card
 * data, the cardholder's name or the customer: only columns of the order and its transaction
 * that hold none. An order status hook (main.ts), written once the change's statement has.
 */
const EVENTS: Partial<Record<OrderKind, Partial<Record<OrderStatus, string>>>> = {
  payment: { completed: 'payment authorized', error: 'payment declined', cancelled: 'payment cancelled', expired: 'payment expired' },
  capture: { completed: 'payment captured', error: 'capture failed' },
  void: { completed: 'authorization voided', error: 'void failed' },
  refund: { completed: 'payment refunded', error: 'refund failed' },
  chargeback: { completed: 'payment charged back' },
  reversal: { completed: 'chargeback reversed' },
};

export const paymentEventLog =
  (log: Logger): OrderStatusHook =>
  (w, order, _from, to, _now, project, txn) => {
    const msg = EVENTS[order.kind]?.[to];
    if (!msg) return;
    const fields = {
      project_id: order.project_id,
      order_id: order.id,
      ...(order.related_order_id ? { of_order_id: order.related_order_id } : {}),
      mode: project.mode,
      method: txn?.payment_method ?? undefined,
      amount: Number(order.amount),
      currency: order.currency,
      outcome: txn?.status ?? to,
      ...(txn?.reason ? { reason: txn.reason } : {}),
    };
    w.afterWrite(() => log.info(fields, msg));
  };
