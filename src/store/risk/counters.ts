import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';

/**
 * The velocity counters (docs/risk.md): one row per bucket (a limit's subject, keyed) and fixed
 * window, counted with an upsert, so concurrent attempts on any number of nodes each get their own
 * count.
 */

/** A bucket's numbers as the screening statement read them. */
export interface CounterRow {
  bucket: string;
  /** this window's attempts, this one included */
  attempts: number;
  /** the window before's */
  previous: number;
  /** the current and `history` windows before: attempts and declines */
  hour_attempts: number;
  hour_declines: number;
  /** the project's enabled rules in order (store/risk/rules.ts), and its platform hold's reason: read in the same statement */
  rules: Array<{ id: string; name: string; action: string; conditions: unknown }> | null;
  held: string | null;
}

export interface Screened {
  transaction_id: string;
  project_id: string;
  order_id: string;
  /** distinct, sorted (the upsert takes their rows in one order: no deadlock between two screenings) */
  buckets: string[];
  window_start: Date;
  window_ms: number;
  history: number;
  created: Date;
}

/**
 * Counts one attempt in every bucket and answers each bucket's numbers, and remembers which
 * buckets the transaction counted in (for its decline): ONE statement, one round trip.
 */
export async function countAttempt(q: Queryable, s: Screened): Promise<CounterRow[]> {
  const previous = new Date(s.window_start.getTime() - s.window_ms);
  const since = new Date(s.window_start.getTime() - s.history * s.window_ms);
  return q.query<CounterRow>(
    `WITH hit AS (
       INSERT INTO risk_counters (bucket, window_start, attempts, declines)
       SELECT b, $2::timestamptz, 1, 0 FROM unnest($1::text[]) AS b
       ON CONFLICT (bucket, window_start) DO UPDATE SET attempts = risk_counters.attempts + 1
       RETURNING bucket, attempts, declines
     ), past AS (
       SELECT bucket, window_start, attempts, declines FROM risk_counters
        WHERE bucket = ANY($1::text[]) AND window_start >= $3::timestamptz AND window_start < $2::timestamptz
     ), checked AS (
       INSERT INTO risk_checks (transaction_id, project_id, order_id, buckets, window_start, created)
       VALUES ($5::uuid, $6::uuid, $7::uuid, $1::text[], $2::timestamptz, $8::timestamptz)
       ON CONFLICT (transaction_id, project_id) DO UPDATE SET buckets = EXCLUDED.buckets, window_start = EXCLUDED.window_start, counted = false
     )
     SELECT h.bucket, h.attempts,
            COALESCE((SELECT p.attempts FROM past p WHERE p.bucket = h.bucket AND p.window_start = $4::timestamptz), 0)::int AS previous,
            (h.attempts + COALESCE((SELECT sum(p.attempts) FROM past p WHERE p.bucket = h.bucket), 0))::int AS hour_attempts,
            (h.declines + COALESCE((SELECT sum(p.declines) FROM past p WHERE p.bucket = h.bucket), 0))::int AS hour_declines,
            (SELECT json_agg(json_build_object('id', r.id, 'name', r.name, 'action', r.action, 'conditions', r.conditions) ORDER BY r.position)
               FROM risk_rules r WHERE r.project_id = $6::uuid AND r.enabled) AS rules,
            (SELECT reason FROM risk_holds WHERE project_id = $6::uuid AND lifted IS NULL LIMIT 1) AS held
       FROM hit h`,
    [s.buckets, s.window_start, since, previous, s.transaction_id, s.project_id, s.order_id, s.created],
    { prepare: true },
  );
}

/**
 * The counter rows of the screened attempts of one order or transaction ($1 project, $2 the id),
 * locked in the order of their keys, as the screening's upsert takes them: two payments declined at
 * once (their buckets overlap: the project's, a shared address) wait for each other instead of
 * deadlocking, as a join's update in no particular order did.
 */
const lockedInOrder = (by: string) =>
  `SELECT k.bucket, k.window_start FROM risk_counters k
     JOIN risk_checks rc ON k.window_start = rc.window_start AND k.bucket = ANY (rc.buckets)
    WHERE rc.project_id = $1 AND ${by} = $2 AND NOT rc.counted
    ORDER BY k.bucket, k.window_start FOR UPDATE OF k`;

/**
 * The declines of an order's screened attempts, as parts of the statement that fails the order
 * (an order status hook): each counter the attempt counted in gets its decline, once.
 */
export const declineParts = (projectId: string, orderId: string): Part[] => [
  {
    sql: `UPDATE risk_counters c SET declines = c.declines + 1
           WHERE (c.bucket, c.window_start) IN (${lockedInOrder('rc.order_id')})`,
    params: [projectId, orderId],
  },
  settledPart(projectId, orderId),
];

/**
 * The decline of one screened attempt whose order stays open (the order page takes another card),
 * as a part of the statement that fails the attempt: its counters get the decline, once.
 */
export const attemptDeclineParts = (projectId: string, transactionId: string): Part[] => [
  {
    sql: `UPDATE risk_counters c SET declines = c.declines + 1
           WHERE (c.bucket, c.window_start) IN (${lockedInOrder('rc.transaction_id')})`,
    params: [projectId, transactionId],
  },
  {
    sql: 'UPDATE risk_checks SET counted = true WHERE project_id = $1 AND transaction_id = $2 AND NOT counted',
    params: [projectId, transactionId],
  },
];

/** An order's screened attempts marked counted: an order that ends otherwise (paid, cancelled) adds no decline later. */
export const settledPart = (projectId: string, orderId: string): Part => ({
  sql: 'UPDATE risk_checks SET counted = true WHERE project_id = $1 AND order_id = $2 AND NOT counted',
  params: [projectId, orderId],
});

/** Forgets windows that ended before `countersBefore`, and the screenings older than `checksBefore`. */
export async function forgetOld(q: Queryable, countersBefore: Date, checksBefore: Date) {
  await q.query('DELETE FROM risk_counters WHERE window_start < $1', [countersBefore]);
  await q.query('DELETE FROM risk_checks WHERE created < $1', [checksBefore]);
}
