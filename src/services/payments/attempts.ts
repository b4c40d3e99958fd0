import { AsyncLocalStorage } from 'node:async_hooks';
import { nowFor, type Ctx } from '../platform/context.ts';
import { AUTHENTICATOR_CALLS, type Authenticator } from '../../acquirer/authenticator.ts';
import { idempotencyKeyOf, type Connector, type OperationKind, type Outcome } from '../../acquirer/connector.ts';
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
 * A programming error: an acquirer call asked for while the caller holds a database transaction
 * (Db.holding: within(), or a tx() callback). The attempt's record would commit only with that
 * transaction, after the answer, and a crash meanwhile would lose it while the acquirer moved the
 * money; the connection and its row locks would be held for as long as the acquirer takes. The
 * call is not made.
 */
export class HeldTransactionError extends Error {
  constructor(a: Pick<AttemptRow, 'kind'> & { id?: string }) {
    super(
      `programming error: the ${a.kind} call${a.id ? ` of attempt ${a.id}` : ''} was asked for inside a database transaction; ` +
        'record and commit the attempt, then call the acquirer with no transaction open (docs/money.md "Acquirer attempts")',
    );
    this.name = 'HeldTransactionError';
  }
}

/**
 * Refuses (HeldTransactionError) when the caller holds a transaction: callAcquirer asks it, and a
 * use case that records an attempt asks it first, so a broken rule records nothing either.
 */
export function refuseHeld(ctx: Pick<Ctx, 'db'>, a: Pick<AttemptRow, 'kind'> & { id?: string }) {
  if (ctx.db.holding()) throw new HeldTransactionError(a);
}

/** A programming error: a connector's or an authenticator's call made other than through callAcquirer. */
export class UnguardedCallError extends Error {
  constructor(method: string) {
    super(`programming error: ${method} was called outside callAcquirer (services/payments/attempts.ts); it was not sent`);
    this.name = 'UnguardedCallError';
  }
}

/** The attempt whose call runs now, set by callAcquirer for the call and all it starts. */
const guardedCalls = new AsyncLocalStorage<string>();

/** The connector methods that reach the acquirer (everything but its name, capabilities and notification reader). */
const CALLS = ['authorize', 'capture', 'void', 'refund', 'inquire', 'reverse'] as const;
const guarded = new WeakMap<object, object>();

/** `inner` with each of `methods` refusing to run unless made through callAcquirer. */
function guard<T extends object>(inner: T, methods: readonly string[]): T {
  let g = guarded.get(inner) as T | undefined;
  if (!g) {
    const calls = Object.fromEntries(
      methods.map((m) => [
        m,
        (req: never) => {
          if (guardedCalls.getStore() === undefined) return Promise.reject(new UnguardedCallError(m));
          return (inner as Record<string, (r: never) => Promise<unknown>>)[m].call(inner, req);
        },
      ]),
    );
    g = Object.assign(Object.create(inner) as T, calls);
    guarded.set(inner, g);
  }
  return g;
}

/**
 * The connector as the services get it (connectorFor): each of its calls refuses to run unless
 * made through callAcquirer, so no path can reach the acquirer without the attempt recorded and
 * committed first and no transaction held.
 */
export const guardConnector = (inner: Connector): Connector => guard(inner, CALLS);

/** The authenticator as the services get it (authenticatorFor): its calls too only through callAcquirer. */
export const guardAuthenticator = (inner: Authenticator): Authenticator => guard(inner, AUTHENTICATOR_CALLS);

/**
 * Calls the acquirer for an attempt: never inside a database transaction (it throws
 * HeldTransactionError). The timeout and any
 * throw become `error` (the cause is logged with the attempt id; a connector never puts card data
 * in its errors).
 */
export async function callAcquirer<T = Outcome>(ctx: Ctx, a: Pick<AttemptRow, 'id' | 'kind'>, call: () => Promise<T>): Promise<Answer<T>> {
  // outside the try: a broken rule is the caller's bug, never "no answer from the acquirer"
  refuseHeld(ctx, a);
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ctx.config.acquirer.timeoutMs} ms`)), ctx.config.acquirer.timeoutMs);
      timer.unref();
    });
    return { outcome: await Promise.race([guardedCalls.run(a.id, call), timeout]) };
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
 * passed (sendFirstCall): nothing reached the acquirer, so the attempt fails at once.
 */
const NOT_SENT: Outcome = {
  status: 'error',
  reason: 'processing_error',
  response_code: '96',
  response_code_description: "Not sent: the service was held up past the call's deadline; nothing was charged",
};

/**
 * The answer of a money operation whose first call was not sent because the connector's link to
 * its acquirer is known to be down (Connector.linkDown): nothing was sent, nothing is to recover,
 * the attempt fails at once and the customer may try again.
 */
const LINK_DOWN: Outcome = {
  status: 'error',
  reason: 'processing_error',
  response_code: '91',
  response_code_description: 'Not sent: the link to the acquirer is down; nothing was charged',
};

/**
 * The first call of an authorization, capture, void or refund: callAcquirer, unless the call's
 * send deadline has passed, when it is not made and the answer is NOT_SENT (logged with the
 * attempt id), or `connector`'s link is known to be down, when it is not made either and the
 * answer is LINK_DOWN.
 *
 * The deadline (on the project's clock): recovery asks the acquirer about the attempt at its
 * recover_at, and an acquirer's "not found" is only true if no call can still arrive after it. A
 * call is Tender's for at most ACQUIRER_TIMEOUT_MS; half of the rest of ACQUIRER_RECOVERY_MS
 * (greater, config.ts) is left for a network that delivers it later than that. Without it, a node
 * held up between record and call (a pause, a loaded machine) could send a refund after the
 * inquiry failed it: the acquirer refunds, Tender does not.
 */
export function sendFirstCall(
  ctx: Ctx,
  project: Pick<ProjectRow, 'clock_offset_ms'>,
  a: Pick<AttemptRow, 'id' | 'kind' | 'recover_at'>,
  call: () => Promise<Outcome>,
  connector?: Pick<Connector, 'linkDown'>,
): Promise<Answer> {
  if (connector?.linkDown?.()) {
    ctx.log.warn({ attempt: { id: a.id, kind: a.kind } }, 'acquirer call not sent: the link to the acquirer is down');
    return Promise.resolve({ outcome: LINK_DOWN });
  }
  const { timeoutMs, recoveryMs } = ctx.config.acquirer;
  const deadline = a.recover_at ? a.recover_at.getTime() - timeoutMs - (recoveryMs - timeoutMs) / 2 : Infinity;
  const late = nowFor(project).getTime() - deadline;
  if (late <= 0) return callAcquirer(ctx, a, call);
  ctx.log.warn({ attempt: { id: a.id, kind: a.kind }, late_ms: late }, 'acquirer call not sent: its deadline had passed');
  return Promise.resolve({ outcome: NOT_SENT });
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
  if (a.status === 'failed' && a.response_description === LINK_DOWN.response_code_description)
    throw new ApiError(errorType, `the ${a.kind} was not sent: the link to the acquirer is down; nothing was charged, try again later`);
  if (a.status === 'failed')
    throw new ApiError(errorType, `the acquirer refused the ${a.kind}: ${a.response_description ?? a.error ?? ''}`);
  if (inFlight(a))
    throw inFlightError(errorType, `a ${a.kind} of this transaction is in progress at the acquirer (attempt ${a.id}); ask again later`);
  throw new ApiError(errorType, `the ${a.kind} did not go through`);
}
