import type { Queryable } from '../db/db.ts';
import type { Balance } from '../../domain/payouts/balances.ts';

const BALANCE_COLUMNS = `e.currency,
  COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_payable'), 0)::bigint AS pending,
  COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_available'), 0)::bigint AS available,
  COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_reserved'), 0)::bigint AS reserved`;

const MERCHANT_ACCOUNTS = `e.account IN ('merchant_payable', 'merchant_available', 'merchant_reserved')`;

/** A project's balances per currency (index ledger_balances), currencies in order. */
export async function projectBalances(q: Queryable, projectId: string): Promise<Balance[]> {
  return q.query<Balance>(
    `SELECT ${BALANCE_COLUMNS} FROM ledger_entries e
     WHERE e.project_id = $1 AND ${MERCHANT_ACCOUNTS}
     GROUP BY e.currency ORDER BY e.currency`,
    [projectId],
  );
}

/** A merchant's balances per mode and currency, over all its projects: what the portal's home shows. */
export async function merchantBalances(q: Queryable, merchantId: string): Promise<Array<Balance & { mode: string }>> {
  return q.query<Balance & { mode: string }>(
    `SELECT p.mode, ${BALANCE_COLUMNS} FROM projects p JOIN ledger_entries e ON e.project_id = p.id
     WHERE p.merchant_id = $1 AND ${MERCHANT_ACCOUNTS}
     GROUP BY p.mode, e.currency ORDER BY p.mode, e.currency`,
    [merchantId],
  );
}
