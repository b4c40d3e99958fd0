/**
 * A merchant's balances, as the ledger has them (docs/payouts.md). Each is what Tender owes the
 * merchant on one account, a credit balance shown positive: pending (`merchant_payable`, money
 * captured and not yet settled by the acquirer), available (`merchant_available`, settled, net of
 * fees, refunds and chargebacks, less what payouts took) and reserved (`merchant_reserved`, the
 * rolling reserve). Available can be negative: the next payout carries it.
 */
export interface Balance {
  currency: string;
  pending: number;
  available: number;
  reserved: number;
}

/**
 * Both sides of the balance identity of one merchant, mode and currency: what the counters say the
 * merchant earned (captured − refunded − still charged back; a chargeback won back is no longer
 * charged back), and where the ledger says it is.
 */
export interface MerchantFlows {
  merchant_id: string;
  mode: string;
  currency: string;
  /** from the payments' counters: captured − refunded − charged back + chargebacks won back */
  earned: number;
  /** from the ledger */
  fees: number;
  paid_out: number;
  pending: number;
  available: number;
  reserved: number;
}

/** Why a merchant's books do not add up, or undefined when earned = fees + paid out + pending + available + reserved. */
export function identityProblem(f: MerchantFlows): string | undefined {
  const booked = f.fees + f.paid_out + f.pending + f.available + f.reserved;
  if (booked === f.earned) return undefined;
  return (
    `merchant ${f.merchant_id} (${f.mode}, ${f.currency}): captured − refunded − charged back is ${f.earned}, ` +
    `fees ${f.fees} + paid out ${f.paid_out} + pending ${f.pending} + available ${f.available} + reserved ${f.reserved} is ${booked}`
  );
}
