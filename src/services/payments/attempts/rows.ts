import { type Ctx } from '../../platform/context.ts';
import { idempotencyKeyOf, type OperationKind, type Outcome } from '../../../acquirer/connector.ts';
import { newId, type OrderId } from '../../../domain/ids.ts';
import { DomainError, inFlightError, type ErrorType } from '../../../domain/errors.ts';
import type { WriteSet } from '../../../store/db/writes.ts';
import { dueNow } from '../../../store/platform/jobs.ts';
import { keyedAttemptId } from '../operation-key.ts';
import { changePart, findAttempt, inFlight, recordPart, type AttemptChange, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { ProjectRow, TransactionRow } from '../../../domain/entities.ts';
import { LINK_DOWN, NOT_SENT, type Answer } from './call.ts';

/* An attempt's row: made, recorded, answered, and what a request that finds it answers. */

/** The recovery job's kind (main.ts's job table). */
export const RECOVERY_JOB = 'acquirer_recovery';

/**
 * A new attempt's row, before it is recorded: due for recovery ACQUIRER_RECOVERY_MS after `now`
 * should it still be in flight then; a reversal never (its authorization's recovery drives it).
 */
export function newAttempt(
  ctx: Ctx,
  project: Pick<ProjectRow, 'id'>,
  txn: Pick<TransactionRow, 'id' | 'order_id' | 'currency'>,
  kind: OperationKind,
  amount: number,
  now: Date,
  extra: { authorization_reference?: string | null; request?: Record<string, unknown>; id?: string } = {},
): AttemptRow {
  // under an Idempotency-Key the id comes from the key: a retry finds this attempt
  const id = extra.id ?? keyedAttemptId(kind) ?? newId();
  return {
    id,
    project_id: project.id,
    transaction_id: txn.id,
    order_id: txn.order_id,
    kind,
    amount,
    currency: txn.currency,
    status: 'processing',
    idempotency_key: idempotencyKeyOf(id),
    authorization_reference: extra.authorization_reference ?? null,
    reference: null,
    response_code: null,
    response_description: null,
    error: null,
    request: extra.request ?? {},
    result_order_id: null,
    created: now,
    modified: now,
    settled: null,
    recover_at: kind === 'reversal' ? null : new Date(now.getTime() + ctx.config.acquirer.recoveryMs),
  };
}

/**
 * The attempt, gathered in `w`: the sweep finds it at its recover_at if nothing applied an answer
 * first (the workers are woken when that is about now).
 */
export function planRecord(w: WriteSet, a: AttemptRow) {
  w.add(recordPart(a));
  if (a.recover_at && dueNow(a.recover_at)) w.notifyJobs();
}
/** The attempt's columns an answer sets. */
export function answered(answer: Answer, now: Date): AttemptChange {
  if ('error' in answer) return { status: 'unknown', error: answer.error.slice(0, 500), modified: now };
  const o = answer.outcome;
  const status = o.status === 'accepted' ? 'succeeded' : o.status === 'processing' ? 'processing' : 'failed';
  return {
    status,
    ...(o.reference ? { reference: o.reference } : {}),
    response_code: o.response_code,
    response_description: o.response_code_description,
    ...(status === 'succeeded' || status === 'failed' ? { settled: now } : {}),
    modified: now,
  };
}

/**
 * The attempt's change gathered in `w`. Settled, the sweep no longer sees it; while the acquirer
 * says processing it is asked again after LATE_DECLINE_MS; with no answer it keeps its recover_at.
 */
export function planAnswered(ctx: Ctx, w: WriteSet, a: AttemptRow, change: AttemptChange, now: Date) {
  if (change.status === 'processing') {
    change = { ...change, recover_at: new Date(now.getTime() + ctx.config.lateDeclineMs) };
    if (dueNow(change.recover_at!)) w.notifyJobs();
  }
  w.add(changePart(a.id, change));
}

/** The outcomes a transaction shows of an acquirer's answer. */
export const processingOf = (o: Pick<Outcome, 'status' | 'response_code' | 'response_code_description'>) => ({
  processing: { status: o.status, response_code: o.response_code, response_code_description: o.response_code_description },
});

/** An answer with no outcome yet, as a transaction's outcomes show it. */
export const NO_ANSWER = {
  status: 'processing',
  response_code: '68',
  response_code_description: 'No answer from the acquirer yet: the outcome is being recovered',
} as const;

/** How long a request waits for an operation already in flight before answering what it is now. */
const WAIT_STEP_MS = 50;

/**
 * A second request for an operation already in flight answers with that operation's result:
 * it waits (within the acquirer's timeout) for the attempt to leave `processing`, then reads it.
 */
export async function awaitAttempt(ctx: Ctx, id: string): Promise<AttemptRow | undefined> {
  const until = Date.now() + ctx.config.acquirer.timeoutMs + 1000;
  let a = await findAttempt(ctx.db, id);
  while (a && a.status === 'processing' && !a.result_order_id && Date.now() < until) {
    await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
    a = await findAttempt(ctx.db, id);
  }
  return a;
}

/** The answer of a settled-or-not attempt to the request that asked for it: its order, or its refusal. */
export function resultOf(a: AttemptRow, errorType: ErrorType): { orderId: OrderId } {
  if (a.result_order_id) return { orderId: a.result_order_id };
  if (a.status === 'failed' && a.response_description === NOT_SENT.response_code_description)
    throw new DomainError(
      errorType,
      `the ${a.kind} was not sent to the acquirer: the service was held up past the call's deadline; try again`,
    );
  if (a.status === 'failed' && a.response_description === LINK_DOWN.response_code_description)
    throw new DomainError(errorType, `the ${a.kind} was not sent: the link to the acquirer is down; nothing was charged, try again later`);
  if (a.status === 'failed')
    throw new DomainError(errorType, `the acquirer refused the ${a.kind}: ${a.response_description ?? a.error ?? ''}`);
  if (inFlight(a))
    throw inFlightError(errorType, `a ${a.kind} of this transaction is in progress at the acquirer (attempt ${a.id}); ask again later`);
  throw new DomainError(errorType, `the ${a.kind} did not go through`);
}
