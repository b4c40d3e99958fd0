import type { Queryable } from '../store/db.ts';
import type { ProjectRow } from '../store/projects.ts';
import * as orders from '../store/orders.ts';
import type { TransactionRow } from '../store/orders.ts';

/**
 * Books a successful authorization, in the caller's database transaction, right after the
 * transaction moved to `accepted`: a sale is captured at once; a pre-authorization holds
 * the amount and becomes capturable.
 */
export async function onAuthorized(q: Queryable, _project: ProjectRow, txn: TransactionRow, _now: Date) {
  const sale = !txn.capture_mode;
  const patch: Partial<TransactionRow> = {
    authorized_amount: txn.amount,
    captured_amount: sale ? txn.amount : 0,
    is_capturable: !sale,
  };
  await orders.updateTransaction(q, txn.id, patch);
  Object.assign(txn, patch);
}
