import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';
import type { JobRow } from '../../domain/entities.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * Schedules (or reschedules) the one job of a kind for a reference. run_at is in the
 * project's clock. Wakes idle workers through NOTIFY when it is due now.
 */
export async function schedule(
  q: Queryable,
  job: { project_id: string; kind: string; ref_id: string; run_at: Date; payload?: Record<string, unknown> },
) {
  const part = schedulePart(job);
  await q.query(part.sql, part.params);
  // NOTIFY serialises commits database-wide, so only work due about now wakes the workers;
  // later work is found by the poll.
  if (dueNow(job.run_at)) await q.query("SELECT pg_notify('tender_jobs', '')");
}

/** schedule's upsert as a part of one statement (store/db/writes.ts); when dueNow(run_at), the statement must also notify. */
export const schedulePart = (job: {
  project_id: string;
  kind: string;
  ref_id: string;
  run_at: Date;
  payload?: Record<string, unknown>;
}): Part => ({
  sql: `INSERT INTO jobs (project_id, kind, ref_id, run_at, payload) SELECT $1::uuid, $2::text, $3::text, $4::timestamptz, $5::jsonb WHERE true
     ON CONFLICT (kind, ref_id, project_id) DO UPDATE SET run_at = EXCLUDED.run_at, payload = EXCLUDED.payload, locked_until = NULL`,
  params: [job.project_id, job.kind, job.ref_id, job.run_at, JSON.stringify(job.payload ?? {})],
});

/** Whether a job at run_at wakes the workers at once (NOTIFY) rather than waiting for their poll. */
export const dueNow = (runAt: Date) => runAt.getTime() <= Date.now() + WAKE_WINDOW_MS;

const WAKE_WINDOW_MS = 2000;

/** cancelJob of several kinds as a part of one statement (store/db/writes.ts). */
export const cancelJobsPart = (kinds: string[], refId: string): Part => ({
  sql: 'DELETE FROM jobs WHERE kind = ANY($1::text[]) AND ref_id = $2::text',
  params: [kinds, refId],
});

/**
 * Claims up to `limit` due jobs with a lease. SKIP LOCKED lets any number of nodes claim
 * side by side without taking the same job; an expired lease makes a crashed node's job due again.
 */
export async function claimDue(q: Queryable, limit: number, leaseMs: number, projectId?: string): Promise<JobRow[]> {
  return q.query<JobRow>(
    `UPDATE jobs SET locked_until = now() + ($2 * interval '1 millisecond'), attempts = attempts + 1
     WHERE id IN (
       SELECT j.id FROM jobs j JOIN projects p ON p.id = j.project_id
       WHERE j.run_at <= now() + (p.clock_offset_ms * interval '1 millisecond')
         AND (j.locked_until IS NULL OR j.locked_until < now())
         AND ($3::uuid IS NULL OR j.project_id = $3::uuid)
       ORDER BY j.run_at, j.id
       LIMIT $1
       FOR UPDATE OF j SKIP LOCKED)
     RETURNING *`,
    [limit, leaseMs, projectId ?? null],
  );
}

/**
 * Due jobs of the project still in the table, on its clock. Asked after a run found nothing more
 * to claim, these are jobs another runner holds: leased, or being claimed right now (its claim
 * not yet committed, so the row still reads unleased; the run's SKIP LOCKED passed it over).
 */
export async function countDueLeft(q: Queryable, projectId: ProjectId): Promise<number> {
  const [r] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs j JOIN projects p ON p.id = j.project_id
     WHERE j.project_id = $1 AND j.run_at <= now() + (p.clock_offset_ms * interval '1 millisecond')`,
    [projectId],
  );
  return r.n;
}

export async function finishJob(q: Queryable, job: JobRow) {
  // Only if untouched since the claim: a handler may have rescheduled its own job.
  await q.query("DELETE FROM jobs WHERE id = $1 AND attempts = $2 AND date_trunc('milliseconds', run_at) = $3", [
    job.id,
    job.attempts,
    job.run_at,
  ]);
  await q.query('UPDATE jobs SET locked_until = NULL WHERE id = $1', [job.id]);
}

/** finishJob for several jobs in one statement. */
export async function finishJobs(q: Queryable, jobs: JobRow[]) {
  await q.query(
    `WITH v AS (SELECT * FROM unnest($1::bigint[], $2::int[], $3::timestamptz[]) AS v(id, attempts, run_at)),
     gone AS (DELETE FROM jobs j USING v WHERE j.id = v.id AND j.attempts = v.attempts AND date_trunc('milliseconds', j.run_at) = v.run_at RETURNING j.id)
     UPDATE jobs SET locked_until = NULL WHERE id IN (SELECT id FROM v) AND id NOT IN (SELECT id FROM gone)`,
    [jobs.map((j) => j.id), jobs.map((j) => j.attempts), jobs.map((j) => new Date(j.run_at).toISOString())],
  );
}

export async function failJob(q: Queryable, job: JobRow, error: string, retryAt: Date) {
  await q.query('UPDATE jobs SET locked_until = NULL, last_error = $2, run_at = $3 WHERE id = $1', [job.id, error.slice(0, 1000), retryAt]);
}

/** Renews the lease of jobs a runner still works on (not of those finished meanwhile: their lock is cleared). */
export async function renewLeases(q: Queryable, ids: number[], leaseMs: number) {
  await q.query(
    "UPDATE jobs SET locked_until = now() + ($2 * interval '1 millisecond') WHERE id = ANY($1::bigint[]) AND locked_until IS NOT NULL",
    [ids, leaseMs],
  );
}

/** Gives claimed jobs a lease of another length (their kind's). */
export async function extendLeases(q: Queryable, ids: number[], leaseMs: number) {
  await q.query("UPDATE jobs SET locked_until = now() + ($2 * interval '1 millisecond') WHERE id = ANY($1::bigint[])", [ids, leaseMs]);
}
