import { addDuration, isPositiveDuration } from './duration.ts';
import type { OrderRow } from './entities.ts';
import type { ProjectSettings } from './project.ts';

/**
 * When an order created without a transaction stops taking one: its own expiration_period, else
 * the project's default, from its creation. (An order with a transaction expires with it.)
 */
export function orderExpiresAt(
  order: Pick<OrderRow, 'created' | 'body'>,
  settings: Pick<ProjectSettings, 'default_expiration_period'>,
): Date {
  const own = order.body?.expiration_period;
  const period = typeof own === 'string' && isPositiveDuration(own) ? own : settings.default_expiration_period;
  return addDuration(new Date(order.created), period);
}

/**
 * Whether the order's own page (order_url) can still take a payment after a failed attempt: an
 * order created without a transaction, not from a payment link (a link makes a new order), before
 * its expiry. Such an order stays open (`new`) when an attempt fails, instead of ending in `error`.
 */
export function pageTakesPayment(
  order: Pick<OrderRow, 'kind' | 'created' | 'body' | 'payment_link_id'>,
  settings: Pick<ProjectSettings, 'default_expiration_period'>,
  now: Date,
): boolean {
  return order.kind === 'payment' && order.body?.order_url === true && !order.payment_link_id && now < orderExpiresAt(order, settings);
}
