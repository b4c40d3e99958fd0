import { createHash } from 'node:crypto';
import type { Queryable } from '../db/db.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** Keys live this long (in the project's clock), then the key may be used afresh. */
const KEY_TTL_MS = 24 * 3600 * 1000;

export interface IdempotencyRow {
  project_id: string;
  key: string;
  method: string;
  path: string;
  request_hash: string;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
  created: Date;
  /** a claim committed before an acquirer call: held until then (wall clock), answered or not */
  running_until: Date | null;
}

export interface Claim {
  project_id: string;
  key: string;
  method: string;
  path: string;
  request_hash: string;
  now: Date;
}

/**
 * The key's lock for the rest of the transaction, or false when a live request holds it. An
 * advisory lock, not a row: it never waits, and it ends with its transaction, so a request whose
 * process or connection died holds nothing (its transaction, claim included, is rolled back).
 */
export async function lockKey(q: Queryable, projectId: ProjectId, key: string): Promise<boolean> {
  const id = createHash('sha256').update(`${projectId}\n${key}`).digest().readBigInt64BE(0);
  const [row] = await q.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1::bigint) AS ok', [id.toString()]);
  return Boolean(row?.ok);
}

/**
 * Takes the key for this request, under lockKey: true when it is ours to run (new, expired, or
 * left without a response, which under the lock means no live request has it); otherwise the
 * stored answer. A new key also makes sure the project's cleanup job is waiting (one round trip).
 */
export async function claimKey(q: Queryable, c: Claim): Promise<true | IdempotencyRow> {
  const inserted = await q.query(
    `WITH k AS (
       INSERT INTO idempotency_keys (project_id, key, method, path, request_hash, created) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (project_id, key) DO NOTHING RETURNING key),
     j AS (
       INSERT INTO jobs (project_id, kind, ref_id, run_at) SELECT $1, 'idempotency_cleanup', $1::text, $7 WHERE EXISTS (SELECT 1 FROM k)
       ON CONFLICT (kind, ref_id, project_id) DO NOTHING)
     SELECT key FROM k`,
    [c.project_id, c.key, c.method, c.path, c.request_hash, c.now, new Date(c.now.getTime() + KEY_TTL_MS + 1000)],
  );
  if (inserted.length) return true;
  const taken = await q.query(
    `UPDATE idempotency_keys SET method = $3, path = $4, request_hash = $5, created = $6,
       response_status = NULL, response_headers = NULL, response_body = NULL
     WHERE project_id = $1 AND key = $2 AND (created <= $7 OR response_status IS NULL AND (running_until IS NULL OR running_until <= $8))
     RETURNING key`,
    [c.project_id, c.key, c.method, c.path, c.request_hash, c.now, new Date(c.now.getTime() - KEY_TTL_MS), new Date()],
  );
  if (taken.length) return true;
  const [row] = await q.query<IdempotencyRow>('SELECT * FROM idempotency_keys WHERE project_id = $1 AND key = $2', [c.project_id, c.key]);
  return row ?? claimKey(q, c); // deleted by the cleanup between the two statements: try again
}

/**
 * Takes the key for a request that calls the acquirer, committed at once (autocommit): a new
 * key, an expired one, or one left running past `runningUntil` of its earlier claim (that request's
 * node died or gave up) is ours, running until `until`; otherwise the row as it is (answered, or
 * still running). One round trip when the key is new; the project's cleanup job as in claimKey.
 */
export async function claimRunning(q: Queryable, c: Claim, until: Date): Promise<true | IdempotencyRow> {
  const wall = new Date();
  const [row] = await q.query<IdempotencyRow & { ours: boolean }>(
    `WITH k AS (
       INSERT INTO idempotency_keys AS i (project_id, key, method, path, request_hash, created, running_until)
       VALUES ($1, $2, $3, $4, $5, $6, $8)
       ON CONFLICT (project_id, key) DO UPDATE SET method = $3, path = $4, request_hash = $5, created = $6, running_until = $8,
         response_status = NULL, response_headers = NULL, response_body = NULL
       WHERE i.created <= $9 OR i.response_status IS NULL AND i.running_until <= $10
       RETURNING key),
     j AS (
       INSERT INTO jobs (project_id, kind, ref_id, run_at) SELECT $1, 'idempotency_cleanup', $1::text, $7 WHERE EXISTS (SELECT 1 FROM k)
       ON CONFLICT (kind, ref_id, project_id) DO NOTHING)
     SELECT EXISTS (SELECT 1 FROM k) AS ours`,
    [
      c.project_id,
      c.key,
      c.method,
      c.path,
      c.request_hash,
      c.now,
      new Date(c.now.getTime() + KEY_TTL_MS + 1000),
      until,
      new Date(c.now.getTime() - KEY_TTL_MS),
      wall,
    ],
  );
  if (row.ours) return true;
  const [held] = await q.query<IdempotencyRow>('SELECT * FROM idempotency_keys WHERE project_id = $1 AND key = $2', [c.project_id, c.key]);
  return held ?? claimRunning(q, c, until); // deleted by the cleanup between the two statements: try again
}

/** Frees a running key that got no answer worth keeping: the next request with it runs. */
export async function releaseKey(q: Queryable, projectId: ProjectId, key: string) {
  await q.query('DELETE FROM idempotency_keys WHERE project_id = $1 AND key = $2 AND response_status IS NULL', [projectId, key]);
}

export async function storeResponse(
  q: Queryable,
  projectId: ProjectId,
  key: string,
  status: number,
  headers: Record<string, string>,
  body: string,
) {
  await q.query(
    `UPDATE idempotency_keys SET response_status = $3, response_headers = $4, response_body = $5, running_until = NULL
     WHERE project_id = $1 AND key = $2`,
    [projectId, key, status, JSON.stringify(headers), body],
  );
}

/** Deletes the project's keys older than 24 h; returns when the oldest remaining one expires, if any. */
export async function cleanupKeys(q: Queryable, projectId: ProjectId, now: Date): Promise<Date | undefined> {
  await q.query('DELETE FROM idempotency_keys WHERE project_id = $1 AND created <= $2', [projectId, new Date(now.getTime() - KEY_TTL_MS)]);
  const [row] = await q.query<{ oldest: Date | null }>('SELECT min(created) AS oldest FROM idempotency_keys WHERE project_id = $1', [
    projectId,
  ]);
  return row?.oldest ? new Date(new Date(row.oldest).getTime() + KEY_TTL_MS + 1000) : undefined;
}
