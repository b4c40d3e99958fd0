import type { Ctx, OrderStatusHook, ProjectCreatedHook } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import { findProject, setWebhookUrl } from '../../store/platform/projects.ts';
import { findOrder } from '../../store/payments/orders.ts';
import * as store from '../../store/webhooks/deliveries.ts';
import type { AttemptRow, DeliveryRow } from '../../store/webhooks/deliveries.ts';
import { DomainError, invalid, notFound } from '../../domain/errors.ts';
import { newSecret } from '../../domain/webhook-signing.ts';
import { checkPublicUrls } from '../platform/public-urls.ts';
import { dataKeyFor, openField, sealField } from '../platform/crypto-envelope.ts';
import { newId, type OrderId, type ProjectId } from '../../domain/ids.ts';
import type { OrderRow, ProjectRow } from '../../domain/entities.ts';
import { INTERRUPTED, interruptedAttempts } from '../../domain/webhook-log.ts';

/** Where an order's status changes are sent. `target` says why (shown in the delivery log). */
export interface WebhookTarget {
  url: string;
  target: string;
}

const ROTATION_GRACE_MS = 24 * 3600_000;
const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString().replace('Z', '+00:00') : undefined);

// ---- secrets -------------------------------------------------------------------------------

const CURRENT = 'webhook_secret';
const PREVIOUS = 'webhook_previous_secret';

/** Makes the project's first secret. Returns it when made here, undefined when one existed. */
async function createWebhookSecret(ctx: Ctx, projectId: ProjectId): Promise<string | undefined> {
  const dk = await dataKeyFor(ctx, projectId);
  const secret = newSecret();
  const made = await store.insertSecret(ctx.db, {
    project_id: projectId,
    data_key_id: dk.id,
    secret_ct: sealField(dk, projectId, CURRENT, secret),
  });
  return made ? secret : undefined;
}

/**
 * A new secret for the project, shown only here. The old one keeps signing beside it for 24 h
 * (project clock), so receivers can switch without losing a message.
 */
export async function rotateWebhookSecret(ctx: Ctx, projectId: ProjectId) {
  const project = await findProject(ctx.db, projectId);
  if (!project) throw new DomainError('NotFound', `project ${projectId} not found`);
  const dk = await dataKeyFor(ctx, projectId);
  const fresh = newSecret();
  return ctx.db.tx(async (q) => {
    const row = await store.lockSecret(q, projectId);
    const now = nowFor(project);
    if (!row) {
      await store.insertSecret(q, { project_id: projectId, data_key_id: dk.id, secret_ct: sealField(dk, projectId, CURRENT, fresh) });
      return { project_id: projectId, webhook_secret: fresh };
    }
    const current = openField(dk, projectId, CURRENT, row.secret_ct);
    const expires = new Date(now.getTime() + ROTATION_GRACE_MS);
    await store.updateSecret(q, {
      project_id: projectId,
      data_key_id: dk.id,
      secret_ct: sealField(dk, projectId, CURRENT, fresh),
      previous_ct: sealField(dk, projectId, PREVIOUS, current),
      previous_expires: expires,
      rotated: now,
    });
    return { project_id: projectId, webhook_secret: fresh, previous_secret_expires: iso(expires) };
  });
}

/**
 * The secrets to sign with now: the current one, and the previous one during its 24 h.
 * `found`: the project's secret row when the caller read it already (with others: webhook-delivery.ts).
 */
export async function signingSecrets(
  ctx: Ctx,
  project: Pick<ProjectRow, 'id' | 'clock_offset_ms'>,
  found?: store.SecretRow,
): Promise<string[]> {
  let row = found ?? (await store.findSecret(ctx.db, project.id));
  // Projects made before webhooks existed get a secret on first use (`webhook-secret rotate` shows one).
  if (!row) await createWebhookSecret(ctx, project.id);
  row ??= (await store.findSecret(ctx.db, project.id))!;
  const dk = await dataKeyFor(ctx, project.id);
  const secrets = [openField(dk, project.id, CURRENT, row.secret_ct)];
  if (row.previous_ct && row.previous_expires && nowFor(project) < new Date(row.previous_expires))
    secrets.push(openField(dk, project.id, PREVIOUS, row.previous_ct));
  return secrets;
}

/** Project created hook: a new project gets its secret at once; `project create` shows it (the only time it is shown). */
export const makeWebhookSecret: ProjectCreatedHook = async (ctx, projectId) => {
  const secret = await createWebhookSecret(ctx, projectId);
  return secret ? { webhook_secret: secret } : undefined;
};

// ---- outbox -> deliveries ------------------------------------------------------------------

/** The receivers of an order: its own webhook_url, else the project's; plus its payment link's. */
async function targetsFor(q: Queryable, order: OrderRow): Promise<WebhookTarget[]> {
  const own = ownUrl(order);
  const projectUrl = own ? null : await store.projectWebhookUrl(q, order.project_id);
  const linkUrl = order.payment_link_id ? await store.linkWebhookUrl(q, order.project_id, order.payment_link_id) : null;
  return pickTargets(own, projectUrl, linkUrl);
}

const ownUrl = (order: OrderRow) =>
  typeof order.body?.webhook_url === 'string' && order.body.webhook_url ? (order.body.webhook_url as string) : null;

function pickTargets(own: string | null, projectUrl: string | null, linkUrl: string | null): WebhookTarget[] {
  const found: WebhookTarget[] = [];
  if (own) found.push({ url: own, target: 'order' });
  else if (projectUrl) found.push({ url: projectUrl, target: 'project' });
  if (linkUrl) found.push({ url: linkUrl, target: 'payment_link' });
  const seen = new Set<string>();
  return found.filter((t) => !seen.has(t.url) && seen.add(t.url));
}

async function queueDeliveries(
  q: Queryable,
  order: OrderRow,
  targets: WebhookTarget[],
  now: Date,
  from: { outboxId: number | null; status: string; resend: boolean },
) {
  const made: string[] = [];
  for (const t of targets) {
    const id = newId();
    await store.insertDelivery(q, {
      id,
      project_id: order.project_id,
      order_id: order.id,
      outbox_id: from.outboxId,
      order_status: from.status,
      target: t.target,
      resend: from.resend,
      url: t.url,
      next_attempt_at: now,
      created: now,
    });
    made.push(id);
  }
  await store.scheduleOrderJob(q, order.project_id, order.id, now);
  return made;
}

/**
 * Order status hook: a delivery per receiver and the order's delivery job, written in the
 * change's one statement (store/db/writes.ts) with the outbox row it names (the CTE w.outbox), so a
 * crash loses none of them. The receivers: the order's webhook_url, else the project's; and the
 * webhook URL of the order's payment link, read in the statement.
 */
export const queueWebhooks: OrderStatusHook = (w, order, _from, to, now, project) => {
  const outbox = w.outbox;
  if (!outbox) throw new Error('an order status change writes its outbox row before its hooks');
  const own = ownUrl(order);
  const targets = pickTargets(own, own ? null : project.webhook_url, null);
  const row = (target: string) => ({
    id: newId(),
    project_id: order.project_id,
    order_id: order.id,
    order_status: to,
    target,
    resend: false,
    next_attempt_at: now,
    created: now,
  });
  for (const t of targets) w.add(store.deliveryAfterOutboxPart({ ...row(t.target), url: t.url }, outbox));
  const link = order.payment_link_id;
  if (link) w.add(store.linkDeliveryAfterOutboxPart(row('payment_link'), link, targets[0]?.url ?? null, outbox));
  if (!targets.length && !link) return;
  w.add(store.orderJobPart(order.project_id, order.id, now, targets.length ? undefined : (link ?? undefined)));
  w.notifyJobs();
};

/** Sets (or, with null, clears) the project's webhook URL: the fallback for orders without their own. */
export async function setProjectWebhookUrl(ctx: Ctx, projectId: ProjectId, url: string | null) {
  const project = await findProject(ctx.db, projectId);
  if (!project) throw new DomainError('NotFound', `project ${projectId} not found`);
  if (url !== null) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      /* below */
    }
    if (!parsed || !/^https?:$/.test(parsed.protocol) || url.length > 2048) throw invalid('url', 'url must be an absolute http(s) URL');
    await checkPublicUrls(ctx, project, { url });
  }
  await setWebhookUrl(ctx.db, projectId, url);
  ctx.keyCache?.clear();
  return { project_id: projectId, webhook_url: url };
}

// ---- delivery log and resend ---------------------------------------------------------------

function attemptView(a: AttemptRow) {
  return {
    attempt: a.attempt,
    time: iso(a.attempted)!,
    url: a.url,
    response_status: a.response_status ?? undefined,
    response_excerpt: a.response_excerpt ?? undefined,
    error: a.error ?? undefined,
    duration_ms: a.duration_ms,
    next_retry: iso(a.next_retry),
  };
}

export function deliveryView(d: DeliveryRow, attempts: AttemptRow[], now: Date) {
  const own = attempts.filter((a) => a.delivery_id === d.id);
  const interrupted = interruptedAttempts(
    d,
    own.map((a) => a.attempt),
    now,
  ).map((n) => ({ attempt: n, url: d.url, interrupted: true, error: INTERRUPTED }));
  return {
    id: d.id,
    event: d.event,
    order_status: d.order_status ?? undefined,
    url: d.url,
    target: d.target,
    resend: d.resend,
    status: d.status,
    created: iso(d.created)!,
    completed: iso(d.completed),
    next_attempt: d.status === 'pending' ? iso(d.next_attempt_at) : undefined,
    attempts: [...own.map(attemptView), ...interrupted].sort((a, b) => a.attempt - b.attempt),
  };
}

/** GET /v1/orders/{id}/webhooks/: every delivery of the order, oldest first, with its attempts. */
export async function deliveryLog(ctx: Ctx, project: ProjectRow, orderId: OrderId) {
  if (!(await findOrder(ctx.db, project.id, orderId))) throw notFound('order');
  const deliveries = await store.deliveriesOf(ctx.db, project.id, orderId);
  const attempts = await store.attemptsOf(
    ctx.db,
    project.id,
    deliveries.map((d) => d.id),
  );
  return { order_id: orderId, deliveries: deliveries.map((d) => deliveryView(d, attempts, nowFor(project))) };
}

/** POST /v1/orders/{id}/webhooks/resend/: a new delivery to each current receiver, after any still pending. */
export async function resendWebhooks(ctx: Ctx, project: ProjectRow, orderId: OrderId) {
  const ids = await ctx.db.tx(async (q) => {
    const order = await findOrder(q, project.id, orderId, true);
    if (!order) throw notFound('order');
    const targets = await targetsFor(q, order);
    if (!targets.length)
      throw new DomainError('Forbidden', 'no webhook URL: set webhook_url on the order, or a webhook URL on the project');
    return queueDeliveries(q, order, targets, nowFor(project), { outboxId: null, status: order.status, resend: true });
  });
  const all = await store.deliveriesOf(ctx.db, project.id, orderId);
  return { order_id: orderId, deliveries: all.filter((d) => ids.includes(d.id)).map((d) => deliveryView(d, [], nowFor(project))) };
}
