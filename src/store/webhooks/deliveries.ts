import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';
import type { OrderId, ProjectId } from '../../domain/ids.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  id: string;
  project_id: string;
  order_id: string;
  outbox_id: number | null;
  seq: number;
  event: string;
  order_status: string | null;
  target: string;
  resend: boolean;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  created: Date;
  completed: Date | null;
}

export interface AttemptRow {
  id: number;
  project_id: string;
  delivery_id: string;
  attempt: number;
  attempted: Date;
  url: string;
  response_status: number | null;
  /** the start of the receiver's answer (migrations/241_webhook_log.sql) */
  response_excerpt: string | null;
  error: string | null;
  duration_ms: number;
  next_retry: Date | null;
}

export interface SecretRow {
  project_id: string;
  data_key_id: string;
  secret_ct: string;
  previous_ct: string | null;
  previous_expires: Date | null;
  created: Date;
  rotated: Date | null;
}

const JOB_KIND = 'deliver_webhook';

export async function insertDelivery(
  q: Queryable,
  d: Pick<
    DeliveryRow,
    'id' | 'project_id' | 'order_id' | 'outbox_id' | 'order_status' | 'target' | 'resend' | 'url' | 'next_attempt_at' | 'created'
  >,
) {
  await q.query(
    `INSERT INTO webhook_deliveries (id, project_id, order_id, outbox_id, order_status, target, resend, url, next_attempt_at, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
    [d.id, d.project_id, d.order_id, d.outbox_id, d.order_status, d.target, d.resend, d.url, d.next_attempt_at, d.created],
  );
}

/** The oldest pending delivery of each URL of an order: the only ones that may go out. */
export async function pendingHeads(q: Queryable, projectId: ProjectId, orderId: OrderId): Promise<DeliveryRow[]> {
  return q.query<DeliveryRow>(
    `SELECT DISTINCT ON (url) * FROM webhook_deliveries
     WHERE project_id = $1 AND order_id = $2 AND status = 'pending' ORDER BY url, seq`,
    [projectId, orderId],
  );
}

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** pendingHeads of many orders in one statement. */
export async function pendingHeadsOf(q: Queryable, orders: Array<{ project_id: string; order_id: string }>): Promise<DeliveryRow[]> {
  if (!orders.length) return [];
  return q.query<DeliveryRow>(
    `SELECT DISTINCT ON (d.order_id, d.url) d.* FROM webhook_deliveries d
     JOIN unnest($1::uuid[], $2::uuid[]) AS o(project_id, order_id) ON d.project_id = o.project_id AND d.order_id = o.order_id
     WHERE d.status = 'pending' ORDER BY d.order_id, d.url, d.seq`,
    [orders.map((o) => o.project_id), orders.map((o) => o.order_id)],
  );
}

/** The secrets of several projects (one statement). */
export async function findSecrets(q: Queryable, projectIds: string[]): Promise<SecretRow[]> {
  if (!projectIds.length) return [];
  return q.query<SecretRow>('SELECT * FROM webhook_secrets WHERE project_id = ANY($1::uuid[])', [projectIds]);
}

/**
 * Takes due deliveries for one attempt each, in one statement: counts it and moves next_attempt_at
 * to the item's holdUntil, so no other runner takes it meanwhile, and a runner that dies
 * mid-attempt leaves it due again then. One answer per item, in order: the attempt number, or
 * undefined when another runner was first.
 */
export async function claimAttempts(
  q: Queryable,
  items: Array<{ d: DeliveryRow; now: Date; holdUntil: Date }>,
): Promise<Array<number | undefined>> {
  const rows = await q.query<{ id: string; attempts: number }>(
    `UPDATE webhook_deliveries w SET attempts = w.attempts + 1, next_attempt_at = v.hold
     FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::timestamptz[]) AS v(id, attempts, now, hold)
     WHERE w.id = v.id AND w.status = 'pending' AND w.attempts = v.attempts AND w.next_attempt_at <= v.now RETURNING w.id, w.attempts`,
    [
      items.map((i) => i.d.id),
      items.map((i) => i.d.attempts),
      items.map((i) => i.now.toISOString()),
      items.map((i) => i.holdUntil.toISOString()),
    ],
  );
  const byId = new Map(rows.map((r) => [r.id, r.attempts]));
  return items.map((i) => byId.get(i.d.id));
}

/**
 * A pending delivery held back until `until` without an attempt (its endpoint's circuit breaker
 * is open). False when another runner took it or it moved on meanwhile.
 */
export async function holdDelivery(q: Queryable, d: Pick<DeliveryRow, 'id' | 'project_id' | 'attempts'>, until: Date): Promise<boolean> {
  const rows = await q.query(
    `UPDATE webhook_deliveries SET next_attempt_at = $4 WHERE id = $1 AND project_id = $2 AND status = 'pending' AND attempts = $3 RETURNING id`,
    [d.id, d.project_id, d.attempts, until.toISOString()],
  );
  return rows.length > 0;
}

export interface AttemptRecord {
  d: DeliveryRow;
  a: Omit<AttemptRow, 'id' | 'project_id' | 'delivery_id' | 'url'>;
  next: { status: DeliveryStatus; next_attempt_at: Date | null; completed: Date | null };
}

/**
 * Writes attempts' outcomes in one statement: each its log row and its delivery's new state. One
 * answer per item, in order: undefined when another runner took the delivery over meanwhile; else
 * whether more deliveries of the same order and URL wait behind this one.
 */
export async function recordAttempts(q: Queryable, items: AttemptRecord[]): Promise<Array<{ more: boolean } | undefined>> {
  const col = <V>(f: (r: AttemptRecord) => V) => items.map(f);
  const rows = await q.query<{ id: string; more: boolean }>(
    `WITH v AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::timestamptz[], $5::text[], $6::int[], $7::text[], $8::int[], $9::timestamptz[],
                            $10::text[], $11::timestamptz[], $12::timestamptz[], $13::uuid[], $14::text[])
         AS v(project_id, delivery_id, attempt, attempted, url, response_status, error, duration_ms, next_retry, status, next_attempt_at, completed, order_id, response_excerpt)),
     logged AS (
       INSERT INTO webhook_attempts (project_id, delivery_id, attempt, attempted, url, response_status, error, duration_ms, next_retry, response_excerpt)
       SELECT project_id, delivery_id, attempt, attempted, url, response_status, error, duration_ms, next_retry, response_excerpt FROM v)
     UPDATE webhook_deliveries d SET status = v.status, next_attempt_at = v.next_attempt_at, completed = v.completed,
       last_response_status = v.response_status, last_error = v.error
     FROM v WHERE d.id = v.delivery_id AND d.status = 'pending' AND d.attempts = v.attempt
     RETURNING d.id, EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.order_id = v.order_id AND o.url = v.url AND o.status = 'pending' AND o.id <> v.delivery_id) AS more`,
    [
      col((r) => r.d.project_id),
      col((r) => r.d.id),
      col((r) => r.a.attempt),
      col((r) => r.a.attempted.toISOString()),
      col((r) => r.d.url),
      col((r) => r.a.response_status),
      col((r) => r.a.error),
      col((r) => r.a.duration_ms),
      col((r) => isoOrNull(r.a.next_retry)),
      col((r) => r.next.status),
      col((r) => isoOrNull(r.next.next_attempt_at)),
      col((r) => isoOrNull(r.next.completed)),
      col((r) => r.d.order_id),
      col((r) => r.a.response_excerpt ?? null),
    ],
  );
  const byId = new Map(rows.map((r) => [r.id, { more: r.more }]));
  return items.map((i) => byId.get(i.d.id));
}

export async function deliveriesOf(q: Queryable, projectId: ProjectId, orderId: OrderId): Promise<DeliveryRow[]> {
  return q.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE project_id = $1 AND order_id = $2 ORDER BY seq', [
    projectId,
    orderId,
  ]);
}

export async function attemptsOf(q: Queryable, projectId: ProjectId, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (!deliveryIds.length) return [];
  return q.query<AttemptRow>('SELECT * FROM webhook_attempts WHERE project_id = $1 AND delivery_id = ANY($2::uuid[]) ORDER BY id', [
    projectId,
    deliveryIds,
  ]);
}

export async function projectWebhookUrl(q: Queryable, projectId: ProjectId): Promise<string | null> {
  return (
    (await q.query<{ webhook_url: string | null }>('SELECT webhook_url FROM projects WHERE id = $1', [projectId]))[0]?.webhook_url ?? null
  );
}

/**
 * The webhook_url of a payment link. Guarded so it works before (or without) the links
 * migration: a failing statement would abort the caller's transaction, so ask first.
 */
export async function linkWebhookUrl(q: Queryable, projectId: ProjectId, linkId: string): Promise<string | null> {
  const [present] = await q.query<{ ok: boolean }>("SELECT to_regclass('payment_links') IS NOT NULL AS ok");
  if (!present?.ok) return null;
  const rows = await q.query<{ url: string | null }>(
    "SELECT to_jsonb(l) ->> 'webhook_url' AS url FROM payment_links l WHERE l.project_id = $1 AND l.id = $2",
    [projectId, linkId],
  );
  return rows[0]?.url ?? null;
}

/**
 * Makes the order's delivery job due at runAt. One job per order. While a runner holds the job
 * (locked_until set, even past its lease), run_at is set to a value other than the one claimed,
 * so the worker keeps the job and it runs again; otherwise the earlier time wins.
 */
export async function scheduleOrderJob(q: Queryable, projectId: ProjectId, orderId: OrderId, runAt: Date) {
  const part = orderJobPart(projectId, orderId, runAt);
  await q.query(part.sql, part.params);
  await q.query("SELECT pg_notify('tender_jobs', '')");
}

/**
 * scheduleOrderJob's upsert as a part of one statement (store/db/writes.ts); the statement must also
 * notify. `ifLinkUrl`: only when that payment link has a webhook URL (its order's only receiver).
 */
export function orderJobPart(projectId: ProjectId, orderId: OrderId, runAt: Date, ifLinkUrl?: string): Part {
  const when = ifLinkUrl
    ? `EXISTS (SELECT 1 FROM payment_links l WHERE l.project_id = $1::uuid AND l.id = $4::uuid AND l.webhook_url <> '')`
    : 'true';
  return {
    sql: `INSERT INTO jobs (project_id, kind, ref_id, run_at) SELECT $1::uuid, '${JOB_KIND}', $2::text, $3::timestamptz WHERE ${when}
     ON CONFLICT (kind, ref_id, project_id) DO UPDATE SET run_at = CASE
       WHEN jobs.locked_until IS NULL THEN LEAST(jobs.run_at, EXCLUDED.run_at)
       WHEN date_trunc('milliseconds', jobs.run_at) = date_trunc('milliseconds', EXCLUDED.run_at) THEN EXCLUDED.run_at + interval '1 millisecond'
       ELSE EXCLUDED.run_at END`,
    params: ifLinkUrl ? [projectId, orderId, runAt, ifLinkUrl] : [projectId, orderId, runAt],
  };
}

/**
 * A delivery to the webhook URL of the order's payment link, read in the statement, as a part of
 * the statement that writes the outbox row `outbox`; none when the link has no URL or its URL is
 * `besides` (a receiver of the order already).
 */
export function linkDeliveryAfterOutboxPart(
  d: Pick<DeliveryRow, 'id' | 'project_id' | 'order_id' | 'order_status' | 'target' | 'resend' | 'next_attempt_at' | 'created'>,
  linkId: string,
  besides: string | null,
  outbox: string,
): Part {
  return {
    sql: `INSERT INTO webhook_deliveries (id, project_id, order_id, order_status, target, resend, url, next_attempt_at, created, outbox_id)
     SELECT d.id, d.project_id, d.order_id, d.order_status, d.target, d.resend, l.webhook_url, d.next_attempt_at, d.created, (SELECT id FROM ${outbox})
     FROM jsonb_populate_record(NULL::webhook_deliveries, $1::jsonb) d JOIN payment_links l ON l.project_id = d.project_id AND l.id = $2::uuid
     WHERE l.webhook_url <> '' AND l.webhook_url IS DISTINCT FROM $3::text ON CONFLICT DO NOTHING`,
    params: [JSON.stringify(d), linkId, besides],
  };
}

/**
 * insertDelivery as a part of one statement (store/db/writes.ts) that also writes the outbox row
 * the delivery comes from, as the CTE named `outbox` (its id is known only there).
 */
export function deliveryAfterOutboxPart(
  d: Pick<DeliveryRow, 'id' | 'project_id' | 'order_id' | 'order_status' | 'target' | 'resend' | 'url' | 'next_attempt_at' | 'created'>,
  outbox: string,
): Part {
  const cols = 'id, project_id, order_id, order_status, target, resend, url, next_attempt_at, created';
  return {
    sql: `INSERT INTO webhook_deliveries (${cols}, outbox_id)
     SELECT ${cols}, (SELECT id FROM ${outbox}) FROM jsonb_populate_record(NULL::webhook_deliveries, $1::jsonb) WHERE true ON CONFLICT DO NOTHING`,
    params: [JSON.stringify(d)],
  };
}

/** Moves the running job to runAt unless something rescheduled it since it was claimed. */
export async function rescheduleOrderJob(q: Queryable, orderId: OrderId, claimedRunAt: Date, runAt: Date) {
  await q.query(`UPDATE jobs SET run_at = $3 WHERE kind = '${JOB_KIND}' AND ref_id = $1 AND date_trunc('milliseconds', run_at) = $2`, [
    orderId,
    claimedRunAt,
    runAt,
  ]);
}

export async function findSecret(q: Queryable, projectId: ProjectId): Promise<SecretRow | undefined> {
  return (await q.query<SecretRow>('SELECT * FROM webhook_secrets WHERE project_id = $1', [projectId]))[0];
}

export async function lockSecret(q: Queryable, projectId: ProjectId): Promise<SecretRow | undefined> {
  return (await q.query<SecretRow>('SELECT * FROM webhook_secrets WHERE project_id = $1 FOR UPDATE', [projectId]))[0];
}

/** Inserts the first secret of a project; false when one exists already. */
export async function insertSecret(q: Queryable, s: Pick<SecretRow, 'project_id' | 'data_key_id' | 'secret_ct'>): Promise<boolean> {
  const rows = await q.query(
    'INSERT INTO webhook_secrets (project_id, data_key_id, secret_ct) VALUES ($1, $2, $3) ON CONFLICT (project_id) DO NOTHING RETURNING project_id',
    [s.project_id, s.data_key_id, s.secret_ct],
  );
  return rows.length > 0;
}

export async function updateSecret(
  q: Queryable,
  s: Pick<SecretRow, 'project_id' | 'data_key_id' | 'secret_ct' | 'previous_ct' | 'previous_expires' | 'rotated'>,
) {
  await q.query(
    'UPDATE webhook_secrets SET data_key_id = $2, secret_ct = $3, previous_ct = $4, previous_expires = $5, rotated = $6 WHERE project_id = $1',
    [s.project_id, s.data_key_id, s.secret_ct, s.previous_ct, s.previous_expires, s.rotated],
  );
}
