import type { Ctx } from './context.ts';
import type { OpenTx } from '../../store/db/db.ts';
export type { OpenTx };
import { claimKey, cleanupKeys, lockKey, storeResponse, type Claim, type IdempotencyRow } from '../../store/platform/idempotency.ts';
import { findProject } from '../../store/platform/projects.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { nowFor } from './context.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * An Idempotency-Key request runs in one database transaction with its key: the claim, all the
 * work the request does (Db.within) and its stored response commit together, or not at all.
 * A process that dies mid-request leaves nothing behind (no half-done work, no key stuck "in
 * flight"), so the retry runs the request once; a retry after the commit replays the answer.
 * docs/decisions.md "Idempotency-Key and crashes".
 */
export type Claimed =
  /** ours: run the request inside `open`, then finishRequest */
  | { kind: 'run'; open: OpenTx }
  /** a live request holds the key */
  | { kind: 'busy' }
  /** answered before (the caller compares request_hash) */
  | { kind: 'stored'; row: IdempotencyRow };

export async function claimRequest(ctx: Ctx, c: Claim): Promise<Claimed> {
  const open = await ctx.db.begin();
  try {
    if (!(await lockKey(open.q, c.project_id, c.key))) {
      await open.rollback();
      return { kind: 'busy' };
    }
    const claim = await claimKey(open.q, c);
    if (claim === true) return { kind: 'run', open };
    await open.rollback();
    return { kind: 'stored', row: claim };
  } catch (err) {
    await open.rollback();
    throw err;
  }
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Ends a claimed request: with a response, stores it and commits the request's work with it
 * (a failed commit throws: the work is not done, or, when the connection dropped at COMMIT,
 * a retry finds the stored answer); without one (5xx, 429, a stream), rolls the work back and
 * the key is free again.
 */
export async function finishRequest(open: OpenTx, projectId: ProjectId, key: string, response?: StoredResponse): Promise<void> {
  if (!response) return open.rollback();
  try {
    await storeResponse(open.q, projectId, key, response.status, response.headers, response.body);
  } catch (err) {
    await open.rollback();
    throw err;
  }
  await open.commit();
}

/** A request that ended without its response being sent (aborted): its work is rolled back. */
export const abandonRequest = (open: OpenTx) => open.rollback();

/** Job `idempotency_cleanup` (one per project): forgets keys older than 24 h, and comes back when the next one expires. */
export async function runIdempotencyCleanup(ctx: Ctx, projectId: ProjectId) {
  await ctx.db.tx(async (q) => {
    const project = await findProject(q, projectId);
    if (!project) return;
    const next = await cleanupKeys(q, projectId, nowFor(project));
    if (next) await schedule(q, { project_id: projectId, kind: 'idempotency_cleanup', ref_id: projectId, run_at: next });
  });
}
