import type { Queryable } from '../db/db.ts';

/**
 * Pending webhook deliveries and the age of the oldest (seconds, 0 when none), for the metrics
 * tender_webhook_backlog*: one statement on each scrape, over the partial index of pending rows.
 */
export async function webhookBacklog(q: Queryable): Promise<{ pending: number; oldest_seconds: number }> {
  const [r] = await q.query<{ pending: number; oldest_seconds: number }>(
    `SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(created)), 0)::float8 AS oldest_seconds
     FROM webhook_deliveries WHERE status = 'pending'`,
  );
  return r;
}
