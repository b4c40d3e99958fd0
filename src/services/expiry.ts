import type { Ctx } from './context.ts';
import { nowFor } from './context.ts';
import * as orders from '../store/orders.ts';
import { findProject } from '../store/projects.ts';
import { moveTransaction } from './transitions.ts';

/** A transaction not authorized within its expiration_period expires, and its order with it. */
export async function expireTransaction(ctx: Ctx, transactionId: string) {
  await ctx.db.tx(async (q) => {
    const txn = await orders.transactionById(q, transactionId, true);
    if (!txn || (txn.status !== 'new' && txn.status !== 'pending')) return;
    const project = (await findProject(q, txn.project_id))!;
    const now = nowFor(project);
    if (txn.expires_at && now < new Date(txn.expires_at)) return;
    await moveTransaction(ctx, q, txn, 'expired', now, { reason: 'expired', source: 'expiry' });
  });
}
