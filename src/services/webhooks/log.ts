import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import { findOrder } from '../../store/payments/orders.ts';
import * as store from '../../store/webhooks/deliveries.ts';
import * as log from '../../store/webhooks/log.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import { newId, isUuid } from '../../domain/ids.ts';
import { signedHeaders } from '../../domain/webhook-signing.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { deliveryView, signingSecrets } from './endpoints.ts';
import { addressRuleOf, send } from './delivery.ts';

/**
 * The project's webhook log (extensions of the API, docs/webhooks.md "Delivery log"): every
 * delivery with its attempts, failed ones first; one delivery sent again; a test event.
 */

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
const MAX = 200;

export async function projectDeliveryLog(ctx: Ctx, project: ProjectRow, f: { status?: string; event?: string; limit?: number } = {}) {
  const status = (DELIVERY_STATUSES as readonly string[]).includes(f.status ?? '') ? (f.status as store.DeliveryStatus) : undefined;
  const event = f.event === 'status_changed' || f.event === 'test' ? f.event : undefined;
  const rows = await log.projectDeliveries(ctx.db, project.id, { status, event, limit: Math.min(Math.max(1, f.limit ?? 50), MAX) });
  const attempts = await store.attemptsOf(
    ctx.db,
    project.id,
    rows.map((d) => d.id),
  );
  const now = nowFor(project);
  return { deliveries: rows.map((d) => ({ order_id: d.order_id ?? undefined, ...deliveryView(d, attempts, now) })) };
}

/**
 * Sends one delivery again: a new delivery of the same order to the same URL (after any still
 * pending to it). A test event is sent again as a new test event to the project's URL.
 */
export async function resendDelivery(ctx: Ctx, project: ProjectRow, deliveryId: string) {
  if (!isUuid(deliveryId)) throw notFound('webhook delivery');
  const d = await log.findDelivery(ctx.db, project.id, deliveryId.toLowerCase());
  if (!d) throw notFound('webhook delivery');
  if (!d.order_id) return sendTestEvent(ctx, project);
  const orderId = d.order_id;
  const id = await ctx.db.tx(async (q) => {
    const order = await findOrder(q, project.id, orderId, true);
    if (!order) throw notFound('order');
    const now = nowFor(project);
    const made = newId();
    await store.insertDelivery(q, {
      id: made,
      project_id: project.id,
      order_id: order.id,
      outbox_id: null,
      order_status: order.status,
      target: d.target,
      resend: true,
      url: d.url,
      next_attempt_at: now,
      created: now,
    });
    await store.scheduleOrderJob(q, project.id, order.id, now);
    return made;
  });
  const made = (await log.findDelivery(ctx.db, project.id, id))!;
  return { order_id: orderId, ...deliveryView(made, [], nowFor(project)) };
}

/** POSTs a signed test event ({"event":"test","project_id":...}) to the project's webhook URL now, and logs it. */
export async function sendTestEvent(ctx: Ctx, project: ProjectRow) {
  const url = await store.projectWebhookUrl(ctx.db, project.id);
  if (!url) throw new DomainError('Forbidden', 'no webhook URL: set the project webhook URL first');
  const id = newId();
  const body = JSON.stringify({ event: 'test', project_id: project.id });
  const secrets = await signingSecrets(ctx, project);
  const started = nowFor(project);
  const r = await send(ctx.config, addressRuleOf(ctx, project), url, { ...signedHeaders(secrets, id, new Date(), body) }, body);
  const ok = r.status !== undefined && r.status >= 200 && r.status < 300;
  await log.insertTestDelivery(
    ctx.db,
    { id, project_id: project.id, url, status: ok ? 'succeeded' : 'failed', created: started, completed: nowFor(project) },
    { response_status: r.status ?? null, response_excerpt: r.excerpt ?? null, error: r.error ?? null, duration_ms: r.durationMs },
  );
  const d = (await log.findDelivery(ctx.db, project.id, id))!;
  const attempts = await store.attemptsOf(ctx.db, project.id, [id]);
  return deliveryView(d, attempts, nowFor(project));
}
