import type { Queryable } from '../db/db.ts';

/** Every merchant's balances per mode and currency (the operator's view, docs/payouts.md). */
export async function merchantBalances(q: Queryable) {
  return q.query<{
    merchant_id: string;
    merchant: string;
    mode: string;
    currency: string;
    pending: number;
    available: number;
    reserved: number;
  }>(
    `SELECT pr.merchant_id, m.name AS merchant, pr.mode, e.currency,
       COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_payable'), 0)::bigint AS pending,
       COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_available'), 0)::bigint AS available,
       COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_reserved'), 0)::bigint AS reserved
     FROM ledger_entries e JOIN projects pr ON pr.id = e.project_id JOIN merchants m ON m.id = pr.merchant_id
     WHERE e.account IN ('merchant_payable', 'merchant_available', 'merchant_reserved')
     GROUP BY pr.merchant_id, m.name, pr.mode, e.currency ORDER BY m.name, pr.merchant_id, pr.mode, e.currency`,
  );
}

/** Every schedule with its merchant's name and the periods it was already paid for, latest first. */
export async function schedulesWithPeriods(q: Queryable) {
  return q.query<{
    merchant_id: string;
    merchant: string;
    every: string;
    time_zone: string;
    minimum: number;
    held_until: Date | null;
    iban: string;
    periods: string[];
  }>(
    `SELECT s.merchant_id, m.name AS merchant, s.every, s.time_zone, s.minimum, s.held_until, s.iban,
       ARRAY(SELECT DISTINCT p.period FROM payouts p WHERE p.merchant_id = s.merchant_id ORDER BY p.period DESC LIMIT 3) AS periods
     FROM payout_schedules s JOIN merchants m ON m.id = s.merchant_id ORDER BY m.name, s.merchant_id`,
  );
}

/** Payouts that came back (returned by the bank, or rejected), newest first. */
export async function returnedPayouts(q: Queryable, limit: number) {
  return q.query<{
    id: string;
    merchant_id: string;
    merchant: string;
    mode: string;
    currency: string;
    amount: number;
    state: string;
    return_reason: string | null;
    period: string;
    modified: Date;
  }>(
    `SELECT p.id, p.merchant_id, m.name AS merchant, p.mode, p.currency, p.amount, p.state, p.return_reason, p.period, p.modified
     FROM payouts p JOIN merchants m ON m.id = p.merchant_id WHERE p.state IN ('returned', 'rejected')
     ORDER BY p.modified DESC, p.id LIMIT $1`,
    [limit],
  );
}

/** Open disputes (open, or defended and not decided) per merchant, mode and currency: the operator's view. */
export async function openDisputes(q: Queryable) {
  return q.query<{ merchant_id: string; mode: string; currency: string; n: number }>(
    `SELECT pr.merchant_id, pr.mode, d.currency, count(*)::int AS n
     FROM disputes d JOIN projects pr ON pr.id = d.project_id
     WHERE d.state IN ('open', 'defended')
     GROUP BY pr.merchant_id, pr.mode, d.currency`,
  );
}
