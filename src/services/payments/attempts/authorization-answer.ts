import { nowFor, type Ctx } from '../../platform/context.ts';
import type { WriteSet } from '../../../store/db/writes.ts';
import { changeCardAuth } from '../../../store/vault/cards.ts';
import { changeTransaction } from '../../../store/payments/changes.ts';
import type { Seen } from '../../../store/payments/card-flow.ts';
import { lockAttemptRows } from '../../../store/payments/payment-rows.ts';
import { gateAsRecorded, inFlight, type AttemptChange, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { Outcome, ThreeDsResult } from '../../../acquirer/connector.ts';
import type { OrderRow, TransactionRow } from '../../../domain/entities.ts';
import { planMove, type OrderContext } from '../transitions.ts';
import { planAuthorized } from '../operations.ts';
import type { Answer } from './call.ts';
import { answered, NO_ANSWER, planAnswered } from './rows.ts';
import { applyOnce } from './runner.ts';

/*
 * An authorization's answer applied (pending or processing -> accepted | declined | error, or
 * processing while the acquirer's answer is not final), by the 3-D Secure page that made the call,
 * a reversal, or the recovery job's inquiry (inquiry.ts), whichever comes first.
 */

/** What the authorization's answer writes besides the attempt: the 3-D Secure result of a challenge, the transaction's outcomes and details. */
export interface Authenticated {
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
export interface Recorded {
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
export function applyAuthorization(ctx: Ctx, attemptId: string, answer: Answer, auth: Authenticated = {}, recorded?: Recorded) {
  return applyOnce<OrderRow | undefined>(ctx, {
    // an order of several transactions derives its status from its siblings as they are now: read under the lock
    ...(recorded && recorded.rows.statuses.length === 1
      ? {
          asRecorded: (w) => {
            const r = recorded.rows;
            // planned on copies: the rows in memory stay as recorded if the gate holds the writes back
            const rows = { ...r, txn: { ...r.txn }, order: { ...r.order }, statuses: [...r.statuses] };
            if (planAuthorization(ctx, w, rows, answer, auth)) gateAsRecorded(w, recorded.seen, rows.txn, attemptId);
            return rows.order;
          },
        }
      : {}),
    underLock: async (q, w) => {
      const rows = await lockAttemptRows(q, attemptId);
      if (rows) planAuthorization(ctx, w, rows, answer, auth);
      return rows?.order;
    },
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
