import type { Queryable } from '../../store/db/db.ts';
import * as ledger from '../../store/payments/ledger.ts';
import { counterViolations, remainingAuthorization, refundable } from '../../domain/ledger.ts';
import { identityProblem } from '../../domain/payouts/balances.ts';

export interface LedgerReport {
  ok: boolean;
  transactions: number;
  journals: number;
  /** the merchant, mode and currency triples whose balance identity was checked */
  balances: number;
  violations: string[];
}

/**
 * `tender ledger check`: every money invariant, for every order (of one project, or all).
 * - captured + voided <= authorized, refunded + charged back <= captured, no negative counter;
 * - every journal balances to zero;
 * - the counters equal what the capture, void, refund, chargeback and reversal orders add up to;
 * - the ledger agrees with the counters: the open hold and the receivable of each authorization;
 * - every money transaction has its fee and settlement figures;
 * - per merchant, mode and currency: captured − refunded − charged back + chargebacks won back
 *   = fees + paid out + pending + available + reserved (docs/payouts.md);
 * - every payout's journals agree with its state: one on its way or booked has taken its amount
 *   from the available balance, a returned or rejected one has given it all back;
 * - every payout's lines (the entries it took, services/payouts/statements.ts) add up to its amount.
 */
export async function checkLedger(q: Queryable, projectId?: string): Promise<LedgerReport> {
  const v: string[] = [];
  const at = (order: string, txn: string) => `order ${order} transaction ${txn}`;

  for (const r of await ledger.badCounters(q, projectId))
    for (const problem of counterViolations(r)) v.push(`${at(r.order_id, r.id)}: ${problem}`);

  for (const j of await ledger.unbalancedJournals(q, projectId))
    v.push(`journal ${j.journal_id} (order ${j.order_id}) does not balance: ${j.currency} ${j.sum > 0 ? '+' : ''}${j.sum}`);

  const totals = await ledger.childTotals(q, projectId);
  for (const t of totals) {
    const where = at(t.order_id, t.id);
    // a sale is captured by its authorization; a pre-authorization only by its capture orders
    if (t.capture_mode && t.captures !== t.captured_amount)
      v.push(`${where}: capture orders add up to ${t.captures}, captured_amount is ${t.captured_amount}`);
    if (t.voids !== t.voided_amount) v.push(`${where}: void orders add up to ${t.voids}, voided_amount is ${t.voided_amount}`);
    if (t.refunds !== t.refunded_amount) v.push(`${where}: refund orders add up to ${t.refunds}, refunded_amount is ${t.refunded_amount}`);
    if (t.order_refunded !== t.refunded_amount)
      v.push(`${where}: the order's refunded_amount ${t.order_refunded} differs from the transaction's ${t.refunded_amount}`);
    if (t.chargebacks - t.reversals !== t.charged_back_amount)
      v.push(
        `${where}: chargebacks ${t.chargebacks} less reversals ${t.reversals} differ from charged_back_amount ${t.charged_back_amount}`,
      );
  }

  for (const t of await ledger.ledgerTotals(q, projectId)) {
    const where = at(t.order_id, t.id);
    const open = t.capture_mode && t.status === 'accepted' ? remainingAuthorization(t) : 0;
    if (t.holds !== open) v.push(`${where}: the ledger holds ${t.holds} for it, the open authorization is ${open}`);
    if (t.receivable !== refundable(t))
      v.push(`${where}: the ledger's receivable is ${t.receivable}, captured less refunded and charged back is ${refundable(t)}`);
  }

  for (const t of await ledger.missingFigures(q, projectId)) v.push(`${at(t.order_id, t.id)}: fee or settlement figures are missing`);

  const merchants = await ledger.merchantFlows(q, projectId);
  for (const f of merchants) {
    const problem = identityProblem(f);
    if (problem) v.push(problem);
  }

  for (const p of await ledger.payoutsOffBooks(q, projectId))
    v.push(
      `payout ${p.id} (${p.state}, ${p.amount}): its journals take ${p.taken} from the available balance, ` +
        `not ${p.state === 'returned' || p.state === 'rejected' ? 0 : p.amount}`,
    );

  for (const p of await ledger.payoutLinesOffBooks(q, projectId)) v.push(`payout ${p.id} (${p.amount}): its lines add up to ${p.lines}`);

  return {
    ok: v.length === 0,
    transactions: totals.length,
    journals: await ledger.countJournals(q, projectId),
    balances: merchants.length,
    violations: v,
  };
}
