import { nowFor, type Ctx } from '../../platform/context.ts';
import { findProject } from '../../../store/platform/projects.ts';
import { changeAttempt, findAttempt, inFlight, sweepDueAttempts, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { ProjectRow } from '../../../domain/entities.ts';
import { connectorFor } from '../connectors.ts';
import { callAcquirer, type Answer } from './call.ts';
import { RECOVERY_JOB } from './rows.ts';
import { runAttempt, type Operation } from './runner.ts';
import { applyAuthorization } from './authorization-answer.ts';
import { reverseAuthorization } from './reversal.ts';
import { applyFollowUp } from './follow-up-answer.ts';

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
 * applied with its kind's own apply; an authorization that never answered is reversed and
 * declined with processing_error; a 3-D Secure lookup just fails. No answer from the acquirer now
 * fails the job, which the worker retries with its backoff.
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
  if (a.kind === 'authorization' && !(a.status === 'processing' && a.reference)) {
    await reverseAuthorization(ctx, project, a);
    return;
  }
  await runAttempt(ctx, inquiryOperation(ctx, project, a, now));
}

/**
 * The inquiry about one attempt in flight: nothing to record (the attempt is its own record), the
 * acquirer asked, the answer applied as the attempt's kind applies one.
 */
function inquiryOperation(ctx: Ctx, project: ProjectRow, a: AttemptRow, now: Date): Operation<AttemptRow, Answer, void> {
  return {
    kind: 'inquiry',
    record: async () => ({ recorded: a }),
    send: () =>
      callAcquirer(ctx, a, () =>
        connectorFor(ctx, project).inquire({
          operation_id: a.id,
          idempotency_key: a.idempotency_key,
          kind: a.kind,
          project_id: a.project_id,
          ...(a.reference ? { reference: a.reference } : {}),
          now,
        }),
      ),
    async apply(_, asked) {
      if ('error' in asked) throw new Error(`attempt ${a.id}: the acquirer did not answer the inquiry: ${asked.error}`);
      if (a.kind === 'authorization' && asked.outcome.reverse) await reverseAuthorization(ctx, project, a, asked.outcome);
      else if (a.kind === 'authorization') await applyAuthorization(ctx, a.id, asked);
      else await applyFollowUp(ctx, a.id, asked);
    },
  };
}
