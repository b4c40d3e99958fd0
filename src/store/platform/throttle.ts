import type { Queryable } from '../db/db.ts';

/** Counts one hit of a bucket in its window; answers the window's hits so far. */
export async function hit(q: Queryable, bucket: string, windowStart: Date): Promise<number> {
  const [row] = await q.query<{ hits: number }>(
    `INSERT INTO throttle_hits (bucket, window_start, hits) VALUES ($1, $2, 1)
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = throttle_hits.hits + 1 RETURNING hits`,
    [bucket, windowStart],
  );
  return row.hits;
}

/** Forgets windows that ended before `before`, and card attempts older than `attemptsBefore`. */
export async function forgetOld(q: Queryable, before: Date, attemptsBefore: Date) {
  await q.query('DELETE FROM throttle_hits WHERE window_start < $1', [before]);
  await q.query('DELETE FROM card_attempts WHERE created < $1', [attemptsBefore]);
}

export interface CardAttempt {
  transaction_id: string;
  project_id: string;
  payment_link_id: string | null;
  client: string;
  created: Date;
}

export async function recordCardAttempt(q: Queryable, a: CardAttempt) {
  await q.query(
    `INSERT INTO card_attempts (transaction_id, project_id, payment_link_id, client, created) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (transaction_id) DO NOTHING`,
    [a.transaction_id, a.project_id, a.payment_link_id, a.client, a.created],
  );
}

/**
 * When the declines of hosted card attempts since `since`, from this client or through this
 * link, number `max` or more: the moment the newest `max` of them began (the window passes
 * for the oldest of those then); else undefined.
 */
export async function declinedSince(
  q: Queryable,
  by: { client: string } | { linkId: string },
  since: Date,
  max: number,
): Promise<Date | undefined> {
  const [column, value] = 'client' in by ? ['a.client', by.client] : ['a.payment_link_id', by.linkId];
  const [row] = await q.query<{ created: Date }>(
    `SELECT a.created FROM card_attempts a JOIN transactions t ON t.id = a.transaction_id AND t.project_id = a.project_id
     WHERE ${column} = $1 AND a.created > $2 AND t.status = 'declined'
     ORDER BY a.created DESC OFFSET $3 LIMIT 1`,
    [value, since, max - 1],
  );
  return row ? new Date(row.created) : undefined;
}
