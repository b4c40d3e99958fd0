import type { Queryable } from '../db/db.ts';

/**
 * Sign-in attempts per scope, counted atomically: one statement increments (or starts a fresh
 * window), and a lock is set by a compare-and-set update, so parallel attempts are never lost.
 */

export interface Attempt {
  /** this attempt's number within the window (not counted while locked) */
  failures: number;
  locked_until: Date | null;
}

/**
 * Counts one attempt of `scope` at `now`: a fresh window when the last one began before
 * `windowStart` or a lock has ended; nothing changes while the scope is locked.
 */
export async function countAttempt(q: Queryable, scope: string, now: Date, windowStart: Date): Promise<Attempt> {
  const [row] = await q.query<Attempt>(
    `INSERT INTO portal_sign_in_failures AS f (scope, failures, first_failure, locked_until) VALUES ($1, 1, $2, NULL)
     ON CONFLICT (scope) DO UPDATE SET
       failures = CASE WHEN f.locked_until > $2 THEN f.failures
                       WHEN f.locked_until IS NOT NULL OR f.first_failure < $3 THEN 1 ELSE f.failures + 1 END,
       first_failure = CASE WHEN f.locked_until > $2 THEN f.first_failure
                            WHEN f.locked_until IS NOT NULL OR f.first_failure < $3 THEN $2 ELSE f.first_failure END,
       locked_until = CASE WHEN f.locked_until > $2 THEN f.locked_until ELSE NULL END
     RETURNING failures, locked_until`,
    [scope, now, windowStart],
  );
  return row;
}

/**
 * Locks the scope unless it is locked already: for `baseSeconds` × 2^(earlier locks), at most
 * `maxSeconds`; a scope whose last lock ended before `forgetBefore` starts again at the base.
 * Answers the new lock's end when this call set it (undefined: another request did first).
 */
export async function lock(
  q: Queryable,
  scope: string,
  now: Date,
  o: { baseSeconds: number; maxSeconds: number; forgetBefore: Date },
): Promise<Date | undefined> {
  const [row] = await q.query<{ locked_until: Date }>(
    `WITH cur AS (
       SELECT scope, CASE WHEN locked_until IS NOT NULL AND locked_until < $5 THEN 0 ELSE locks END AS locks
       FROM portal_sign_in_failures WHERE scope = $1
     )
     UPDATE portal_sign_in_failures f
     SET locked_until = $2::timestamptz + LEAST($3::float8 * power(2, LEAST(cur.locks, 30)), $4::float8) * interval '1 second',
         locks = cur.locks + 1, failures = 0, first_failure = $2
     FROM cur WHERE f.scope = cur.scope AND (f.locked_until IS NULL OR f.locked_until <= $2)
     RETURNING f.locked_until`,
    [scope, now, o.baseSeconds, o.maxSeconds, o.forgetBefore],
  );
  return row ? new Date(row.locked_until) : undefined;
}

/** The lock of a scope, if any (for the seconds to wait when another request set it). */
export async function lockOf(q: Queryable, scope: string): Promise<Date | null> {
  const [row] = await q.query<{ locked_until: Date | null }>('SELECT locked_until FROM portal_sign_in_failures WHERE scope = $1', [scope]);
  return row?.locked_until ? new Date(row.locked_until) : null;
}

/** A success: the attempt it counted is taken back (never below zero). */
export async function uncount(q: Queryable, scope: string) {
  await q.query('UPDATE portal_sign_in_failures SET failures = GREATEST(failures - 1, 0) WHERE scope = $1 AND locked_until IS NULL', [
    scope,
  ]);
}

/** A success of the owner: the scope starts afresh, earlier locks forgotten. */
export async function clear(q: Queryable, scope: string) {
  await q.query('DELETE FROM portal_sign_in_failures WHERE scope = $1', [scope]);
}
