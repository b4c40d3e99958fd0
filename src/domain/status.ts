/** Transaction and order state machines (docs/design.md "States"). */
export const TRANSACTION_STATUSES = [
  'new',
  'pending',
  'processing',
  'accepted',
  'completed',
  'declined',
  'error',
  'cancelled',
  'expired',
] as const;
export type TransactionStatus = (typeof TRANSACTION_STATUSES)[number];

export const ORDER_STATUSES = ['new', 'processing', 'completed', 'cancelled', 'expired', 'error', 'see-transactions'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const FINAL_ORDER_STATUSES: readonly OrderStatus[] = ['completed', 'cancelled', 'expired', 'error'];
export const isFinalOrder = (s: OrderStatus) => FINAL_ORDER_STATUSES.includes(s);

/** Allowed transaction moves. Anything else is a programming error or a race lost. */
const TRANSITIONS: Record<TransactionStatus, readonly TransactionStatus[]> = {
  new: ['pending', 'processing', 'accepted', 'completed', 'declined', 'error', 'cancelled', 'expired'],
  pending: ['processing', 'accepted', 'declined', 'error', 'cancelled', 'expired'],
  processing: ['accepted', 'completed', 'declined', 'error', 'expired'],
  accepted: ['completed', 'cancelled', 'expired', 'declined', 'error'],
  completed: [],
  declined: [],
  error: [],
  cancelled: [],
  expired: [],
};

export const canMove = (from: TransactionStatus, to: TransactionStatus) => TRANSITIONS[from].includes(to);

/** Statuses in which the transaction has not yet reached the acquirer, so a cancel is allowed. */
export const isCancellable = (s: TransactionStatus) => s === 'new' || s === 'pending';

const RETRIED: readonly TransactionStatus[] = ['declined', 'error', 'cancelled'];
/** A failed attempt the order's page takes another one after (a cancel still ends the order). */
const REOPENED: readonly TransactionStatus[] = ['declined', 'error'];

const ORDER_OF: Record<TransactionStatus, OrderStatus> = {
  new: 'new',
  pending: 'processing',
  processing: 'processing',
  accepted: 'completed',
  completed: 'completed',
  declined: 'error',
  error: 'error',
  cancelled: 'cancelled',
  expired: 'expired',
};

/**
 * Order status from its transactions. A final order never changes again; otherwise one
 * transaction maps by table, and several that disagree give `see-transactions`.
 */
export function deriveOrderStatus(current: OrderStatus, transactions: readonly TransactionStatus[], reopens = false): OrderStatus {
  if (isFinalOrder(current)) return current;
  if (transactions.length === 0) return 'new';
  // an order whose page can still take a payment stays open after a failed attempt: the spec's error is final
  if (reopens && REOPENED.includes(transactions.at(-1)!)) return 'new';
  // an attempt that failed before a later one (a retry on the hosted page) is history, not status
  const live = transactions.filter((t, i) => i === transactions.length - 1 || !RETRIED.includes(t));
  const mapped = new Set(live.map((t) => ORDER_OF[t]));
  if (mapped.size === 1) return [...mapped][0];
  return 'see-transactions';
}
