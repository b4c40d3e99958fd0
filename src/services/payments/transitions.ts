import type { Queryable } from '../../store/db/db.ts';
import * as orders from '../../store/payments/orders.ts';
import { canMove, deriveOrderStatus, isFinalOrder, type OrderStatus, type TransactionStatus } from '../../domain/status.ts';
import { newId, type OrderId, type ProjectId } from '../../domain/ids.ts';
import type { Ctx } from '../platform/context.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { WriteSet } from '../../store/db/writes.ts';

export interface StatusChange {
  reason?: string | null;
  source?: string;
  /** the columns that change with the status (store/orders.ts StatusColumns) */
  patch?: orders.StatusColumns;
}

/** What a status change needs of the context: the hooks main.ts lists, run in the change's database transaction. */
export type HooksCtx = Pick<Ctx, 'hooks'>;

/**
 * Moves a transaction to a new status: the row, an event, and the order's derived status,
 * all in the caller's database transaction. Returns false when the move is not allowed.
 */
export async function moveTransaction(
  ctx: HooksCtx,
  q: Queryable,
  txn: TransactionRow,
  to: TransactionStatus,
  now: Date,
  change: StatusChange = {},
): Promise<boolean> {
  if (!canMove(txn.status, to)) return false;
  const patch: Pick<TransactionRow, 'status' | 'modified'> & orders.StatusColumns = { ...change.patch, status: to, modified: now };
  if (change.reason !== undefined) patch.reason = change.reason;
  await orders.setTransactionStatus(q, txn.id, patch);
  Object.assign(txn, patch);
  await appendEvent(q, txn, to, now, change.source ?? 'set_status');
  await refreshOrderStatus(ctx, q, txn.project_id, txn.order_id, now);
  return true;
}

/** An event row of a transaction's history: `occurred` in the project's clock, `noticed` in ours. */
export function newEventRow(txn: Pick<TransactionRow, 'id' | 'project_id'>, event: string, now: Date, source = 'set_status') {
  return { id: newId(), project_id: txn.project_id, transaction_id: txn.id, event, source, occurred: now, noticed: new Date() };
}

export async function appendEvent(
  q: Queryable,
  txn: Pick<TransactionRow, 'id' | 'project_id'>,
  event: string,
  now: Date,
  source = 'set_status',
) {
  await orders.insertEvent(q, newEventRow(txn, event, now, source));
}

/** Recomputes an order's status from its transactions; writes the outbox row when it changes. */
export async function refreshOrderStatus(
  ctx: HooksCtx,
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  now: Date,
): Promise<OrderStatus> {
  const order = await orders.findOrder(q, projectId, orderId, true);
  if (!order) throw new Error(`order ${orderId} vanished`);
  const txns = await orders.transactionsOf(q, projectId, [orderId]);
  const next = deriveOrderStatus(
    order.status,
    txns.map((t) => t.status),
  );
  if (next === order.status) return next;
  await setOrderStatus(ctx, q, order, next, now);
  return next;
}

/** Sets an order's status directly (orders created final, such as capture orders) with outbox and hooks, in the order main.ts lists them. */
export async function setOrderStatus(ctx: HooksCtx, q: Queryable, order: OrderRow, next: OrderStatus, now: Date) {
  const from = order.status;
  const completed = isFinalOrder(next) ? now : null;
  await orders.setOrderStatusRow(q, order.id, { status: next, modified: now, completed });
  Object.assign(order, { status: next, modified: now, completed });
  await orders.insertOutbox(q, order.project_id, order.id, next, now);
  for (const hook of ctx.hooks.orderStatus) await hook(q, order, from, next, now);
}

/** What a planned move needs to know of the transaction's order, read with the transaction. */
export interface OrderContext {
  order: OrderRow;
  /** the statuses of the order's transactions, this one's included, as read */
  statuses: TransactionStatus[];
  project: ProjectRow;
}

/**
 * moveTransaction's writes, gathered in `w` (store/writes.ts) instead of sent one by one: the
 * transaction's row, its event, the order's derived status with its outbox row, and what the
 * order status hooks write. The rows in memory change as moveTransaction changes them.
 * Answers 'not allowed' for a move the state machine refuses, and 'general' when a hook cannot
 * say its writes from what was read (w is then unusable: the caller takes moveTransaction).
 */
export function planMove(
  ctx: HooksCtx,
  w: WriteSet,
  txn: TransactionRow,
  view: OrderContext,
  to: TransactionStatus,
  now: Date,
  change: StatusChange = {},
): 'planned' | 'not allowed' | 'general' {
  if (!canMove(txn.status, to)) return 'not allowed';
  const { order } = view;
  const from = order.status;
  const statuses = view.statuses.length ? [...view.statuses] : [txn.status];
  // this transaction's place in the order's list: the first with its old status (a list of one in the card flow)
  const mine = statuses.indexOf(txn.status);
  if (mine < 0) return 'general';
  statuses[mine] = to;
  const next = deriveOrderStatus(order.status, statuses);
  const patch: Pick<TransactionRow, 'status' | 'modified'> & orders.StatusColumns = { ...change.patch, status: to, modified: now };
  if (change.reason !== undefined) patch.reason = change.reason;
  w.update('transactions', txn.id, patch);
  w.insert('events', newEventRow(txn, to, now, change.source ?? 'set_status'));
  if (next !== from) {
    const changed = planOrderStatus(ctx, w, order, next, now, view.project);
    if (!changed) return 'general';
    Object.assign(order, changed);
  }
  Object.assign(txn, patch);
  view.statuses = statuses;
  return 'planned';
}

/** Whether planMove would plan this move (its hooks can say their writes), without changing anything. */
export function canPlanMove(ctx: HooksCtx, txn: TransactionRow, view: OrderContext, to: TransactionStatus, now: Date): boolean {
  return (
    planMove(ctx, new WriteSet(), { ...txn }, { ...view, order: { ...view.order }, statuses: [...view.statuses] }, to, now) === 'planned'
  );
}

/**
 * setOrderStatus's writes gathered in `w`: the order's row (unless `inserted`: the caller
 * inserts it with the new status), its outbox row and what the hooks write. Answers the
 * changed columns, or undefined when a hook cannot inline (w is then unusable).
 */
export function planOrderStatus(
  ctx: HooksCtx,
  w: WriteSet,
  order: OrderRow,
  next: OrderStatus,
  now: Date,
  project: ProjectRow,
  inserted = false,
) {
  const completed = isFinalOrder(next) ? now : null;
  const changed = { status: next, modified: now, completed };
  if (!inserted) w.update('orders', order.id, changed);
  // before the hooks' parts: a delivery names this row (a CTE sees only those before it)
  w.outbox = w.name('outbox');
  w.insert('outbox', { project_id: order.project_id, order_id: order.id, status: next, created: now }, { name: w.outbox, returning: 'id' });
  const after = { ...order, ...changed };
  return ctx.hooks.orderStatus.every((hook) => hook.inline?.(w, after, order.status, next, now, project) ?? false) ? changed : undefined;
}
