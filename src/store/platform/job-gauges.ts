import type { Queryable } from '../db/db.ts';

export interface JobGauge {
  kind: string;
  /** due on its project's clock and not leased */
  due: number;
  /** leased by a runner now */
  running: number;
  /** how long the oldest due, unleased job has been due (seconds; 0 when none) */
  lag_seconds: number;
}

/**
 * The jobs table by kind, for the metrics tender_jobs_* (read on each scrape, one statement).
 * Times on each project's clock, as the worker claims them (store/platform/jobs.ts claimDue).
 */
export async function jobGauges(q: Queryable): Promise<JobGauge[]> {
  return q.query<JobGauge>(
    `SELECT j.kind,
       count(*) FILTER (WHERE free AND overdue >= 0)::int AS due,
       count(*) FILTER (WHERE NOT free)::int AS running,
       coalesce(max(overdue) FILTER (WHERE free AND overdue >= 0), 0)::float8 AS lag_seconds
     FROM (SELECT j.kind, (j.locked_until IS NULL OR j.locked_until < now()) AS free,
             extract(epoch FROM now() + (p.clock_offset_ms * interval '1 millisecond') - j.run_at) AS overdue
           FROM jobs j JOIN projects p ON p.id = j.project_id) j
     GROUP BY j.kind`,
  );
}
