import { isUuid, type TransactionId } from '../../../domain/ids.ts';
import { nowFor, type Ctx } from '../../platform/context.ts';
import { existingDataKey } from '../../platform/crypto-envelope.ts';
import { openCard } from '../../vault/cards.ts';
import { changeSealedCvc, type CardAuthRow } from '../../../store/vault/cards.ts';
import { planMove } from '../transitions.ts';
import { threeDsRows } from '../../../store/payments/card-flow.ts';
import { recordAuthorization } from '../../../store/payments/payment-rows.ts';
import { authorizationInFlight, dropAttempt, type AttemptRow } from '../../../store/payments/attempts.ts';
import { WriteSet } from '../../../store/db/writes.ts';
import { dueNow } from '../../../store/platform/jobs.ts';
import { liabilityShift, type TransStatus } from '../../../domain/card.ts';
import type { CardData, ThreeDsResult } from '../../../acquirer/connector.ts';
import { authenticationFailed, authenticatorFor, connectorFor, operationRef } from '../connectors.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../../domain/entities.ts';
import { callAcquirer, sendFirstCall, type Answer } from './call.ts';
import { newAttempt } from './rows.ts';
import { runAttempt, type Operation } from './runner.ts';
import { applyAuthorization, type Authenticated, type Recorded } from './authorization-answer.ts';
import { reverseRefused } from './reversal.ts';
import { judgeAfterThreeDs } from '../../risk/after-3ds.ts';

/*
 * The authorization of a card transaction after 3-D Secure, as an Operation of the engine
 * (runner.ts): record (the attempt, with the read, the CVC dropped: it served this one request;
 * the transaction stays pending), send (the challenge's answer, then the authorization) with no
 * transaction open, apply (authorization-answer.ts; an answer Tender does not take is reversed,
 * reversal.ts).
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
  return runAttempt(ctx, authorizationOperation(ctx, transactionId, step));
}

/** What the record read and wrote: the rows as it left them, the card opened for this one call, the challenge's own attempt. */
interface Authorizing {
  view: ThreeDsView;
  recorded: Recorded;
  auth: CardAuthRow;
  card: CardData;
  challenge?: AttemptRow;
}

/** What was sent: the challenge's answer (when asked) and the authorization's. */
interface Sent {
  answer: Answer;
  authenticated: Authenticated;
}

function authorizationOperation(
  ctx: Ctx,
  transactionId: TransactionId,
  step: Step,
): Operation<Authorizing, Sent, ThreeDsVisit | undefined> {
  return {
    kind: 'authorization',
    async record() {
      // the attempts' transaction, amounts and times come from the row the statement reads
      const real = new Date();
      const unread = { id: transactionId, order_id: '', currency: '' };
      const authorization = newAttempt(ctx, { id: '' }, unread, 'authorization', 0, real, { request: { step: step.kind } });
      const attempts = {
        authorization,
        // the challenge's answer goes to the 3-D Secure server first: an attempt of its own
        challenge:
          step.kind === 'challenge'
            ? newAttempt(ctx, { id: '' }, unread, 'three_ds', 0, real, { request: { step: 'challenge' } })
            : undefined,
        // recovery due within the wake window: the workers are told, as planRecord does
        wake: dueNow(authorization.recover_at!),
      };
      // a challenge's answer is sent first (within ACQUIRER_TIMEOUT_MS): the authorization's
      // recovery, and so its send deadline, come that much later
      const { recoveryMs, timeoutMs } = ctx.config.acquirer;
      const rows = await recordAuthorization(ctx.db, transactionId, attempts, real, recoveryMs + (attempts.challenge ? timeoutMs : 0));
      if (!rows?.auth) return { done: undefined };
      const { txn, order, project, auth, attempt: a } = rows;
      const view: ThreeDsView = { txn: { ...txn }, order: { ...order }, project, auth };
      // not recorded: the payment is over, in flight (a second visit), or its challenge is to be answered first
      if (!a)
        return {
          done: {
            view,
            order,
            challenge: txn.status === 'pending' && auth.trans_status === 'C' && step.kind !== 'challenge' && !rows.flying,
          },
        };
      const dk = rows.card && (await existingDataKey(ctx.db, ctx.masterKey, project.id));
      if (!rows.card || !dk) {
        await dropAttempt(ctx.db, a.id);
        if (rows.challenge) await dropAttempt(ctx.db, rows.challenge.id);
        throw new Error(`transaction ${txn.id} has no card to authorize`);
      }
      const recorded: Recorded = { rows: { txn, order, project, statuses: rows.statuses, attempt: a }, seen: rows.seen };
      return {
        recorded: { view, recorded, auth, card: openCard(dk, rows.card), ...(rows.challenge ? { challenge: rows.challenge } : {}) },
      };
    },
    async send({ recorded, auth, card, challenge }) {
      const { txn, project, attempt: a } = recorded.rows;
      const now = a.created;
      let three = threeOf(auth);
      let answer: Answer | undefined;
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
      const connector = connectorFor(ctx, project);
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
      return { answer, authenticated };
    },
    async apply({ view, recorded }, { answer, authenticated }) {
      const { project, attempt: a, order } = recorded.rows;
      // apply: planned from the rows as the record's statement left them
      const refused = 'outcome' in answer && answer.outcome.reverse ? answer.outcome : undefined;
      const after = refused
        ? await reverseRefused(ctx, project, a, refused, authenticated, recorded)
        : await applyAuthorization(ctx, a.id, answer, authenticated, recorded);
      return { view, challenge: false, order: after ?? order };
    },
  };
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
