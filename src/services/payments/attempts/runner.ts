import type { Ctx } from '../../platform/context.ts';
import type { Queryable } from '../../../store/db/db.ts';
import { WriteSet } from '../../../store/db/writes.ts';
import type { OperationKind } from '../../../acquirer/connector.ts';
import { refuseHeld } from './call.ts';

/*
 * The attempt engine (docs/money.md "Acquirer attempts"). Every step that asks the acquirer or
 * the 3-D Secure server (a lookup, an authorization, a capture, a void, a refund, a reversal, an
 * inquiry) is an Operation of its own file beside this one, and runAttempt drives each the same way:
 *
 *   record   one short database transaction: the payment locked, the request checked against
 *            what is left after the reservations of attempts in flight, the attempt written
 *            `processing` with the time recovery asks about it (recover_at), COMMIT.
 *   send     the call (call.ts), with no database transaction open and no row lock held, bounded
 *            by ACQUIRER_TIMEOUT_MS. A throw or the timeout is no answer: the money may have moved.
 *   apply    once (applyOnce): the attempt settled (succeeded, failed) or left in flight
 *            (processing: answered later; unknown: no answer), and what the outcome moves.
 *   recover  the worker's sweep makes an attempt still in flight at its recover_at a job
 *            (inquiry.ts), which asks the acquirer and applies its answer with the kind's own apply.
 */

/** One kind of acquirer step, declared: how it records, what it sends, how its answer is applied. */
export interface Operation<Recorded, Reply, Result> {
  readonly kind: OperationKind;
  /**
   * Records the attempt and commits it; `done` when nothing is to be sent (the request answered
   * from an attempt recorded before, or refused before anything was written).
   */
  record(): Promise<{ recorded: Recorded } | { done: Result }>;
  /** The call or calls, made with no database transaction open. */
  send(recorded: Recorded): Promise<Reply>;
  /** Applies the reply (or the absence of one) to the attempt, once. */
  apply(recorded: Recorded, reply: Reply): Promise<Result>;
}

/**
 * Runs an operation: record, send, apply. It refuses (HeldTransactionError) when the caller holds
 * a database transaction, before anything is recorded: the record would commit only with the
 * caller's transaction, after the acquirer answered, and a crash meanwhile would lose what the
 * acquirer did. So no surface (API, portal, CLI, jobs) can wrap a money step in a transaction.
 */
export async function runAttempt<Recorded, Reply, Result>(ctx: Ctx, op: Operation<Recorded, Reply, Result>): Promise<Result> {
  refuseHeld(ctx, { kind: op.kind });
  const r = await op.record();
  if ('done' in r) return r.done;
  const reply = await op.send(r.recorded);
  return op.apply(r.recorded, reply);
}

/** How an answer is applied: planned from the rows as the record left them, else from the rows read again under the lock. */
export interface ApplyPlan<T> {
  /**
   * The writes planned from the record's rows into `w`, which the planner gates on those rows
   * being unchanged (gateAsRecorded); undefined when they cannot be planned from them (an order of
   * several transactions derives its status from its siblings as they are now). With nothing
   * written (nothing to apply), its result stands without a round trip.
   */
  asRecorded?: (w: WriteSet) => T | undefined;
  /** The same plan from the rows read under the lock, in one short transaction. */
  underLock: (q: Queryable, w: WriteSet) => Promise<T>;
}

/**
 * Applies an answer once: the request that made the call, and the recovery job that asks later,
 * may both bring one, and the first to come applies it. The request's apply is one statement
 * gated on the rows being as recorded (one round trip); when the gate holds it back (the recovery
 * job, another operation or an expiry came first), and for the recovery job, which has no record
 * of its own, the plan is made again from the rows read under the lock: a locking read, then the
 * statement with the COMMIT.
 */
export async function applyOnce<T>(ctx: Ctx, plan: ApplyPlan<T>): Promise<T> {
  if (plan.asRecorded) {
    const w = new WriteSet();
    const planned = plan.asRecorded(w);
    if (planned !== undefined && (w.empty || (await w.run(ctx.db)))) return planned;
  }
  return ctx.db.tx(async (q) => {
    const w = new WriteSet();
    const planned = await plan.underLock(q, w);
    if (!w.empty) await w.run(q, { commit: true });
    return planned;
  });
}
