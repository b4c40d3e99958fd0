import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { moveTransaction, setOrderStatus } from './transitions.ts';
import { authorizationInFlight } from '../../store/payments/attempts.ts';
import { settingsOf } from '../../domain/project.ts';
import { orderExpiresAt } from '../../domain/order-page.ts';
import type { OrderId, TransactionId } from '../../domain/ids.ts';

/** A transaction not authorized within its expiration_period expires, and its order with it. */
export async function expireTransaction(ctx: Ctx, transactionId: TransactionId) {
  await ctx.db.tx(async (q) => {
    const txn = await orders.transactionById(q, transactionId, true);
    if (!txn || (txn.status !== 'new' && txn.status !== 'pending')) return;
    const project = (await findProject(q, txn.project_id))!;
    const now = nowFor(project);
    if (txn.expires_at && now < new Date(txn.expires_at)) return;
    // the 3-D Secure page's authorization in flight decides (its apply, or its recovery)
    if (txn.status === 'pending' && (await authorizationInFlight(q, txn.project_id, [txn.id]))) return;
    await moveTransaction(ctx, q, txn, 'expired', now, { reason: 'expired', source: 'expiry' });
  });
}

const FAILED_ATTEMPT = ['declined', 'error', 'cancelled'];

/** Job expire_order: an order still without a transaction (or with failed attempts only) at its expiry becomes expired (with its webhook). */
export async function expireOrder(ctx: Ctx, orderId: OrderId) {
  await ctx.db.tx(async (q) => {
    const order = await orders.orderById(q, orderId);
    if (!order || order.status !== 'new') return;
    // Transactions before their order (the lock order of cancelOrder and authorization), then re-read under the lock.
    await orders.lockTransactionsOfOrder(q, order.project_id, order.id);
    const locked = await orders.findOrder(q, order.project_id, order.id, true);
    if (!locked || locked.status !== 'new') return;
    // an order with an attempt under way expires with it; one whose attempts all failed (its page took more) now
    if ((await orders.transactionsOf(q, locked.project_id, [locked.id])).some((t) => !FAILED_ATTEMPT.includes(t.status))) return;
    const project = (await findProject(q, locked.project_id))!;
    const now = nowFor(project);
    if (now < orderExpiresAt(locked, settingsOf(project.settings))) return;
    await setOrderStatus(ctx, q, locked, 'expired', now);
  });
}
