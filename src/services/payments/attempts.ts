import { nowFor, type Ctx } from '../platform/context.ts';
import { idempotencyKeyOf, type OperationKind, type Outcome } from '../../acquirer/connector.ts';
import { newId, type OrderId } from '../../domain/ids.ts';
import { ApiError, inFlightError, type ErrorType } from '../../domain/errors.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { dueNow } from '../../store/platform/jobs.ts';
import { keyedAttemptId } from './operation-key.ts';
import { changePart, findAttempt, inFlight, recordPart, type AttemptChange, type AttemptRow } from '../../store/payments/attempts.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';

/*
 * Acquirer attempts: record, commit, call, apply (docs/money.md "Acquirer attempts").
 *
 *   record   one short database transaction: the payment locked, the request checked against
 *            what is left after the reservations of attempts in flight, the attempt written
 *            `processing` with the time recovery asks about it (recover_at), COMMIT.
 *   call     the connector, with no database transaction open and no row lock held, bounded by
 *            ACQUIRER_TIMEOUT_MS. A throw or the timeout is no answer: the money may have moved.
 *   apply    the attempt settled (succeeded, failed) or left in flight (processing: answered
 *            later; unknown: no answer), and what the outcome moves: one statement planned from
 *            the record's rows, gated on their being as recorded (gateAsRecorded); else a second
 *            short transaction that reads them again under the lock.
 *   recover  the worker's sweep makes an attempt still in flight at its recover_at a job
 *            (`acquirer_recovery`, any node, after a restart too), which asks the acquirer
 *            (inquire) and applies the answer; an authorization that never answered is reversed.
 */

/** The recovery job's kind (main.ts's job table). */
export const RECOVERY_JOB = 'acquirer_recovery';

/** The acquirer's answer to one call, or why there was none. */
export type Answer<T = Outcome> = { outcome: T } | { error: string };

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

/**
 * Calls the acquirer for an attempt: never inside a database transaction. The timeout and any
 * throw become `error` (the cause is logged with the attempt id; a connector never puts card data
 * in its errors).
 */
export async function callAcquirer<T = Outcome>(ctx: Ctx, a: Pick<AttemptRow, 'id' | 'kind'>, call: () => Promise<T>): Promise<Answer<T>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ctx.config.acquirer.timeoutMs} ms`)), ctx.config.acquirer.timeoutMs);
      timer.unref();
    });
    return { outcome: await Promise.race([call(), timeout]) };
  } catch (err) {
    const error = (err as Error).message || String(err);
    ctx.log.warn({ attempt: { id: a.id, kind: a.kind }, err: error }, 'acquirer gave no answer: the attempt stays in flight');
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The answer of a money operation whose first call was not sent because its send deadline had
 * passed (sendDeadline): nothing reached the acquirer, so the attempt fails at once.
 */
const NOT_SENT: Outcome = {
  status: 'error',
  reason: 'processing_error',
  response_code: '96',
  response_code_description: "Not sent: the service was held up past the call's deadline; nothing was charged",
};

/**
 * The last moment (on the project's clock) the first call of an attempt may be sent. Recovery
 * asks the acquirer about the attempt at its recover_at, and an acquirer's "not found" is only
 * true if no call can still arrive after it. A call is Tender's for at most ACQUIRER_TIMEOUT_MS;
 * half of the rest of ACQUIRER_RECOVERY_MS is left for a network that delivers it later than
 * that. Without it, a node held up between record and call (a pause, a loaded machine) could send
 * a refund after the inquiry failed it: the acquirer refunds, Tender does not.
 */
function sendDeadline(ctx: Ctx, recoverAt: Date): number {
  const { timeoutMs, recoveryMs } = ctx.config.acquirer;
  return recoverAt.getTime() - timeoutMs - Math.max(0, recoveryMs - timeoutMs) / 2;
}

/**
 * Undefined while an attempt's first call may still be sent; past its deadline, the NOT_SENT
 * answer (logged with the attempt id), and the call is not made.
 */
export function missedSend(
  ctx: Ctx,
  project: Pick<ProjectRow, 'clock_offset_ms'>,
  a: Pick<AttemptRow, 'id' | 'kind' | 'recover_at'>,
): Answer | undefined {
  if (!a.recover_at) return undefined;
  const late = nowFor(project).getTime() - sendDeadline(ctx, a.recover_at);
  if (late <= 0) return undefined;
  ctx.log.warn({ attempt: { id: a.id, kind: a.kind }, late_ms: late }, 'acquirer call not sent: its deadline had passed');
  return { outcome: NOT_SENT };
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
    throw new ApiError(
      errorType,
      `the ${a.kind} was not sent to the acquirer: the service was held up past the call's deadline; try again`,
    );
  if (a.status === 'failed')
    throw new ApiError(errorType, `the acquirer refused the ${a.kind}: ${a.response_description ?? a.error ?? ''}`);
  if (inFlight(a))
    throw inFlightError(errorType, `a ${a.kind} of this transaction is in progress at the acquirer (attempt ${a.id}); ask again later`);
  throw new ApiError(errorType, `the ${a.kind} did not go through`);
}
