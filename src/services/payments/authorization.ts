import { isUuid, type TransactionId } from '../../domain/ids.ts';
import { nowFor, type Ctx } from '../platform/context.ts';
import { existingDataKey } from '../platform/crypto-envelope.ts';
import { openCard } from '../vault/cards.ts';
import { changeCardAuth, changeSealedCvc, type CardAuthRow } from '../../store/vault/cards.ts';
import { changeTransaction } from '../../store/payments/changes.ts';
import { planMove, type OrderContext } from './transitions.ts';
import { threeDsRows, type Seen } from '../../store/payments/card-flow.ts';
import { lockAttemptRows } from '../../store/payments/payment-rows.ts';
import { gateAsRecorded, inFlight, type AttemptChange, type AttemptRow } from '../../store/payments/attempts.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { planAuthorized } from './operations.ts';
import { liabilityShift, type TransStatus } from '../../domain/card.ts';
import type { Outcome, ThreeDsResult } from '../../acquirer/connector.ts';
import { authenticationFailed, connectorFor, operationRef } from './connectors.ts';
import { answered, callAcquirer, newAttempt, NO_ANSWER, planAnswered, planRecord, type Answer } from './attempts.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';

/*
 * The authorization of a card transaction after 3-D Secure, as an acquirer attempt
 * (attempts.ts): record (pending -> processing, the attempt, its recovery job, the CVC dropped:
 * it served this one request), call (the challenge's answer, then the authorization) with no
 * transaction open, apply (processing -> accepted | declined | error, or left processing).
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
});

/**
 * One step of the 3-D Secure page (a visit, a challenge's answer, a cancel), once: the first
 * request of a pending transaction records the authorization and moves it to processing, so a
 * repeated visit or a double submit sees it in flight and shows the order as it is.
 * Undefined for an unknown transaction or one without 3-D Secure.
 */
export async function authorizeStep(ctx: Ctx, transactionId: TransactionId, step: Step): Promise<ThreeDsVisit | undefined> {
  if (!isUuid(transactionId)) return undefined;
  const rec = await ctx.db.tx(async (q) => {
    const rows = await threeDsRows(q, transactionId, true);
    if (!rows?.auth) return undefined;
    const { txn, order, project, auth } = rows;
    const view: ThreeDsView = { txn: { ...txn }, order: { ...order }, project, auth };
    if (txn.status !== 'pending') return { view, order };
    const now = nowFor(project);
    const w = new WriteSet();
    if (step.kind === 'cancel') {
      if (rows.card) changeSealedCvc(w, rows.card.id, null);
      planMove(ctx, w, txn, rows, 'cancelled', now, { reason: 'cancelled by customer', source: 'customer' });
      await w.run(q, { commit: true });
      return { view, order: rows.order };
    }
    if (auth.trans_status === 'C' && step.kind !== 'challenge') return { view, order, challenge: true };
    const dk = rows.card && (await existingDataKey(q, ctx.masterKey, project.id));
    if (!rows.card || !dk) throw new Error(`transaction ${txn.id} has no card to authorize`);
    const card = openCard(dk, rows.card);
    const a = newAttempt(ctx, project, txn, 'authorization', txn.amount, now, { request: { step: step.kind } });
    planRecord(w, a);
    // the challenge's answer goes to the 3-D Secure server first: an attempt of its own
    const challenge =
      auth.trans_status === 'C' && step.kind === 'challenge'
        ? newAttempt(ctx, project, txn, 'three_ds', txn.amount, now, { request: { step: 'challenge' } })
        : undefined;
    if (challenge) planRecord(w, challenge);
    // The CVC served this one authorization request.
    changeSealedCvc(w, rows.card.id, null);
    planMove(ctx, w, txn, rows, 'processing', now);
    await w.run(q, { commit: true });
    // what the apply plans from, as this statement left the rows (planMove changed them in memory)
    const recorded: Recorded = { rows: { txn, order, project, statuses: rows.statuses, attempt: a }, seen: rows.seen! };
    return { view, order, attempt: a, challenge, card, txn, now, recorded };
  });
  if (!rec) return undefined;
  if (!('attempt' in rec) || !rec.attempt) return { view: rec.view, order: rec.order, challenge: Boolean(rec.challenge) };
  const { attempt: a, challenge, card, txn, now } = rec;
  let three = threeOf(rec.view.auth!);
  let answer: Answer | undefined;
  const connector = connectorFor(ctx, rec.view.project);
  let asked: Answer<ThreeDsResult> | undefined;
  if (challenge && step.kind === 'challenge') {
    asked = await callAcquirer(ctx, challenge, () =>
      connector.completeChallenge({ ...operationRef(txn, now, challenge.id), card, answer: step.answer }),
    );
    // no answer from the 3-D Secure server: nothing was authorized, the payment fails
    three = 'outcome' in asked ? asked.outcome : { trans_status: 'U', liability_shift: false };
    if ('error' in asked) answer = { outcome: authenticationFailed('N') };
  }
  const decided = three;
  answer ??= PROCEED.has(decided.trans_status)
    ? await callAcquirer(ctx, a, () =>
        connector.authorize({ ...operationRef(txn, now, a.id), card, three_ds: decided, capture: !txn.capture_mode }),
      )
    : { outcome: authenticationFailed(decided.trans_status) };
  const authenticated: Authenticated = {
    three,
    challenged: Boolean(asked),
    ...(challenge && asked ? { challenge: { attempt: challenge, answer: asked } } : {}),
  };
  const order = await applyAuthorization(ctx, a.id, answer, authenticated, rec.recorded);
  return { view: rec.view, challenge: false, order: order ?? rec.order };
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
  if (!inFlight(a) || rows.txn.status !== 'processing') return false;
  const now = nowFor(rows.project);
  const change: AttemptChange = auth.reversed ? { status: 'reversed', settled: now, modified: now } : answered(answer, now);
  const { txn, project } = rows;
  const outcome: Outcome | undefined = 'outcome' in answer ? answer.outcome : undefined;
  const patch = outcomePatch(txn, outcome ?? NO_ANSWER, auth.three);
  if (auth.challenged && auth.three)
    changeCardAuth(w, txn.id, { trans_status: auth.three.trans_status, eci: auth.three.eci ?? null, modified: now });
  if (outcome?.reference) changeCardAuth(w, txn.id, { acquirer_reference: outcome.reference });
  const to = !outcome || outcome.status === 'processing' ? undefined : outcome.status === 'accepted' ? 'accepted' : failedStatus(outcome);
  if (!to) changeTransaction(w, txn.id, { ...patch, modified: now });
  else {
    planMove(
      ctx,
      w,
      txn,
      rows,
      to,
      now,
      to === 'accepted' ? { reason: null, patch } : { reason: outcome!.reason ?? failedStatus(outcome!), patch },
    );
    if (to === 'accepted') planAuthorized(w, project, txn, now);
  }
  planAnswered(ctx, w, a, change, now);
  if (auth.challenge) planAnswered(ctx, w, auth.challenge.attempt, challengeSettled(auth.challenge.answer, now), now);
  return true;
}
