import type { Ctx } from './context.ts';
import { nowFor } from './context.ts';
import { findProject } from '../store/projects.ts';
import * as keys from '../store/idempotency.ts';
import type { IdempotencyRow } from '../store/idempotency.ts';
import { schedule } from '../store/jobs.ts';
import type { ProjectRow } from '../domain/entities.ts';

/**
 * Idempotency keys of API requests (the rules are in http/idempotency.ts, which holds them around
 * each POST): claimed before the request runs, answered with the stored response afterwards.
 */

/** Claims the key for this request: true when it is ours to run, else the row of the request that holds it. */
export function claimKey(ctx: Ctx, project: ProjectRow, c: { key: string; method: string; path: string; request_hash: string }): Promise<true | IdempotencyRow> {
  return keys.claimKey(ctx.db, { project_id: project.id, ...c, now: nowFor(project) });
}

export function storeResponse(ctx: Ctx, projectId: string, key: string, status: number, headers: Record<string, string>, body: string) {
  return keys.storeResponse(ctx.db, projectId, key, status, headers, body);
}

export function releaseKey(ctx: Ctx, projectId: string, key: string) {
  return keys.releaseKey(ctx.db, projectId, key);
}

/** Job `idempotency_cleanup` (one per project): forgets keys older than 24 h, and comes back when the next one expires. */
export async function runIdempotencyCleanup(ctx: Ctx, projectId: string) {
  await ctx.db.tx(async (q) => {
    const project = await findProject(q, projectId);
    if (!project) return;
    const next = await keys.cleanupKeys(q, projectId, nowFor(project));
    if (next) await schedule(q, { project_id: projectId, kind: 'idempotency_cleanup', ref_id: projectId, run_at: next });
  });
}
