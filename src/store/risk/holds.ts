import type { Queryable } from '../db/db.ts';

/** The platform hold of a project (docs/risk.md "The platform hold"). */
export interface HoldRow {
  id: string;
  project_id: string;
  reason: string;
  created: Date;
  lifted: Date | null;
  lifted_by: string | null;
}

/** Authorizations sent to the acquirer and how many were declined, per slice of `slice_ms` since `since`. */
export interface SliceRow {
  slice: number;
  sent: number;
  declined: number;
}

/**
 * A project's authorizations that reached the acquirer since `since`, per slice (slice n covers
 * [since + n * slice_ms, since + (n + 1) * slice_ms)). A refused attempt is no authorization: the
 * limits' own refusals never count here. Nothing from before the project's last lifted hold counts.
 */
export const authorizationSlices = (q: Queryable, projectId: string, since: Date, sliceMs: number) =>
  q.query<SliceRow>(
    `SELECT floor(extract(epoch FROM (a.created - $2::timestamptz)) * 1000 / $3)::int AS slice,
            count(*)::int AS sent, (count(*) FILTER (WHERE t.status = 'declined'))::int AS declined
       FROM acquirer_attempts a JOIN transactions t ON t.id = a.transaction_id AND t.project_id = a.project_id
      WHERE a.project_id = $1 AND a.kind = 'authorization' AND a.created >= $2
        -- a rule's refusal after 3-D Secure (services/risk/after-3ds.ts) was never sent
        AND a.response_code IS DISTINCT FROM 'RISK-REFUSED'
        -- a lifted hold starts afresh: what tripped it never trips it again
        AND a.created > COALESCE((SELECT max(h.lifted) FROM risk_holds h WHERE h.project_id = $1), '-infinity'::timestamptz)
      GROUP BY 1 ORDER BY 1`,
    [projectId, since, sliceMs],
  );

/** Holds the project, unless it is held already: answers the new hold, or undefined. */
export async function openHold(q: Queryable, h: Pick<HoldRow, 'id' | 'project_id' | 'reason' | 'created'>): Promise<HoldRow | undefined> {
  const [row] = await q.query<HoldRow>(
    `INSERT INTO risk_holds (id, project_id, reason, created) VALUES ($1, $2, $3, $4)
     ON CONFLICT (project_id) WHERE lifted IS NULL DO NOTHING RETURNING *`,
    [h.id, h.project_id, h.reason, h.created],
  );
  return row;
}

/** The holds in force (every project's, or one's). */
export const holdsInForce = (q: Queryable, projectId?: string) =>
  q.query<HoldRow>(`SELECT * FROM risk_holds WHERE lifted IS NULL AND ($1::uuid IS NULL OR project_id = $1) ORDER BY created`, [
    projectId ?? null,
  ]);

/** Lifts the project's hold in force: answers it, or undefined when there was none. */
export async function liftHold(q: Queryable, projectId: string, by: string, now: Date): Promise<HoldRow | undefined> {
  const [row] = await q.query<HoldRow>(
    'UPDATE risk_holds SET lifted = $3, lifted_by = $2 WHERE project_id = $1 AND lifted IS NULL RETURNING *',
    [projectId, by, now],
  );
  return row;
}
