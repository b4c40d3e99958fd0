import type { Ctx } from './context.ts';
import type { OpenTx } from '../../store/db/db.ts';
export type { OpenTx };
import {
  claimKey,
  claimRunning,
  cleanupKeys,
  lockKey,
  releaseKey,
  storeResponse,
  type Claim,
  type IdempotencyRow,
} from '../../store/platform/idempotency.ts';
import { findProject } from '../../store/platform/projects.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { nowFor } from './context.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * An Idempotency-Key request runs in one database transaction with its key: the claim, all the
 * work the request does (Db.within) and its stored response commit together, or not at all.
 * A process that dies mid-request leaves nothing behind (no half-done work, no key stuck "in
 * flight"), so the retry runs the request once; a retry after the commit replays the answer.
 * docs/decisions.md "Idempotency-Key and crashes". Routes that call the acquirer are the
 * exception: claimCall below.
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
    // claimed by a request at the acquirer (claimCall) that has not answered yet
    return claim.response_status === null ? { kind: 'busy' } : { kind: 'stored', row: claim };
  } catch (err) {
    await open.rollback();
    throw err;
  }
}

/**
 * How long the claim of a request that calls the acquirer holds its key against another request
 * with it (409). After that the other one runs too, safely: it finds the attempt the key names and
 * answers that attempt's result (it never asks the acquirer a second time).
 */
const CALL_CLAIM_MS = 10_000;

/**
 * The claim of a request that calls the acquirer (docs/money.md "Idempotency-Key around an
 * acquirer call"): no transaction may stay open across that call, so the key is claimed and
 * committed at once, for CALL_CLAIM_MS. The request's work commits step by step; the attempt it
 * records takes its id from the key (keyedAttemptId), so a retry after a crash finds that attempt
 * and answers its result instead of calling the acquirer again.
 */
export async function claimCall(ctx: Ctx, c: Claim): Promise<{ kind: 'call' } | Exclude<Claimed, { kind: 'run' }>> {
  const claim = await claimRunning(ctx.db, c, new Date(Date.now() + CALL_CLAIM_MS));
  if (claim === true) return { kind: 'call' };
  return claim.response_status === null ? { kind: 'busy' } : { kind: 'stored', row: claim };
}

/** Ends a request claimed by claimCall: its response stored, or (none worth keeping) the key freed for the next request. */
export async function finishCall(ctx: Ctx, projectId: ProjectId, key: string, response?: StoredResponse): Promise<void> {
  if (!response) return releaseKey(ctx.db, projectId, key);
  await storeResponse(ctx.db, projectId, key, response.status, response.headers, response.body);
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
