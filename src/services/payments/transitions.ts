import type { Queryable } from '../../store/db/db.ts';
import type * as orders from '../../store/payments/orders.ts';
import { addEvents, addOutbox, changeOrder, changeTransaction } from '../../store/payments/changes.ts';
import { lockOrderContext } from '../../store/payments/payment-rows.ts';
import { canMove, deriveOrderStatus, isFinalOrder, type OrderStatus, type TransactionStatus } from '../../domain/status.ts';
import { newId, type OrderId, type ProjectId } from '../../domain/ids.ts';
import type { Ctx } from '../platform/context.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { pageTakesPayment } from '../../domain/order-page.ts';
import { settingsOf } from '../../domain/project.ts';

export interface StatusChange {
  reason?: string | null;
  source?: string;
  /** the columns that change with the status (store/payments/orders.ts StatusColumns) */
  patch?: orders.StatusColumns;
}

/** What a status change needs of the context: the hooks main.ts lists, run in the change's database transaction. */
export type HooksCtx = Pick<Ctx, 'hooks'>;

/**
 * Moves a transaction to a new status in the caller's database transaction: the order is locked
 * and read with its transactions' statuses, then the move is planned (planMove) and written in
 * one statement. Returns false when the move is not allowed.
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
  const w = new WriteSet();
  planMove(ctx, w, txn, await orderContext(q, txn.project_id, txn.order_id), to, now, change);
  await w.run(q);
  return true;
}

/** An event row of a transaction's history: `occurred` in the project's clock, `noticed` in ours. */
export function newEventRow(txn: Pick<TransactionRow, 'id' | 'project_id'>, event: string, now: Date, source = 'set_status') {
  return { id: newId(), project_id: txn.project_id, transaction_id: txn.id, event, source, occurred: now, noticed: new Date() };
}

async function orderContext(q: Queryable, projectId: ProjectId, orderId: OrderId): Promise<OrderContext> {
  const view = await lockOrderContext(q, projectId, orderId);
  if (!view) throw new Error(`order ${orderId} vanished`);
  return view;
}

/** Recomputes an order's status from its transactions; writes the change (outbox row, hooks) when there is one. */
export async function refreshOrderStatus(
  ctx: HooksCtx,
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  now: Date,
): Promise<OrderStatus> {
  const view = await orderContext(q, projectId, orderId);
  const next = deriveOrderStatus(view.order.status, view.statuses, reopens(view, now));
  if (next === view.order.status) return next;
  const w = new WriteSet();
  planOrderStatus(ctx, w, view.order, next, now, view.project);
  await w.run(q);
  return next;
}

/** Sets an order's status directly (an order without transactions that expires or is cancelled, a retried one) with outbox and hooks. */
export async function setOrderStatus(ctx: HooksCtx, q: Queryable, order: OrderRow, next: OrderStatus, now: Date) {
  const { project } = await orderContext(q, order.project_id, order.id);
  const w = new WriteSet();
  Object.assign(order, planOrderStatus(ctx, w, order, next, now, project));
  await w.run(q);
}

/** A failed attempt leaves the order open while its page can take another (docs/hosted-pages.md "Retry"). */
const reopens = (view: Pick<OrderContext, 'order' | 'project'>, now: Date) =>
  pageTakesPayment(view.order, settingsOf(view.project.settings), now);

/** What a planned move needs to know of the transaction's order, read with the transaction. */
export interface OrderContext {
  order: OrderRow;
  /** the statuses of the order's transactions, this one's included, as read */
  statuses: TransactionStatus[];
  project: ProjectRow;
}

/**
 * A transaction's move, gathered in `w` (store/db/writes.ts): the transaction's row, its event, the
 * order's derived status with its outbox row, and what the order status hooks write. `view` was
 * read with the order locked; the rows in memory change as the statement will change them.
 * Answers false for a move the state machine refuses (nothing is gathered).
 */
export function planMove(
  ctx: HooksCtx,
  w: WriteSet,
  txn: TransactionRow,
  view: OrderContext,
  to: TransactionStatus,
  now: Date,
  change: StatusChange = {},
): boolean {
  if (!canMove(txn.status, to)) return false;
  const { order } = view;
  const from = order.status;
  const statuses = view.statuses.length ? [...view.statuses] : [txn.status];
  // this transaction's place in the order's list: the first with its old status (a list of one in the card flow)
  const mine = statuses.indexOf(txn.status);
  if (mine < 0) throw new Error(`transaction ${txn.id} is ${txn.status} in memory but not among its order's statuses as read`);
  statuses[mine] = to;
  const next = deriveOrderStatus(order.status, statuses, reopens(view, now));
  const patch: Pick<TransactionRow, 'status' | 'modified'> & orders.StatusColumns = { ...change.patch, status: to, modified: now };
  if (change.reason !== undefined) patch.reason = change.reason;
  changeTransaction(w, txn.id, patch);
  addEvents(w, [newEventRow(txn, to, now, change.source ?? 'set_status')]);
  if (next !== from) Object.assign(order, planOrderStatus(ctx, w, order, next, now, view.project, false, { ...txn, ...patch }));
  if ((to === 'error' || to === 'declined') && next !== 'error') for (const hook of ctx.hooks.attemptFailed) hook(w, { ...txn, ...patch });
  Object.assign(txn, patch);
  view.statuses = statuses;
  return true;
}

/**
 * An order's status change gathered in `w`: the order's row (unless `inserted`: the caller
 * inserts it with the new status), its outbox row and what the hooks write, in the order main.ts
 * lists them; `txn`, the transaction whose move made the change, is handed to the hooks. Answers
 * the changed columns.
 */
export function planOrderStatus(
  ctx: HooksCtx,
  w: WriteSet,
  order: OrderRow,
  next: OrderStatus,
  now: Date,
  project: ProjectRow,
  inserted = false,
  txn?: TransactionRow,
) {
  const completed = isFinalOrder(next) ? now : null;
  const changed = { status: next, modified: now, completed };
  if (!inserted) changeOrder(w, order.id, changed);
  // before the hooks' parts: a delivery names this row (a CTE sees only those before it)
  addOutbox(w, order, next, now);
  const after = { ...order, ...changed };
  for (const hook of ctx.hooks.orderStatus) hook(w, after, order.status, next, now, project, txn);
  return changed;
}
