import type { Ctx, OrderStatusHook } from '../platform/context.ts';
import type { OrderRow, ProjectRow } from '../../domain/entities.ts';
import { paymentMethodLabel } from '../../domain/payment-methods.ts';
import { degradations, readinessProblems } from '../platform/health.ts';
import { jobGauges } from '../../store/platform/job-gauges.ts';
import { webhookBacklog } from '../../store/webhooks/backlog.ts';
import { gauges, payments } from '../../telemetry/metrics.ts';

/**
 * The payment side of the metrics, counted where an order's status changes (an order status
 * hook, main.ts): tender_orders_total by kind and status reached, and the money of completed
 * orders (tender_order_amount_minor_total) by kind and currency. Captures, voids, refunds and
 * chargebacks are orders of their own kind, so this one hook counts them all. It writes nothing,
 * so it adds nothing to the change's one statement (store/db/writes.ts) and counts once that
 * statement has written.
 * Counted when the change is made, inside its transaction: a change rolled back afterwards
 * (rare: the statement failed) has been counted all the same.
 */
// counted once the change's one statement has written: a gate that held the statement back counts nothing
// labelled by the project's mode and the payment method of the transaction that moved it
export const countOrderStatus: OrderStatusHook = (w, order, _from, to, _now, project, txn) =>
  w.afterWrite(() => count(order, to, project.mode, paymentMethodLabel(txn?.payment_method)));

const CURRENCY = /^[A-Z]{3}$/;
function count(order: OrderRow, to: string, mode: ProjectRow['mode'], method: string) {
  payments.orders.inc({ mode, method, kind: order.kind, status: to });
  if (to === 'completed' && CURRENCY.test(order.currency))
    payments.amount.inc({ mode, method, kind: order.kind, currency: order.currency }, Number(order.amount));
}

const JOB_GAUGES = [gauges.jobsDue, gauges.jobsRunning, gauges.jobsLag];

/** Reads the gauges that live in the database, just before a scrape (three short statements). */
export async function collectGauges(ctx: Ctx, jobKinds: string[]): Promise<void> {
  const [problems, degraded] = await Promise.all([readinessProblems(ctx), degradations(ctx)]);
  gauges.ready.set(problems.length ? 0 : 1);
  gauges.linksDown.set(degraded.length);
  const pool = ctx.db.pool?.();
  if (pool) {
    gauges.poolInUse.set(pool.inUse);
    gauges.poolIdle.set(pool.idle);
    gauges.poolWaiting.set(pool.waiting);
    gauges.poolMax.set(pool.max);
  }
  const [backlog, jobs] = await Promise.all([webhookBacklog(ctx.db), jobGauges(ctx.db)]);
  gauges.webhookBacklog.set(backlog.pending);
  gauges.webhookOldest.set(Math.max(0, backlog.oldest_seconds));
  // every kind reads 0 when it has no rows, rather than keeping its last value
  for (const g of JOB_GAUGES) for (const kind of jobKinds) g.set({ kind }, 0);
  for (const j of jobs) {
    gauges.jobsDue.set({ kind: j.kind }, j.due);
    gauges.jobsRunning.set({ kind: j.kind }, j.running);
    gauges.jobsLag.set({ kind: j.kind }, Math.max(0, j.lag_seconds));
  }
}
