import type { Queryable } from '../../../store/db/db.ts';
import { nowFor, type Ctx } from '../../platform/context.ts';
import { DomainError, notFound } from '../../../domain/errors.ts';
import { capabilityProblem, type OperationKind } from '../../../acquirer/connector.ts';
import type { PaymentRows } from '../../../store/payments/payment-rows.ts';
import { attemptsOf, findAttempt, inFlight, recordAttempt, type AttemptRow } from '../../../store/payments/attempts.ts';
import type { ProjectRow } from '../../../domain/entities.ts';
import type { OrderId } from '../../../domain/ids.ts';
import { keyedAttemptId } from '../operation-key.ts';
import { loadOrderView } from '../order-view.ts';
import { connectorFor, operationRef } from '../connectors.ts';
import { sendFirstCall, type Answer } from './call.ts';
import { awaitAttempt, newAttempt, resultOf } from './rows.ts';
import { runAttempt, type Operation } from './runner.ts';
import { applyFollowUp, type Recorded } from './follow-up-answer.ts';
import type { FollowUpKind } from './follow-up-kind.ts';
import { FOLLOW_UPS } from './kinds.ts';

/*
 * Capture, void and refund: an operation on an authorized payment, one Operation for the three
 * kinds (capture.ts, void.ts, refund.ts declare what differs), run by the engine (runner.ts).
 * Round trips: record (BEGIN with the locking read, the attempt with COMMIT), then apply (one
 * statement gated on the rows as recorded; the locked read and write again when it is held back):
 * three, where the acquirer was asked under the lock in two (docs/performance-cards.md).
 */

export type FollowUpOp = FollowUpKind['op'];

/** What the request asks, as checked against the locked payment. */
export interface Decision {
  amount: number;
  /** the in-flight amounts of these kinds count against `max` (what is left) */
  kinds: OperationKind[];
  max: number;
  /** the request is for the operation already in flight of this kind (a full capture, a full void): answer with its result */
  same?: boolean;
  /** capability check: the amount of what this is part of, and how much was done before */
  of?: number;
  earlier?: number;
}

export interface FollowUpRequest {
  op: FollowUpOp;
  source: string;
  /** the payment, locked with its order */
  lock(q: Queryable): Promise<PaymentRows | undefined>;
  /** checks the request (throws its DomainError) and says what it reserves */
  decide(rows: PaymentRows, now: Date): Decision;
  /** what applying needs besides the amount (a refund's description, order lines) */
  request?: Record<string, unknown>;
}

type OrderView = NonNullable<Awaited<ReturnType<typeof loadOrderView>>>;

/** The order that records the operation, as the API answers it. */
export const followUp = (ctx: Ctx, project: ProjectRow, req: FollowUpRequest): Promise<OrderView> =>
  runAttempt(ctx, followUpOperation(ctx, project, req));

/** The operation of one capture, void or refund request. */
function followUpOperation(ctx: Ctx, project: ProjectRow, req: FollowUpRequest): Operation<Recorded, Answer, OrderView> {
  const kind = FOLLOW_UPS[req.op];
  const viewOf = async (orderId: OrderId) => (await loadOrderView(ctx.db, ctx, project.id, orderId))!;
  /** A request for an operation already recorded (a retried key, the full capture in flight): that attempt's result. */
  const sameAs = async (id: string | undefined, txnId: string) => {
    id ??= (await attemptsOf(ctx.db, project.id, txnId)).find((x) => x.kind === req.op && inFlight(x))?.id;
    const a = id && (await awaitAttempt(ctx, id));
    if (!a) throw new DomainError(kind.errorType, `the ${req.op} did not go through`);
    return viewOf(resultOf(a, kind.errorType).orderId);
  };
  return {
    kind: req.op,
    async record() {
      const recorded = await ctx.db.tx(async (q) => {
        const rows = await req.lock(q);
        if (!rows) throw notFound('transaction');
        // the retry of an Idempotency-Key whose request recorded its attempt: that attempt's result
        const keyed = keyedAttemptId(req.op);
        if (keyed && (await findAttempt(q, keyed))) return { found: true as const, same: keyed, txnId: rows.txn.id };
        const now = nowFor(project);
        const d = req.decide(rows, now);
        if (d.same) return { found: true as const, same: undefined, txnId: rows.txn.id };
        const problem = capabilityProblem(connectorFor(ctx, project).capabilities, {
          kind: req.op,
          amount: d.amount,
          of: d.of,
          earlier: d.earlier,
        });
        if (problem) throw new DomainError(kind.errorType, problem);
        const attempt: AttemptRow = newAttempt(ctx, project, rows.txn, req.op, d.amount, now, {
          authorization_reference: rows.reference,
          request: { source: req.source, ...req.request },
        });
        if (!(await recordAttempt(q, attempt, { kinds: d.kinds, max: d.max }, { commit: true })))
          throw new DomainError(kind.errorType, 'the amount is no longer available: another request reserved it first');
        return { found: false as const, rows, attempt };
      });
      if (recorded.found) return { done: await sameAs(recorded.same, recorded.txnId) };
      return { recorded: { rows: recorded.rows, attempt: recorded.attempt } };
    },
    send({ rows, attempt: a }) {
      const connector = connectorFor(ctx, project);
      const ref = { ...operationRef(rows.txn, a.created, a.id, a.amount), reference: a.authorization_reference ?? '' };
      return sendFirstCall(ctx, project, a, () => connector[req.op](ref), connector);
    },
    async apply(recorded, answer) {
      const applied = await applyFollowUp(ctx, recorded.attempt.id, answer, recorded);
      return applied.order ?? viewOf(resultOf(applied.attempt, kind.errorType).orderId);
    },
  };
}
