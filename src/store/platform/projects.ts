import type { Queryable } from '../db/db.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { ProjectSettings } from '../../domain/project.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** Every change to a project or its keys is announced here, so processes drop their cached keys (services/platform/key-cache.ts). */
export const PROJECTS_CHANNEL = 'tender_projects';

/** Delivered when the changing transaction commits. */
async function announceChange(q: Queryable, projectId: ProjectId) {
  await q.query(`SELECT pg_notify('${PROJECTS_CHANNEL}', $1)`, [projectId]);
}

export async function insertMerchant(q: Queryable, id: string, name: string) {
  await q.query('INSERT INTO merchants (id, name) VALUES ($1, $2)', [id, name]);
}

export async function merchantExists(q: Queryable, id: string) {
  return (await q.query('SELECT 1 FROM merchants WHERE id = $1', [id])).length > 0;
}

export async function insertProject(q: Queryable, p: Omit<ProjectRow, 'created' | 'clock_offset_ms' | 'webhook_url'>) {
  await q.query('INSERT INTO projects (id, merchant_id, name, mode, settings) VALUES ($1, $2, $3, $4, $5)', [
    p.id,
    p.merchant_id,
    p.name,
    p.mode,
    JSON.stringify(p.settings),
  ]);
}

export async function findProject(q: Queryable, id: string): Promise<ProjectRow | undefined> {
  return (await q.query<ProjectRow>('SELECT * FROM projects WHERE id = $1', [id]))[0];
}

export async function findProjects(q: Queryable, ids: string[]): Promise<ProjectRow[]> {
  if (!ids.length) return [];
  return q.query<ProjectRow>('SELECT * FROM projects WHERE id = ANY($1::uuid[])', [ids]);
}

export async function listProjects(q: Queryable): Promise<ProjectRow[]> {
  return q.query<ProjectRow>('SELECT * FROM projects ORDER BY created');
}

export async function updateProjectSettings(q: Queryable, id: string, settings: Partial<ProjectSettings>) {
  await q.query('UPDATE projects SET settings = $2 WHERE id = $1', [id, JSON.stringify(settings)]);
  await announceChange(q, id);
}

export async function setWebhookUrl(q: Queryable, id: string, url: string | null) {
  await q.query('UPDATE projects SET webhook_url = $2 WHERE id = $1', [id, url]);
  await announceChange(q, id);
}

/** Moves a project's clock forward by ms; it never goes back. Returns the new offset. */
export async function advanceClock(q: Queryable, id: string, ms: number): Promise<number> {
  const rows = await q.query<{ clock_offset_ms: number }>(
    'UPDATE projects SET clock_offset_ms = clock_offset_ms + $2 WHERE id = $1 RETURNING clock_offset_ms',
    [id, Math.max(0, Math.round(ms))],
  );
  await announceChange(q, id);
  return rows[0].clock_offset_ms;
}

export async function insertApiKey(q: Queryable, k: { id: string; project_id: string; key_hash: string; hint: string }) {
  await q.query('INSERT INTO api_keys (id, project_id, key_hash, hint) VALUES ($1, $2, $3, $4)', [k.id, k.project_id, k.key_hash, k.hint]);
}

export async function revokeKeys(q: Queryable, projectId: ProjectId, exceptId: string) {
  await q.query('UPDATE api_keys SET revoked = now() WHERE project_id = $1 AND id <> $2 AND revoked IS NULL', [projectId, exceptId]);
  await announceChange(q, projectId);
}

export async function projectByKeyHash(q: Queryable, hash: string): Promise<ProjectRow | undefined> {
  return (
    await q.query<ProjectRow>(
      // Runs on every API request, so prepared once per connection. The columns are named: a
      // prepared `p.*` fails ("cached plan must not change result type") once a migration adds one.
      `SELECT p.id, p.merchant_id, p.name, p.mode, p.webhook_url, p.settings, p.clock_offset_ms, p.created
       FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.key_hash = $1 AND k.revoked IS NULL`,
      [hash],
      { prepare: 'project_by_key_hash' },
    )
  )[0];
}

/** Notes when an API key was last used, at most once a minute per key. */
export async function touchKey(q: Queryable, keyHash: string) {
  await q.query(
    "UPDATE api_keys SET last_used = now() WHERE key_hash = $1 AND (last_used IS NULL OR last_used < now() - interval '1 minute')",
    [keyHash],
  );
}

/** One setting of the project's settings, leaving the others as they are (no read-modify-write). */
export async function setProjectTimeZone(q: Queryable, id: string, zone: string) {
  await q.query(`UPDATE projects SET settings = jsonb_set(settings, '{time_zone}', to_jsonb($2::text)) WHERE id = $1`, [id, zone]);
  await announceChange(q, id);
}
