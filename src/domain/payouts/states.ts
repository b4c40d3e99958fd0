/**
 * A payout's states (docs/payouts.md "States") and the moves between them. A run makes a payout
 * `scheduled` and its file on disk makes it `sent`; the bank's files move it on: its statement
 * books it (`booked`) or shows it coming back (`returned`), its status report rejects it
 * (`rejected`). Returned and rejected are final; a booked transfer can still come back.
 */
export type PayoutState = 'scheduled' | 'sent' | 'booked' | 'rejected' | 'returned';

/** What a bank file says of a payout. */
export type BankEvent = 'booked' | 'returned' | 'rejected';

const MOVES: Record<PayoutState, readonly PayoutState[]> = {
  scheduled: ['sent'],
  sent: ['booked', 'rejected', 'returned'],
  booked: ['returned'],
  rejected: [],
  returned: [],
};

export const canMove = (from: PayoutState, to: PayoutState): boolean => MOVES[from].includes(to);

/** Whether the move gives the payout's money back to the merchant's available balance. */
export const givesMoneyBack = (to: PayoutState): boolean => to === 'returned' || to === 'rejected';

export type BankOutcome =
  | { kind: 'move'; to: PayoutState }
  /** the store already says so: a file read again changes nothing */
  | { kind: 'already' }
  | { kind: 'refused'; reason: 'not_sent' | 'final_state' };

/** What a bank file's line does to a payout in `state`. */
export function bankOutcome(state: PayoutState, event: BankEvent): BankOutcome {
  if (canMove(state, event)) return { kind: 'move', to: event };
  if (state === event) return { kind: 'already' };
  // a statement that shows a transfer booked and then back again, read after the return, tells nothing new
  if (state === 'returned' && event === 'booked') return { kind: 'already' };
  if (state === 'scheduled') return { kind: 'refused', reason: 'not_sent' };
  return { kind: 'refused', reason: 'final_state' };
}
