import type { Queryable } from '../db/db.ts';

/** One entry of a merchant's available balance, with the order it moved money of (docs/payouts.md, "Statements"). */
export interface EntryRow {
  id: string;
  project_id: string;
  project_name: string;
  kind: string;
  /** the ledger's sign: negative credits the merchant */
  amount: number;
  currency: string;
  created: Date;
  order_id: string | null;
  order_kind: string | null;
  /** the merchant's reference: the order's own, else the payment's it belongs to */
  reference: string | null;
  transaction_id: string | null;
  credit_debit: string | null;
  fee: number | null;
  /** a payout_return's payout, or a payout's own */
  payout_id: string | null;
}

const ENTRY = `SELECT e.id::text AS id, e.project_id, pr.name AS project_name, e.kind, e.amount, e.currency, e.created,
    e.order_id, o.kind AS order_kind, COALESCE(o.merchant_order_id, r.merchant_order_id) AS reference,
    e.transaction_id, t.credit_debit, t.fee_amount AS fee, e.payout_id
  FROM ledger_entries e
  JOIN projects pr ON pr.id = e.project_id
  LEFT JOIN orders o ON o.project_id = e.project_id AND o.id = e.order_id
  LEFT JOIN orders r ON r.project_id = o.project_id AND r.id = o.related_order_id
  LEFT JOIN transactions t ON t.project_id = e.project_id AND t.id = e.transaction_id`;

/** The entries of a merchant's projects of one mode and currency on available that no payout took yet. */
export async function unpaidEntries(q: Queryable, merchantId: string, mode: string, currency: string) {
  return q.query<{ id: string; project_id: string; amount: number }>(
    `SELECT e.id::text AS id, e.project_id, e.amount
     FROM projects p JOIN ledger_entries e ON e.project_id = p.id
     WHERE p.merchant_id = $1 AND p.mode = $2 AND e.account = 'merchant_available' AND e.currency = $3
       AND NOT EXISTS (SELECT 1 FROM payout_entries x WHERE x.project_id = e.project_id AND x.entry_id = e.id)
     ORDER BY e.project_id, e.id`,
    [merchantId, mode, currency],
  );
}

/** Links entries to the payout that took them (and the payout's own legs to it). */
export async function linkEntries(q: Queryable, payoutId: string, entries: Array<{ id: string; project_id: string }>): Promise<void> {
  if (!entries.length) return;
  await q.query(
    `INSERT INTO payout_entries (project_id, entry_id, payout_id)
     SELECT p, e::bigint, $3 FROM unnest($1::uuid[], $2::text[]) AS u(p, e)`,
    [entries.map((e) => e.project_id), entries.map((e) => e.id), payoutId],
  );
}

/** A payout's own legs on available (to link them to it). */
export async function ownLegs(q: Queryable, payoutId: string) {
  return q.query<{ id: string; project_id: string }>(
    "SELECT id::text AS id, project_id FROM ledger_entries WHERE payout_id = $1 AND account = 'merchant_available' AND kind = 'payout'",
    [payoutId],
  );
}

/** What a payout took, entry by entry (its own legs left out), of one project or all; oldest first. */
export async function entriesOfPayout(q: Queryable, payoutId: string, projectId?: string): Promise<EntryRow[]> {
  return q.query<EntryRow>(
    `${ENTRY} JOIN payout_entries x ON x.project_id = e.project_id AND x.entry_id = e.id
     WHERE x.payout_id = $1 AND e.kind <> 'payout' AND ($2::uuid IS NULL OR e.project_id = $2::uuid)
     ORDER BY e.created, e.id`,
    [payoutId, projectId ?? null],
  );
}

/** A merchant's entries on available of one mode in [from, to), every currency, oldest first: a month's statement. */
export async function entriesBetween(q: Queryable, merchantId: string, mode: string, from: Date, to: Date): Promise<EntryRow[]> {
  return q.query<EntryRow>(
    `${ENTRY} WHERE pr.merchant_id = $1 AND pr.mode = $2 AND e.account = 'merchant_available' AND e.created >= $3 AND e.created < $4
     ORDER BY e.currency, e.created, e.id`,
    [merchantId, mode, from, to],
  );
}

/** A merchant's available balance of one mode per currency before an instant: a statement's opening balance. */
export async function availableBefore(q: Queryable, merchantId: string, mode: string, before: Date) {
  return q.query<{ currency: string; available: number }>(
    `SELECT e.currency, (-SUM(e.amount))::bigint AS available FROM projects pr JOIN ledger_entries e ON e.project_id = pr.id
     WHERE pr.merchant_id = $1 AND pr.mode = $2 AND e.account = 'merchant_available' AND e.created < $3
     GROUP BY e.currency ORDER BY e.currency`,
    [merchantId, mode, before],
  );
}
