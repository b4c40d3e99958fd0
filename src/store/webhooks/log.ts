import type { Queryable } from '../db/db.ts';
import type { DeliveryRow, DeliveryStatus } from './deliveries.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** The project's webhook log: every delivery of the project, failed ones first; test events. */

export async function projectDeliveries(
  q: Queryable,
  projectId: ProjectId,
  f: { status?: DeliveryStatus; event?: string; limit: number },
): Promise<DeliveryRow[]> {
  return q.query<DeliveryRow>(
    `SELECT * FROM webhook_deliveries WHERE project_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR event = $3)
     ORDER BY (status = 'failed') DESC, created DESC, id DESC LIMIT $4`,
    [projectId, f.status ?? null, f.event ?? null, f.limit],
  );
}

export async function findDelivery(q: Queryable, projectId: ProjectId, id: string): Promise<DeliveryRow | undefined> {
  return (await q.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE project_id = $1 AND id = $2', [projectId, id]))[0];
}

/** A test event sent at once: its delivery, already final, and its one attempt. */
export async function insertTestDelivery(
  q: Queryable,
  d: { id: string; project_id: string; url: string; status: DeliveryStatus; created: Date; completed: Date },
  a: { response_status: number | null; response_excerpt: string | null; error: string | null; duration_ms: number },
) {
  await q.query(
    `INSERT INTO webhook_deliveries (id, project_id, order_id, event, target, url, status, attempts, last_response_status, last_error, created, completed)
     VALUES ($1, $2, NULL, 'test', 'project', $3, $4, 1, $5, $6, $7, $8)`,
    [d.id, d.project_id, d.url, d.status, a.response_status, a.error, d.created, d.completed],
  );
  await q.query(
    `INSERT INTO webhook_attempts (project_id, delivery_id, attempt, attempted, url, response_status, response_excerpt, error, duration_ms)
     VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8)`,
    [d.project_id, d.id, d.created, d.url, a.response_status, a.response_excerpt, a.error, a.duration_ms],
  );
}
