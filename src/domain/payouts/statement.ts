/**
 * A merchant's statement lines (docs/payouts.md, "Statements"): what each entry of the available
 * balance was, signed as it counts for the merchant (positive: owed to them). A settled
 * transaction gives its gross line (payment, refund, chargeback, chargeback_reversal) and its
 * fee line; a reserve, its release, a payout and a payout that came back give one line each. The
 * lines of an entry add up to what it moved, so a payout's lines add up to its amount.
 */
export const LINE_TYPES = [
  'payment',
  'refund',
  'chargeback',
  'chargeback_reversal',
  'fee',
  'reserve',
  'reserve_release',
  'payout',
  'payout_return',
] as const;
export type LineType = (typeof LINE_TYPES)[number];

/** What a line is made from: an entry of `merchant_available` and what it is of. */
export interface EntryFacts {
  kind: string;
  /** the ledger's sign: negative credits the merchant */
  amount: number;
  order_kind: string | null;
  fee: number | null;
}

const GROSS: Record<string, LineType> = {
  payment: 'payment',
  capture: 'payment',
  refund: 'refund',
  chargeback: 'chargeback',
  reversal: 'chargeback_reversal',
};

/** The lines of one entry: type and amount (minor units, positive owed to the merchant). */
export function linesOf(e: EntryFacts): Array<{ type: LineType; amount: number }> {
  const owed = -Number(e.amount);
  if (e.kind === 'settlement') {
    const fee = Number(e.fee ?? 0);
    const gross = { type: GROSS[e.order_kind ?? ''] ?? 'payment', amount: owed + fee };
    return fee ? [gross, { type: 'fee', amount: -fee }] : [gross];
  }
  const type: LineType = e.kind === 'reserve' || e.kind === 'reserve_release' || e.kind === 'payout_return' ? e.kind : 'payout';
  return [{ type, amount: owed }];
}
