import { nowFor, type Ctx } from '../../platform/context.ts';
import { WriteSet } from '../../../store/db/writes.ts';
import { transactionById } from '../../../store/payments/orders.ts';
import { attemptsOf, changeAttempt, inFlight, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { Outcome } from '../../../acquirer/connector.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../../domain/entities.ts';
import { connectorFor, operationRef } from '../connectors.ts';
import { callAcquirer, type Answer } from './call.ts';
import { newAttempt, planRecord } from './rows.ts';
import { runAttempt, type Operation } from './runner.ts';
import { applyAuthorization, type Authenticated, type Recorded } from './authorization-answer.ts';

/**
 * An answer Tender does not take (a partial approval, an answer that does not match its request):
 * logged with the attempt id and reversed at once. Should the reversal get no answer (or be
 * refused), the authorization is left in flight with no answer: its recovery reverses it.
 */
export async function reverseRefused(
  ctx: Ctx,
  project: ProjectRow,
  a: AttemptRow,
  refused: Outcome,
  auth: Authenticated,
  recorded: Recorded,
) {
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
 * gone, and Tender cannot know whether the issuer holds the money; inquiry.ts), or one whose
 * answer Tender does not take (`refused`, with the amount to reverse). The reversal is an attempt
 * of its own (recorded before the call; a retry reuses it, so the acquirer sees one reversal, of
 * the amount and for the cause first recorded); once accepted the authorization attempt is
 * `reversed` and the payment declined: with the refused answer's code, else processing_error.
 * A reversal without an answer, or refused, throws (the recovery job retries).
 */
export const reverseAuthorization = (
  ctx: Ctx,
  project: ProjectRow,
  auth: AttemptRow,
  refused?: Outcome,
  authenticated: Authenticated = {},
) => runAttempt(ctx, reversalOperation(ctx, project, auth, refused, authenticated));

interface Reversing {
  txn: TransactionRow;
  reversal: AttemptRow;
  now: Date;
}

function reversalOperation(
  ctx: Ctx,
  project: ProjectRow,
  auth: AttemptRow,
  refused: Outcome | undefined,
  authenticated: Authenticated,
): Operation<Reversing, Answer, OrderRow | undefined> {
  return {
    kind: 'reversal',
    async record() {
      const txn = await transactionById(ctx.db, auth.transaction_id);
      if (!txn) return { done: undefined };
      const now = nowFor(project);
      let reversal = (await attemptsOf(ctx.db, project.id, txn.id)).find((x) => x.kind === 'reversal' && inFlight(x));
      if (!reversal) {
        const cause = refused ? { refused: { ...refused, reverse: undefined } } : {};
        reversal = newAttempt(ctx, project, txn, 'reversal', refused?.reverse?.amount ?? auth.amount, now, {
          request: { original: auth.id, ...cause },
        });
        const w = new WriteSet();
        planRecord(w, reversal);
        await w.run(ctx.db);
      }
      return { recorded: { txn, reversal, now } };
    },
    send: ({ txn, reversal, now }) =>
      callAcquirer(ctx, reversal, () =>
        connectorFor(ctx, project).reverse({
          ...operationRef(txn, now, reversal.id, reversal.amount),
          original_operation_id: auth.id,
          ...(auth.reference ? { reference: auth.reference } : {}),
        }),
      ),
    async apply({ txn, reversal, now }, asked) {
      if ('error' in asked) {
        await changeAttempt(ctx.db, reversal.id, { status: 'unknown', error: asked.error.slice(0, 500), modified: now });
        throw new Error(`attempt ${auth.id}: the reversal got no answer: ${asked.error}`);
      }
      if (asked.outcome.status !== 'accepted') {
        await changeAttempt(ctx.db, reversal.id, {
          status: 'failed',
          response_code: asked.outcome.response_code,
          settled: now,
          modified: now,
        });
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
    },
  };
}
