import { captureLegs, figures } from '../../../domain/ledger.ts';
import { creditRule } from '../operations.ts';
import type { FollowUpKind } from './follow-up-kind.ts';

/*
 * A capture: money taken from an authorization, all of it or in part (a partial capture, a
 * capture per order line). Its order is `accepted`; the one that takes all that remains completes
 * the payment and closes the authorization.
 */
export const CAPTURE: FollowUpKind = {
  op: 'capture',
  errorType: 'CanNotCaptureTransaction',
  flag: 'has-captures',
  spec: (rows, a, base) => ({
    ...base,
    status: base.status === 'final' ? 'accepted' : base.status,
    kind: 'capture',
    direction: 'credit',
    figures: figures('credit', a.amount, creditRule(rows.project, rows.txn.payment_method)),
    // a capture per order line lists the lines it took
    body: a.request.order_lines ? { order_lines: a.request.order_lines } : undefined,
  }),
  original(txn, a, now) {
    const captured = txn.captured_amount + a.amount;
    // a capture per order line may leave part of the authorization capturable (captures.ts); one of all that remains closes it
    if (a.request.order_lines && captured + txn.voided_amount < txn.authorized_amount)
      return { patch: { captured_amount: captured, modified: now } };
    return {
      to: 'completed',
      change: { source: String(a.request.source ?? 'merchant'), patch: { captured_amount: captured, is_capturable: false } },
    };
  },
  legs: (a, spec) => captureLegs(a.amount, spec.figures.fee, true),
  settles: true,
};
