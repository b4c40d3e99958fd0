/** Payment link status, derived from its orders and its expiry (docs/design.md "Payment link status"). Pure. */
import { isFinalOrder, type OrderStatus } from './status.ts';

export const LINK_STATUSES = ['new', 'processing', 'all_unsuccessful', 'completed', 'expired'] as const;
export type LinkStatus = (typeof LINK_STATUSES)[number];

/** What the rule needs to know of one order of the link. */
export interface LinkOrder {
  id: string;
  status: OrderStatus;
  created: Date;
  /** when the order reached a final status */
  completed?: Date | null;
  /** the reason of its last transaction, such as declined */
  reason?: string | null;
}

export interface LinkState {
  status: LinkStatus;
  reason: string;
  completed_order_id?: string;
  /** order ids by order status, oldest first */
  orders: Partial<Record<OrderStatus, string[]>>;
}

const time = (d: Date | null | undefined) => (d ? new Date(d).getTime() : Number.POSITIVE_INFINITY);
const day = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const attempts = (n: number) => (n === 1 ? '1 attempt' : `${n} attempts`);

/** Order ids grouped by order status, each group oldest first. */
export function groupOrders(orders: readonly LinkOrder[]): LinkState['orders'] {
  const groups: LinkState['orders'] = {};
  for (const o of [...orders].sort((a, b) => time(a.created) - time(b.created) || a.id.localeCompare(b.id)))
    (groups[o.status] ??= []).push(o.id);
  return groups;
}

/**
 * The link's status at `now`. Precedence: a paid order wins over everything (money was taken, even
 * if the customer finished after the expiry moment); then expiry; then an attempt under way; then
 * all attempts failed; else nobody has tried yet.
 */
export function deriveLinkStatus(orders: readonly LinkOrder[], expiresAt: Date, now: Date): LinkState {
  const grouped = groupOrders(orders);
  const paid = orders
    .filter((o) => o.status === 'completed')
    .sort((a, b) => time(a.completed) - time(b.completed) || time(a.created) - time(b.created));
  if (paid.length) {
    const more = paid.length > 1 ? ` (${paid.length} orders were paid in total)` : '';
    return { status: 'completed', reason: `paid by order ${paid[0].id}${more}`, completed_order_id: paid[0].id, orders: grouped };
  }
  if (now.getTime() >= new Date(expiresAt).getTime()) {
    const tried = orders.length ? ` after ${attempts(orders.length)} without a successful payment` : ' without any payment attempt';
    return { status: 'expired', reason: `the link expired at ${day(new Date(expiresAt))}${tried}`, orders: grouped };
  }
  if (!orders.length) return { status: 'new', reason: 'the customer has not tried to pay yet', orders: grouped };
  const open = orders.filter((o) => !isFinalOrder(o.status));
  if (open.length) {
    const latest = open.reduce((a, b) => (time(b.created) > time(a.created) ? b : a));
    return { status: 'processing', reason: `a payment is in progress (order ${latest.id} is ${latest.status})`, orders: grouped };
  }
  const last = orders.reduce((a, b) => (time(b.created) >= time(a.created) ? b : a));
  const why = last.reason ? `${last.status}: ${last.reason}` : last.status;
  return {
    status: 'all_unsuccessful',
    reason: `${orders.length === 1 ? 'the only attempt' : `all ${attempts(orders.length)}`} failed (last ${why}); the customer can try again until ${day(new Date(expiresAt))}`,
    orders: grouped,
  };
}

/** A link that can no longer take a new order. */
export const isFinalLink = (s: LinkStatus) => s === 'completed' || s === 'expired';
