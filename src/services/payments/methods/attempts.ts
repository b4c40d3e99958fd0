import type { OrderRow, TransactionRow } from '../../../domain/entities.ts';

/** Statuses of an attempt that ended without money: the customer may try again on the hosted page. */
const FAILED_ATTEMPT = new Set<TransactionRow['status']>(['declined', 'error', 'cancelled']);

/**
 * Whether the hosted page may start another attempt on this order: its last attempt failed or
 * was cancelled (not expired: an expired attempt means the time is up), no attempt took money,
 * and the order did not come from a payment link (a link makes a new order instead).
 * The caller checks the order's own expiry.
 */
export function canTryAgain(order: Pick<OrderRow, 'kind' | 'status' | 'payment_link_id'>, txns: readonly TransactionRow[]): boolean {
  if (order.kind !== 'payment' || order.payment_link_id) return false;
  const last = txns.filter((t) => t.credit_debit === 'credit').at(-1);
  if (!last || !FAILED_ATTEMPT.has(last.status) || last.reason === 'cancelled by merchant') return false;
  if (txns.some((t) => t.authorized_amount > 0)) return false;
  return order.status === 'error' || order.status === 'cancelled' || order.status === 'new';
}
