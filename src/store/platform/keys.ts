import type { Queryable } from '../db/db.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** A project's data key, wrapped by one or more master keys (master key id -> sealed key). */
export interface DataKeyRow {
  id: string;
  project_id: string;
  wraps: Record<string, string>;
}

export async function findDataKey(q: Queryable, projectId: ProjectId): Promise<DataKeyRow | undefined> {
  return (await q.query<DataKeyRow>('SELECT id, project_id, wraps FROM data_keys WHERE project_id = $1', [projectId]))[0];
}

/** Adds the project's data key unless another request added one first (then that one stays). */
export async function insertDataKey(q: Queryable, row: DataKeyRow) {
  await q.query('INSERT INTO data_keys (id, project_id, wraps) VALUES ($1, $2, $3) ON CONFLICT (project_id) DO NOTHING', [
    row.id,
    row.project_id,
    JSON.stringify(row.wraps),
  ]);
}

/** Every data key, locked, in project order (rewrapping under a new master key). */
export async function lockAllDataKeys(q: Queryable): Promise<DataKeyRow[]> {
  return q.query<DataKeyRow>('SELECT id, project_id, wraps FROM data_keys ORDER BY project_id FOR UPDATE');
}

export async function setWraps(q: Queryable, id: string, wraps: Record<string, string>) {
  await q.query('UPDATE data_keys SET wraps = $2, modified = now() WHERE id = $1', [id, JSON.stringify(wraps)]);
}
