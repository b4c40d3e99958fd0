import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import { findProject } from '../../store/platform/projects.ts';
import * as orders from '../../store/payments/orders.ts';
import { attemptsOf, changeAttempt, findAttempt, inFlight, sweepDueAttempts, type AttemptRow } from '../../store/payments/attempts.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { connectorFor, operationRef } from './connectors.ts';
import { callAcquirer, newAttempt, planRecord, RECOVERY_JOB } from './attempts.ts';
import { applyAuthorization } from './authorization.ts';
import { applyFollowUp } from './follow-ups.ts';
import type { ProjectRow } from '../../domain/entities.ts';

/**
 * The sweep of job `acquirer_recovery`: every attempt still in flight at its recover_at (set at
 * its record, ACQUIRER_RECOVERY_MS on) becomes a job, on whichever node's worker sweeps first,
 * after a restart too. An attempt applied in time never gets one: no job row is written or
 * deleted per payment.
 */
export const sweepDueRecoveries = (ctx: Ctx, limit: number, projectId?: string) =>
  sweepDueAttempts(ctx.db, { kind: RECOVERY_JOB, limit, againMs: ctx.config.acquirer.recoveryMs, projectId });

/**
 * Job `acquirer_recovery`: an attempt still in flight is asked about (inquire) and its answer
 * applied; an authorization that never answered is reversed and declined with processing_error; a
 * 3-D Secure lookup just fails. No answer from the acquirer now fails the job, which the worker
 * retries with its backoff.
 */
export async function recoverAttempt(ctx: Ctx, attemptId: string) {
  const a = await findAttempt(ctx.db, attemptId);
  if (!a || !inFlight(a)) return;
  const project = await findProject(ctx.db, a.project_id);
  if (!project) return;
  const now = nowFor(project);
  // A 3-D Secure lookup moves no money: one left without an applied answer (a crash between the
  // call and the apply) just fails, and the transaction, still new, may be authenticated again.
  if (a.kind === 'three_ds')
    return changeAttempt(ctx.db, a.id, {
      status: 'failed',
      error: 'no answer was applied to this 3-D Secure lookup',
      settled: now,
      modified: now,
    });
  if (a.kind === 'authorization' && !(a.status === 'processing' && a.reference)) return reverseAuthorization(ctx, project, a);
  const connector = connectorFor(ctx, project);
  const asked = await callAcquirer(ctx, a, () =>
    connector.inquire({
      operation_id: a.id,
      idempotency_key: a.idempotency_key,
      kind: a.kind,
      project_id: a.project_id,
      ...(a.reference ? { reference: a.reference } : {}),
      now,
    }),
  );
  if ('error' in asked) throw new Error(`attempt ${a.id}: the acquirer did not answer the inquiry: ${asked.error}`);
  if (a.kind === 'authorization') await applyAuthorization(ctx, a.id, asked);
  else await applyFollowUp(ctx, a.id, asked);
}

/**
 * An authorization without an answer: the customer has gone, and Tender cannot know whether the
 * issuer holds the money, so it undoes it. The reversal is an attempt of its own (recorded before
 * the call; a retry reuses it, so the acquirer sees one reversal); once accepted the authorization
 * attempt is `reversed` and the payment declined with processing_error.
 */
async function reverseAuthorization(ctx: Ctx, project: ProjectRow, auth: AttemptRow) {
  const txn = await orders.transactionById(ctx.db, auth.transaction_id);
  if (!txn) return;
  const now = nowFor(project);
  let rev = (await attemptsOf(ctx.db, project.id, txn.id)).find((x) => x.kind === 'reversal' && inFlight(x));
  if (!rev) {
    rev = newAttempt(ctx, project, txn, 'reversal', auth.amount, now, { request: { original: auth.id } });
    const w = new WriteSet();
    planRecord(w, rev);
    await w.run(ctx.db);
  }
  const reversal = rev;
  const asked = await callAcquirer(ctx, reversal, () =>
    connectorFor(ctx, project).reverse({
      ...operationRef(txn, now, reversal.id, auth.amount),
      original_operation_id: auth.id,
      ...(auth.reference ? { reference: auth.reference } : {}),
    }),
  );
  if ('error' in asked) {
    await changeAttempt(ctx.db, reversal.id, { status: 'unknown', error: asked.error.slice(0, 500), modified: now });
    throw new Error(`attempt ${auth.id}: the reversal got no answer: ${asked.error}`);
  }
  if (asked.outcome.status !== 'accepted') {
    await changeAttempt(ctx.db, reversal.id, { status: 'failed', response_code: asked.outcome.response_code, settled: now, modified: now });
    throw new Error(`attempt ${auth.id}: the acquirer refused the reversal: ${asked.outcome.response_code_description}`);
  }
  await changeAttempt(ctx.db, reversal.id, {
    status: 'succeeded',
    response_code: asked.outcome.response_code,
    response_description: asked.outcome.response_code_description,
    settled: now,
    modified: now,
  });
  await applyAuthorization(
    ctx,
    auth.id,
    {
      outcome: {
        status: 'declined',
        reason: 'processing_error',
        response_code: asked.outcome.response_code,
        response_code_description: 'no answer from the acquirer: the authorization was reversed',
      },
    },
    { reversed: true },
  );
}
