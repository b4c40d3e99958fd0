import type { ErrorType } from '../../../domain/errors.ts';
import type { Leg } from '../../../domain/ledger.ts';
import type { TransactionRow } from '../../../domain/entities.ts';
import type { AttemptRow } from '../../../store/payments/attempts.ts';
import type { TransactionChange } from '../../../store/payments/changes.ts';
import type { PaymentRows } from '../../../store/payments/payment-rows.ts';
import type { ChildSpec } from '../operations.ts';
import type { StatusChange } from '../transitions.ts';

/** What every kind's order shares: its amount, source and the acquirer's answer; `final` is the kind's own end status. */
export type SpecBase = Pick<ChildSpec, 'amount' | 'source' | 'outcomes'> & { status: ChildSpec['status'] | 'final' };

/** What a succeeded operation does to the original payment: a status move, or a change of its counters. */
export type OriginalChange = { to: 'completed' | 'cancelled'; change: StatusChange } | { patch: TransactionChange; to?: undefined };

/**
 * One kind of operation on an authorized payment (capture.ts, void.ts, refund.ts), declared: the
 * order that records it, what its success changes on the original, and the journal's legs. The
 * engine (follow-up.ts) records, sends and applies every kind the same way.
 */
export interface FollowUpKind {
  op: 'capture' | 'void' | 'refund';
  /** the spec's error type of a refused request */
  errorType: ErrorType;
  /** the order's flag once one succeeded */
  flag: string;
  spec(rows: PaymentRows, a: AttemptRow, base: SpecBase): ChildSpec;
  original(txn: TransactionRow, a: AttemptRow, now: Date): OriginalChange;
  legs(a: AttemptRow, spec: ChildSpec): Leg[];
  /** whether its success is money the settlement batch takes (a void releases a hold, it settles nothing) */
  settles: boolean;
}
