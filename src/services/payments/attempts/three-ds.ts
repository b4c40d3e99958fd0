import { newId, type OrderId, type TransactionId } from '../../../domain/ids.ts';
import { nowFor, type Ctx } from '../../platform/context.ts';
import { addCardAuth, changeSealedCvc, type VaultCardRow } from '../../../store/vault/cards.ts';
import type { StartView } from '../../../store/payments/card-flow.ts';
import { recordStart, startRows, type StartRows } from '../../../store/payments/payment-rows.ts';
import { dropAttempt, dropAttemptPart, gateAsRecorded, inFlight, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { WriteSet } from '../../../store/db/writes.ts';
import { liabilityShift, type TransStatus } from '../../../domain/card.ts';
import { DomainError, inFlightError, invalid, notFound } from '../../../domain/errors.ts';
import type { ThreeDsResult } from '../../../acquirer/connector.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../../domain/entities.ts';
import { keyedAttemptId } from '../operation-key.ts';
import { planMove } from '../transitions.ts';
import type { RiskView } from '../../risk/screen.ts';
import { callAcquirer, type Answer } from './call.ts';
import { awaitAttempt, newAttempt, planAnswered } from './rows.ts';
import { applyOnce, runAttempt, type Operation } from './runner.ts';

/*
 * The start of card authentication, the 3-D Secure lookup, as an Operation of the engine
 * (runner.ts), for cards and wallets alike: new -> pending with 3-D Secure decided.
 */

/** How a payment method starts card authentication (the hosted form and API with a card; wallets with a device token). */
export interface AuthenticationStart {
  /** the stored card, and the input field that named it (for errors) */
  vaultToken: string;
  field: string;
  /** the payment method the transaction must have, when the caller has not checked it */
  method?: string;
  /** the event source of the move to pending (default set_status) */
  source?: string;
  /** what the request must satisfy of the card, checked before anything is recorded */
  check?(card: VaultCardRow): void;
  /** 3-D Secure decided without the acquirer: the device authenticated the customer (a wallet's cryptogram) */
  device?(card: VaultCardRow): ThreeDsResult | undefined;
  /** asks the acquirer's 3-D Secure server, as the attempt `operationId`, with no database transaction open */
  ask(card: VaultCardRow, txn: TransactionRow, now: Date, operationId: string, order: OrderRow): Promise<ThreeDsResult>;
  /** the lookup attempt's id, when chosen before (the 3DS Method's threeDSServerTransID) */
  attemptId?: string;
  /** what else the started transaction keeps: the card's sealed CVC (the hosted form), details to show, the risk decision */
  keep?(card: VaultCardRow): { cvc?: string; details?: Record<string, unknown>; risk?: RiskView };
}

/**
 * Starts card authentication, once for cards and wallets alike: the transaction must be new and
 * unexpired and the card stored for it; 3-D Secure is decided and the transaction moves
 * new -> pending. Asking the acquirer's 3-D Secure server is an attempt (docs/money.md "Acquirer
 * attempts"). A lookup moves no money, so it is recorded in the statement that reads the
 * transaction (locked for that statement), before the request is checked, and committed with it;
 * a refused request drops it again. It is asked with no database transaction open, and its
 * answer applied in one statement gated on the rows being as read (else under the lock).
 * 3-D Secure the device decided (a wallet's cryptogram) is an answer with no call: the lookup is
 * dropped in the same apply, and no attempt stays.
 */
export const startAuthentication = (
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  transactionId: TransactionId,
  start: AuthenticationStart,
): Promise<ThreeDsResult> => runAttempt(ctx, lookupOperation(ctx, project, orderId, transactionId, start));

/** What the lookup's record read and wrote, for its call and apply. */
interface Looking {
  rows: StartRows;
  attempt: AttemptRow;
  card: VaultCardRow;
  now: Date;
}

function lookupOperation(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  transactionId: TransactionId,
  start: AuthenticationStart,
): Operation<Looking, { answer: Answer<ThreeDsResult>; asked: boolean }, ThreeDsResult> {
  return {
    kind: 'three_ds',
    // record, with the read
    async record() {
      const keyed = keyedAttemptId('three_ds');
      const now = nowFor(project);
      const lookup = (id?: string) =>
        newAttempt(ctx, project, { id: transactionId, order_id: orderId, currency: '' }, 'three_ds', 0, now, {
          request: { vault_token: start.vaultToken },
          id,
        });
      let a = lookup(start.attemptId);
      let rows = await recordStart(ctx.db, project.id, orderId, transactionId, start.vaultToken, a, keyed ?? null);
      // the retry of an Idempotency-Key whose request recorded its lookup: that lookup's result; when
      // it got no answer, this retry asks again as a lookup of its own (a lookup moves no money)
      if (keyed && rows?.attempt) {
        const earlier = await keyedLookup(ctx, keyed);
        if (earlier !== 'unanswered') return { done: earlier };
        a = lookup(newId());
        rows = await recordStart(ctx.db, project.id, orderId, transactionId, start.vaultToken, a, null);
      }
      try {
        checkStart(rows?.txn, start, now);
        checkCard(rows!.txn, rows!.card, start);
        start.check?.(rows!.card);
        if ('three_ds' in rows!.reserved || !rows!.recorded)
          throw new DomainError('TransactionAlreadyStarted', 'the transaction is being authenticated');
      } catch (err) {
        if (rows?.recorded) await dropAttempt(ctx.db, a.id);
        throw err;
      }
      Object.assign(a, { amount: rows!.txn.amount, currency: rows!.txn.currency });
      return { recorded: { rows: rows!, attempt: a, card: rows!.card!, now } };
    },
    // with no transaction open (no call for 3-D Secure the device decided)
    async send({ rows, attempt: a, card, now }) {
      const device = start.device?.(card);
      if (device) return { answer: { outcome: device }, asked: false };
      return { answer: await callAcquirer(ctx, a, () => start.ask(card, rows.txn, now, a.id, rows.order)), asked: true };
    },
    // planned from the rows the record read, in one statement gated on their being as the record
    // left them (an order of several transactions reads its siblings again); else, or when the
    // gate held it back, planned the same from the rows read again under the lock
    async apply({ rows, attempt: a }, { answer, asked }) {
      const applied = await applyOnce<Applied>(ctx, {
        ...(rows.statuses.length === 1
          ? {
              asRecorded: (w) => {
                const planned = planApplied(
                  ctx,
                  w,
                  { ...rows, attempt: a, txn: { ...rows.txn }, order: { ...rows.order } },
                  answer,
                  start,
                  asked,
                );
                gateAsRecorded(w, rows.seen, rows.txn, a.id);
                return planned;
              },
            }
          : {}),
        underLock: async (q, w) =>
          planApplied(ctx, w, await startRows(q, project.id, orderId, transactionId, start.vaultToken, a.id), answer, start, asked),
      });
      if ('three' in applied) return applied.three;
      if ('refused' in applied) throw new DomainError('TransactionAlreadyStarted', applied.refused);
      throw lookupUnanswered();
    },
  };
}

/**
 * What a retried request answers from its 3-D Secure lookup (found by its Idempotency-Key): as the
 * first request did, or `unanswered` when that lookup failed: no answer came (a lookup is only
 * `failed` without one; an answer, whatever its 3-D Secure status, settles it `succeeded`).
 */
async function keyedLookup(ctx: Ctx, id: string): Promise<ThreeDsResult | 'unanswered'> {
  const a = (await awaitAttempt(ctx, id))!;
  if (a.status === 'succeeded') {
    const trans_status = a.response_code as TransStatus;
    return { trans_status, liability_shift: liabilityShift(trans_status) };
  }
  if (inFlight(a)) throw inFlightError('TransactionAlreadyStarted', 'the transaction is being authenticated');
  return 'unanswered';
}

const lookupUnanswered = () =>
  new DomainError(
    'FailedToFetchTransactionInformation',
    'the 3-D Secure server did not answer; the transaction can be authenticated again',
  );

type Applied = { three: ThreeDsResult } | { refused: string } | { unanswered: true };

/**
 * The 3-D Secure answer's writes gathered in `w`: the attempt settled (dropped when it was not
 * `asked`: the device decided) and, when the transaction may still start, the start
 * (planStarted). 3-D Secure moves no money: without an answer the lookup failed, and the
 * transaction stays new.
 */
function planApplied(
  ctx: Ctx,
  w: WriteSet,
  rows: StartRows | undefined,
  answer: Answer<ThreeDsResult>,
  start: AuthenticationStart,
  asked: boolean,
): Applied {
  const attempt = rows?.attempt;
  if (!rows || !attempt || !inFlight(attempt)) return { refused: 'the transaction is being authenticated' };
  const at = nowFor(rows.project);
  if ('error' in answer) {
    planAnswered(ctx, w, attempt, { status: 'failed', error: answer.error.slice(0, 500), settled: at, modified: at }, at);
    return { unanswered: true };
  }
  const three = answer.outcome;
  if (asked) planAnswered(ctx, w, attempt, { status: 'succeeded', response_code: three.trans_status, settled: at, modified: at }, at);
  else w.add(dropAttemptPart(attempt.id));
  const problem = startProblem(rows.txn, at);
  if (!problem) planStarted(ctx, w, rows, rows.card!, three, start, at);
  return problem ? { refused: problem } : { three };
}

/** The start gathered in `w`: the 3-D Secure row, what the card keeps, and the move new -> pending with the card's details. */
function planStarted(
  ctx: Ctx,
  w: WriteSet,
  rows: StartView,
  card: VaultCardRow,
  three: ThreeDsResult,
  start: AuthenticationStart,
  now: Date,
) {
  const { txn } = rows;
  const kept = start.keep?.(card) ?? {};
  if (kept.cvc !== undefined) changeSealedCvc(w, card.id, kept.cvc);
  addCardAuth(w, {
    transaction_id: txn.id,
    project_id: txn.project_id,
    vault_token: card.id,
    trans_status: three.trans_status,
    eci: three.eci ?? null,
    emv: three.emv ?? null,
    acquirer_reference: null,
    created: now,
    modified: now,
  });
  const details: Record<string, unknown> = {
    ...txn.details,
    truncated_pan: card.truncated_pan,
    card_expiry: card.expiry,
    ...kept.details,
    vault_token: card.id,
  };
  if (three.trans_status !== 'C') details.liability_shift = three.liability_shift;
  planMove(ctx, w, txn, rows, 'pending', now, {
    ...(start.source ? { source: start.source } : {}),
    patch: { payment_method_brand: card.brand, details, ...(kept.risk ? { risk: kept.risk } : {}) },
  });
}

/** Why a transaction cannot start (any more): not new, or expired. */
function startProblem(txn: TransactionRow, now: Date): string | undefined {
  if (txn.status !== 'new') return `transaction already started: it is ${txn.status}`;
  if (txn.expires_at && now >= new Date(txn.expires_at)) return 'transaction has expired';
  return undefined;
}

/** The rules of starting: the transaction exists, has the method, is new and unexpired. */
function checkStart(txn: TransactionRow | undefined, start: Pick<AuthenticationStart, 'method'>, now: Date): asserts txn is TransactionRow {
  if (!txn) throw notFound('transaction');
  if (start.method && txn.payment_method !== start.method)
    throw invalid('transaction_id', `a ${txn.payment_method} transaction is not authenticated with a card`);
  const problem = startProblem(txn, now);
  if (problem) throw new DomainError('TransactionAlreadyStarted', problem);
}

/** ... and the card was stored for it. */
function checkCard(
  txn: TransactionRow,
  row: VaultCardRow | undefined,
  start: Pick<AuthenticationStart, 'field'>,
): asserts row is VaultCardRow {
  if (!row || row.transaction_id !== txn.id) throw invalid(start.field, `${start.field} is not a card stored for this transaction`);
}
