import { isUuid, type TransactionId } from '../../domain/ids.ts';
import { nowFor, type Ctx } from '../platform/context.ts';
import { existingDataKey } from '../platform/crypto-envelope.ts';
import { openCard } from '../vault/cards.ts';
import { changeCardAuth, changeSealedCvc, type CardAuthRow } from '../../store/vault/cards.ts';
import { changeTransaction } from '../../store/payments/changes.ts';
import { planMove, type OrderContext } from './transitions.ts';
import { threeDsRows, type Seen } from '../../store/payments/card-flow.ts';
import { lockAttemptRows, recordAuthorization } from '../../store/payments/payment-rows.ts';
import { transactionById } from '../../store/payments/orders.ts';
import {
  attemptsOf,
  authorizationInFlight,
  changeAttempt,
  dropAttempt,
  gateAsRecorded,
  inFlight,
  type AttemptChange,
  type AttemptRow,
} from '../../store/payments/attempts.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { dueNow } from '../../store/platform/jobs.ts';
import { planAuthorized } from './operations.ts';
import { liabilityShift, type TransStatus } from '../../domain/card.ts';
import type { Outcome, ThreeDsResult } from '../../acquirer/connector.ts';
import { authenticationFailed, authenticatorFor, connectorFor, operationRef } from './connectors.ts';
import { answered, callAcquirer, newAttempt, NO_ANSWER, planAnswered, planRecord, sendFirstCall, type Answer } from './attempts.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { judgeAfterThreeDs } from '../risk/after-3ds.ts';

/*
 * The authorization of a card transaction after 3-D Secure, as an acquirer attempt
 * (attempts.ts): record (the attempt, with the read, the CVC dropped: it served this one
 * request; the transaction stays pending), call (the challenge's answer, then the authorization)
 * with no transaction open, apply (pending -> accepted | declined | error, or processing while
 * the acquirer's answer is not final).
 */

export interface ThreeDsView {
  txn: TransactionRow;
  order: OrderRow;
  project: ProjectRow;
  auth?: CardAuthRow;
}

export interface ThreeDsVisit {
  view: ThreeDsView;
  /** the customer must answer the challenge: show its form */
  challenge: boolean;
  /** the order afterwards (the payment is over, or in progress) */
  order: OrderRow;
}

export type Step = { kind: 'frictionless' } | { kind: 'challenge'; answer: string } | { kind: 'cancel' };

/** Statuses of 3-D Secure after which the card may be authorized (U: not enrolled, no liability shift). */
const PROCEED = new Set<TransStatus>(['Y', 'A', 'U']);

const threeOf = (auth: CardAuthRow): ThreeDsResult => ({
  trans_status: auth.trans_status,
  eci: auth.eci ?? undefined,
  liability_shift: liabilityShift(auth.trans_status),
  ...(auth.emv ? { emv: auth.emv } : {}),
});

/**
 * One step of the 3-D Secure page (a visit, a challenge's answer, a cancel), once. The first
 * request of a pending transaction ready to be authorized records the authorization with its
 * read, in one statement (recordAuthorization): the transaction stays `pending` while the call is
 * under way, and the attempt in flight is what a repeated visit, a double submit, a cancel or an
 * expiry finds (docs/money.md "The 3-D Secure page"). Undefined for an unknown transaction or one
 * without 3-D Secure.
 */
export async function authorizeStep(ctx: Ctx, transactionId: TransactionId, step: Step): Promise<ThreeDsVisit | undefined> {
  if (!isUuid(transactionId)) return undefined;
  if (step.kind === 'cancel') return cancelStep(ctx, transactionId);
  // the attempts' transaction, amounts and times come from the row the statement reads
  const real = new Date();
  const unread = { id: transactionId, order_id: '', currency: '' };
  const authorization = newAttempt(ctx, { id: '' }, unread, 'authorization', 0, real, { request: { step: step.kind } });
  const attempts = {
    authorization,
    // the challenge's answer goes to the 3-D Secure server first: an attempt of its own
    challenge:
      step.kind === 'challenge' ? newAttempt(ctx, { id: '' }, unread, 'three_ds', 0, real, { request: { step: 'challenge' } }) : undefined,
    // recovery due within the wake window: the workers are told, as planRecord does
    wake: dueNow(authorization.recover_at!),
  };
  // a challenge's answer is sent first (within ACQUIRER_TIMEOUT_MS): the authorization's
  // recovery, and so its send deadline, come that much later
  const { recoveryMs, timeoutMs } = ctx.config.acquirer;
  const rows = await recordAuthorization(ctx.db, transactionId, attempts, real, recoveryMs + (attempts.challenge ? timeoutMs : 0));
  if (!rows?.auth) return undefined;
  const { txn, order, project, auth, attempt: a } = rows;
  const view: ThreeDsView = { txn: { ...txn }, order: { ...order }, project, auth };
  // not recorded: the payment is over, in flight (a second visit), or its challenge is to be answered first
  if (!a)
    return { view, order, challenge: txn.status === 'pending' && auth.trans_status === 'C' && step.kind !== 'challenge' && !rows.flying };
  const dk = rows.card && (await existingDataKey(ctx.db, ctx.masterKey, project.id));
  if (!rows.card || !dk) {
    await dropAttempt(ctx.db, a.id);
    if (rows.challenge) await dropAttempt(ctx.db, rows.challenge.id);
    throw new Error(`transaction ${txn.id} has no card to authorize`);
  }
  const card = openCard(dk, rows.card);
  const now = a.created;
  const challenge = rows.challenge;
  // call, with no transaction open: the challenge's answer, then the authorization
  let three = threeOf(auth);
  let answer: Answer | undefined;
  const connector = connectorFor(ctx, project);
  let asked: Answer<ThreeDsResult> | undefined;
  if (challenge && step.kind === 'challenge') {
    asked = await callAcquirer(ctx, challenge, () =>
      authenticatorFor(ctx, project).completeChallenge({ ...operationRef(txn, now, challenge.id), card, answer: step.answer }),
    );
    // no answer from the 3-D Secure server: nothing was authorized, the payment fails
    three = 'outcome' in asked ? asked.outcome : { trans_status: 'U', liability_shift: false };
    if ('error' in asked) answer = { outcome: authenticationFailed('N') };
  }
  const decided = three;
  answer ??= await judgeAfterThreeDs(ctx, txn, decided); // risk rules on three_ds (docs/risk.md): a refusal is never sent
  answer ??= PROCEED.has(decided.trans_status)
    ? await sendFirstCall(
        ctx,
        project,
        a,
        () => connector.authorize({ ...operationRef(txn, now, a.id), card, three_ds: decided, capture: !txn.capture_mode }),
        connector,
      )
    : { outcome: authenticationFailed(decided.trans_status) };
  const authenticated: Authenticated = {
    three,
    challenged: Boolean(asked),
    ...(challenge && asked ? { challenge: { attempt: challenge, answer: asked } } : {}),
  };
  // apply: planned from the rows as the record's statement left them
  const recorded: Recorded = { rows: { txn, order, project, statuses: rows.statuses, attempt: a }, seen: rows.seen };
  const refused = 'outcome' in answer && answer.outcome.reverse ? answer.outcome : undefined;
  const after = refused
    ? await reverseRefused(ctx, project, a, refused, authenticated, recorded)
    : await applyAuthorization(ctx, a.id, answer, authenticated, recorded);
  return { view, challenge: false, order: after ?? order };
}

/**
 * An answer Tender does not take (a partial approval, an answer that does not match its request):
 * logged with the attempt id and reversed at once. Should the reversal get no answer (or be
 * refused), the authorization is left in flight with no answer: its recovery reverses it.
 */
async function reverseRefused(ctx: Ctx, project: ProjectRow, a: AttemptRow, refused: Outcome, auth: Authenticated, recorded: Recorded) {
  ctx.log.warn(
    { attempt: { id: a.id, kind: a.kind }, response_code: refused.response_code, reverse_amount: refused.reverse!.amount },
    `acquirer answer not taken, reversing: ${refused.response_code_description}`,
  );
  try {
    return await reverseAuthorization(ctx, project, a, refused, auth);
  } catch (err) {
    return applyAuthorization(ctx, a.id, { error: (err as Error).message }, auth, recorded);
  }
}

/**
 * Undoes an authorization the acquirer may hold: one whose answer never came (the customer has
 * gone, and Tender cannot know whether the issuer holds the money; recovery.ts), or one whose
 * answer Tender does not take (`refused`, with the amount to reverse). The reversal is an attempt
 * of its own (recorded before the call; a retry reuses it, so the acquirer sees one reversal, of
 * the amount and for the cause first recorded); once accepted the authorization attempt is
 * `reversed` and the payment declined: with the refused answer's code, else processing_error.
 * A reversal without an answer, or refused, throws (the recovery job retries).
 */
export async function reverseAuthorization(
  ctx: Ctx,
  project: ProjectRow,
  auth: AttemptRow,
  refused?: Outcome,
  authenticated: Authenticated = {},
) {
  const txn = await transactionById(ctx.db, auth.transaction_id);
  if (!txn) return undefined;
  const now = nowFor(project);
  let rev = (await attemptsOf(ctx.db, project.id, txn.id)).find((x) => x.kind === 'reversal' && inFlight(x));
  if (!rev) {
    const cause = refused ? { refused: { ...refused, reverse: undefined } } : {};
    rev = newAttempt(ctx, project, txn, 'reversal', refused?.reverse?.amount ?? auth.amount, now, {
      request: { original: auth.id, ...cause },
    });
    const w = new WriteSet();
    planRecord(w, rev);
    await w.run(ctx.db);
  }
  const reversal = rev;
  const asked = await callAcquirer(ctx, reversal, () =>
    connectorFor(ctx, project).reverse({
      ...operationRef(txn, now, reversal.id, reversal.amount),
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
  // the payment's own line (payment declined) follows from the order's change
  ctx.log.info(
    {
      project_id: project.id,
      order_id: txn.order_id,
      mode: project.mode,
      amount: Number(reversal.amount),
      currency: txn.currency,
      outcome: 'reversed',
    },
    'payment reversed',
  );
  const outcome: Outcome = (reversal.request.refused as Outcome | undefined) ?? {
    status: 'declined',
    reason: 'processing_error',
    response_code: asked.outcome.response_code,
    response_code_description: 'no answer from the acquirer: the authorization was reversed',
  };
  return applyAuthorization(ctx, auth.id, { outcome }, { ...authenticated, reversed: true });
}

/** The customer cancels on the 3-D Secure page: a pending transaction is cancelled unless its authorization is in flight. */
async function cancelStep(ctx: Ctx, transactionId: TransactionId): Promise<ThreeDsVisit | undefined> {
  return ctx.db.tx(async (q) => {
    const rows = await threeDsRows(q, transactionId);
    if (!rows?.auth) return undefined;
    const { txn, order, project, auth } = rows;
    const view: ThreeDsView = { txn: { ...txn }, order: { ...order }, project, auth };
    // read once the lock is held: an authorization recorded before it is seen
    if (txn.status !== 'pending' || (await authorizationInFlight(q, project.id, [txn.id]))) return { view, order, challenge: false };
    const w = new WriteSet();
    if (rows.card) changeSealedCvc(w, rows.card.id, null);
    planMove(ctx, w, txn, rows, 'cancelled', nowFor(project), { reason: 'cancelled by customer', source: 'customer' });
    await w.run(q, { commit: true });
    return { view, order, challenge: false };
  });
}

/** What the authorization's answer writes besides the attempt: the 3-D Secure result of a challenge, the transaction's outcomes and details. */
interface Authenticated {
  three?: ThreeDsResult;
  /** the challenge was answered in this step: its result is stored */
  challenged?: boolean;
  /** the authorization was reversed after its answer was lost: the attempt ends `reversed` */
  reversed?: boolean;
  /** the challenge's own attempt at the 3-D Secure server and its answer, settled with the authorization */
  challenge?: { attempt: AttemptRow; answer: Answer<ThreeDsResult> };
}

/** The transaction's columns the connector's answer sets: its outcomes (3-D Secure, processing) and details. */
function outcomePatch(
  txn: TransactionRow,
  outcome: Pick<Outcome, 'status' | 'response_code' | 'response_code_description'>,
  three?: ThreeDsResult,
) {
  return {
    outcomes: {
      ...(txn.outcomes ?? {}),
      ...(three ? { three_d_secure: { trans_status: three.trans_status, ...(three.eci ? { eci: three.eci } : {}) } } : {}),
      processing: {
        status: outcome.status,
        response_code: outcome.response_code,
        response_code_description: outcome.response_code_description,
      },
    },
    ...(three ? { details: { ...txn.details, liability_shift: three.liability_shift } } : {}),
  };
}

/** The challenge attempt's columns its answer sets: the 3-D Secure status, or why there was none. */
const challengeSettled = (answer: Answer<ThreeDsResult>, now: Date): AttemptChange =>
  'outcome' in answer
    ? { status: 'succeeded', response_code: answer.outcome.trans_status, settled: now, modified: now }
    : { status: 'failed', error: answer.error.slice(0, 500), settled: now, modified: now };

/** The transaction status of a failed answer: an authorization the acquirer never received failed with an error. */
const failedStatus = (o: Outcome) => (o.status === 'declined' ? 'declined' : 'error');

/** What an authorization's answer is applied to: the payment's rows and the attempt. */
type AuthorizationRows = OrderContext & { txn: TransactionRow; attempt: AttemptRow };

/** The rows the record read and wrote, as it left them, with their versions: the apply plans from them. */
interface Recorded {
  rows: AuthorizationRows;
  seen: Seen;
}

/**
 * Applies an authorization's answer (or its absence) to its attempt, once: processing ->
 * accepted (booked), declined or error; still processing while the acquirer says so or gave no
 * answer (the recovery job asks again). Answers the order afterwards.
 *
 * Planned from the rows the record read (`recorded`), it is one statement, gated on those rows
 * being as the record left them (gateAsRecorded): one round trip. When the gate holds it back (the
 * recovery job, an expiry or another request came first), or for the recovery job, which has no
 * such rows, the same plan is made from the rows read again under the lock: a locking read (its
 * BEGIN with it), then the statement with the COMMIT.
 */
export async function applyAuthorization(ctx: Ctx, attemptId: string, answer: Answer, auth: Authenticated = {}, recorded?: Recorded) {
  // an order of several transactions derives its status from its siblings as they are now: read under the lock
  if (recorded && recorded.rows.statuses.length === 1) {
    const { rows: r, seen } = recorded;
    // planned on copies: the rows in memory stay as recorded if the gate holds the writes back
    const rows = { ...r, txn: { ...r.txn }, order: { ...r.order }, statuses: [...r.statuses] };
    const w = new WriteSet();
    gateAsRecorded(w, seen, rows.txn, attemptId);
    if (!planAuthorization(ctx, w, rows, answer, auth) || (await w.run(ctx.db))) return rows.order;
  }
  return ctx.db.tx(async (q) => {
    const rows = await lockAttemptRows(q, attemptId);
    if (!rows) return undefined;
    const w = new WriteSet();
    if (planAuthorization(ctx, w, rows, answer, auth)) await w.run(q, { commit: true });
    return rows.order;
  });
}

/** The answer's writes gathered in `w`; false when there is nothing to apply (the attempt settled, the payment moved on). */
function planAuthorization(ctx: Ctx, w: WriteSet, rows: AuthorizationRows, answer: Answer, auth: Authenticated): boolean {
  const a = rows.attempt;
  // pending while the call was under way (the record leaves it so); processing once an answer said so, or none came
  if (!inFlight(a) || (rows.txn.status !== 'pending' && rows.txn.status !== 'processing')) return false;
  const now = nowFor(rows.project);
  const change: AttemptChange = auth.reversed ? { status: 'reversed', settled: now, modified: now } : answered(answer, now);
  const { txn, project } = rows;
  const outcome: Outcome | undefined = 'outcome' in answer ? answer.outcome : undefined;
  const patch = outcomePatch(txn, outcome ?? NO_ANSWER, auth.three);
  if (auth.challenged && auth.three)
    changeCardAuth(w, txn.id, {
      trans_status: auth.three.trans_status,
      eci: auth.three.eci ?? null,
      ...(auth.three.emv ? { emv: auth.three.emv } : {}),
      modified: now,
    });
  if (outcome?.reference) changeCardAuth(w, txn.id, { acquirer_reference: outcome.reference });
  const to =
    !outcome || outcome.status === 'processing' ? 'processing' : outcome.status === 'accepted' ? 'accepted' : failedStatus(outcome);
  if (to === txn.status) changeTransaction(w, txn.id, { ...patch, modified: now });
  else {
    const reason = to === 'accepted' ? null : to === 'processing' ? undefined : (outcome!.reason ?? failedStatus(outcome!));
    planMove(ctx, w, txn, rows, to, now, { reason, patch });
    if (to === 'accepted') planAuthorized(w, project, txn, now);
  }
  planAnswered(ctx, w, a, change, now);
  if (auth.challenge) planAnswered(ctx, w, auth.challenge.attempt, challengeSettled(auth.challenge.answer, now), now);
  return true;
}
