import { releaseLegs } from '../../../domain/ledger.ts';
import type { FollowUpKind } from './follow-up-kind.ts';

/*
 * A void: what an authorization holds released, all of it or the rest after partial captures.
 * Its order is `completed`; a void of all that remains cancels the payment (or completes it with
 * what was captured).
 */
export const VOID: FollowUpKind = {
  op: 'void',
  errorType: 'CanNotVoidTransaction',
  flag: 'has-voids',
  spec: (_rows, a, base) => ({
    ...base,
    status: base.status === 'final' ? 'completed' : base.status,
    kind: 'void',
    direction: 'credit',
    description: a.request.description as string | undefined,
    figures: { fee: 0, settlement: 0 },
  }),
  original(txn, a, now) {
    const voided = txn.voided_amount + a.amount;
    // a void answered late, after a capture of all that remained closed the authorization: counted, no move
    if (txn.status === 'accepted' && voided + txn.captured_amount >= txn.authorized_amount)
      // the rest of one captured in part: the payment is done with what was captured
      return txn.captured_amount > 0
        ? { to: 'completed', change: { source: 'merchant', patch: { voided_amount: voided, is_capturable: false } } }
        : { to: 'cancelled', change: { reason: 'voided', source: 'merchant', patch: { voided_amount: voided, is_capturable: false } } };
    return { patch: { voided_amount: voided, modified: now } };
  },
  legs: (a) => releaseLegs(a.amount, 'void'),
  settles: false,
};
