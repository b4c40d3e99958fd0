import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';
import type { Leg } from '../../domain/ledger.ts';
import { newId, type OrderId, type ProjectId } from '../../domain/ids.ts';
import type { TransactionRow } from '../../domain/entities.ts';
import type { MerchantFlows } from '../../domain/payouts/balances.ts';
import type { PayoutState } from '../../domain/payouts/states.ts';

export interface JournalHead {
  project_id: string;
  order_id: string;
  transaction_id: string;
  payment_transaction_id: string;
  currency: string;
  created: Date;
}

export interface EntryRow extends JournalHead {
  id: number;
  journal_id: string;
  account: string;
  amount: number;
  kind: string;
  /** set on the legs of a payout's journal (which have no order); the order legs leave it null */
  payout_id?: string | null;
}

/** Writes one journal (all legs in one statement). Returns its id, or undefined when there is nothing to book. */
export async function insertJournal(q: Queryable, head: JournalHead, legs: Leg[]): Promise<string | undefined> {
  if (!legs.length) return undefined;
  const journalId = newId();
  const params: unknown[] = [
    head.project_id,
    journalId,
    head.order_id,
    head.transaction_id,
    head.payment_transaction_id,
    head.currency,
    head.created,
  ];
  const rows = legs.map((l) => {
    params.push(l.account, l.amount, l.kind);
    const n = params.length;
    return `($1, $2, $3, $4, $5, $${n - 2}, $6, $${n - 1}, $${n}, $7)`;
  });
  await q.query(
    `INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
     VALUES ${rows.join(', ')}`,
    params,
  );
  return journalId;
}

/** insertJournal's rows, for a statement of several writes (store/db/writes.ts insertMany); [] when there is nothing to book. */
export function journalRows(head: JournalHead, legs: Leg[]): Array<Omit<EntryRow, 'id'>> {
  if (!legs.length) return [];
  const journalId = newId();
  return legs.map((l) => ({ ...head, journal_id: journalId, account: l.account, amount: l.amount, kind: l.kind }));
}

// ---- What `tender ledger check` reads. Each query finds only the rows that break a rule. ----

const scope = (alias: string, n: number) => `($${n}::uuid IS NULL OR ${alias}.project_id = $${n}::uuid)`;

export interface CounterRow {
  id: string;
  order_id: string;
  project_id: string;
  authorized_amount: number;
  captured_amount: number;
  voided_amount: number;
  refunded_amount: number;
  charged_back_amount: number;
}

export async function badCounters(q: Queryable, projectId?: string): Promise<CounterRow[]> {
  return q.query<CounterRow>(
    `SELECT id, order_id, project_id, authorized_amount, captured_amount, voided_amount, refunded_amount, charged_back_amount
     FROM transactions t
     WHERE ${scope('t', 1)}
       AND (captured_amount + voided_amount > authorized_amount OR refunded_amount + charged_back_amount > captured_amount
            OR LEAST(authorized_amount, captured_amount, voided_amount, refunded_amount, charged_back_amount) < 0)
     ORDER BY created, id`,
    [projectId ?? null],
  );
}

export async function unbalancedJournals(q: Queryable, projectId?: string) {
  return q.query<{ journal_id: string; order_id: string; currency: string; sum: number }>(
    `SELECT journal_id, min(order_id::text) AS order_id, currency, sum(amount)::bigint AS sum
     FROM ledger_entries e WHERE ${scope('e', 1)}
     GROUP BY journal_id, currency HAVING sum(amount) <> 0`,
    [projectId ?? null],
  );
}

/** The counters of each original transaction next to what its capture, void, refund, chargeback and reversal orders add up to. */
export async function childTotals(q: Queryable, projectId?: string) {
  return q.query<{
    id: string;
    order_id: string;
    captured_amount: number;
    voided_amount: number;
    refunded_amount: number;
    charged_back_amount: number;
    capture_mode: string | null;
    order_refunded: number;
    captures: number;
    voids: number;
    refunds: number;
    chargebacks: number;
    reversals: number;
  }>(
    `SELECT t.id, t.order_id, t.captured_amount, t.voided_amount, t.refunded_amount, t.charged_back_amount, t.capture_mode,
            o.refunded_amount AS order_refunded,
            COALESCE(SUM(c.amount) FILTER (WHERE co.kind = 'capture'), 0)::bigint AS captures,
            COALESCE(SUM(c.amount) FILTER (WHERE co.kind = 'void'), 0)::bigint AS voids,
            COALESCE(SUM(c.amount) FILTER (WHERE co.kind = 'refund'), 0)::bigint AS refunds,
            COALESCE(SUM(c.amount) FILTER (WHERE co.kind = 'chargeback'), 0)::bigint AS chargebacks,
            COALESCE(SUM(c.amount) FILTER (WHERE co.kind = 'reversal'), 0)::bigint AS reversals
     FROM transactions t
     JOIN orders o ON o.id = t.order_id AND o.kind = 'payment'
     -- only those that moved money: one waiting for the acquirer (processing) or refused by it (error) did not
     LEFT JOIN transactions c ON c.of_transaction_id = t.id AND c.project_id = t.project_id AND c.status IN ('accepted', 'completed')
     LEFT JOIN orders co ON co.id = c.order_id
     WHERE ${scope('t', 1)} AND t.authorized_amount > 0
     GROUP BY t.id, t.project_id, o.refunded_amount`,
    [projectId ?? null],
  );
}

/**
 * Per original transaction: the open hold and the receivable before settlement as the ledger
 * has them, next to the counters they must match.
 */
export async function ledgerTotals(q: Queryable, projectId?: string) {
  return q.query<{
    id: string;
    order_id: string;
    status: string;
    capture_mode: string | null;
    authorized_amount: number;
    captured_amount: number;
    voided_amount: number;
    refunded_amount: number;
    charged_back_amount: number;
    holds: number;
    receivable: number;
  }>(
    `SELECT t.id, t.order_id, t.status, t.capture_mode, t.authorized_amount, t.captured_amount, t.voided_amount, t.refunded_amount, t.charged_back_amount,
            COALESCE(SUM(e.amount) FILTER (WHERE e.account = 'holds'), 0)::bigint AS holds,
            COALESCE(SUM(e.amount) FILTER (WHERE e.account = 'acquirer_receivable' AND e.kind <> 'settlement'), 0)::bigint AS receivable
     FROM transactions t
     JOIN orders o ON o.id = t.order_id AND o.kind = 'payment'
     LEFT JOIN ledger_entries e ON e.payment_transaction_id = t.id AND e.project_id = t.project_id
     WHERE ${scope('t', 1)} AND t.authorized_amount > 0
     GROUP BY t.id, t.project_id`,
    [projectId ?? null],
  );
}

/**
 * Per merchant, mode and currency: what the payments' counters say the merchant earned, next to
 * where the ledger has it (fees, paid out, pending, available, reserved; credit balances positive).
 */
export async function merchantFlows(q: Queryable, projectId?: string): Promise<MerchantFlows[]> {
  return q.query<MerchantFlows>(
    `WITH earned AS (
       SELECT p.merchant_id, p.mode, o.currency, SUM(t.captured_amount - t.refunded_amount - t.charged_back_amount)::bigint AS earned
       FROM transactions t JOIN orders o ON o.id = t.order_id AND o.kind = 'payment' JOIN projects p ON p.id = t.project_id
       WHERE ${scope('t', 1)} AND t.authorized_amount > 0
       GROUP BY p.merchant_id, p.mode, o.currency
     ), books AS (
       SELECT p.merchant_id, p.mode, e.currency,
              COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'fee_income'), 0)::bigint AS fees,
              COALESCE(SUM(e.amount) FILTER (WHERE e.account = 'merchant_available' AND e.kind IN ('payout', 'payout_return')), 0)::bigint AS paid_out,
              COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_payable'), 0)::bigint AS pending,
              COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_available'), 0)::bigint AS available,
              COALESCE(-SUM(e.amount) FILTER (WHERE e.account = 'merchant_reserved'), 0)::bigint AS reserved
       FROM ledger_entries e JOIN projects p ON p.id = e.project_id
       WHERE ${scope('e', 1)}
       GROUP BY p.merchant_id, p.mode, e.currency
     )
     SELECT COALESCE(a.merchant_id, b.merchant_id)::text AS merchant_id, COALESCE(a.mode, b.mode) AS mode,
            COALESCE(a.currency, b.currency) AS currency, COALESCE(a.earned, 0)::bigint AS earned,
            COALESCE(b.fees, 0)::bigint AS fees, COALESCE(b.paid_out, 0)::bigint AS paid_out, COALESCE(b.pending, 0)::bigint AS pending,
            COALESCE(b.available, 0)::bigint AS available, COALESCE(b.reserved, 0)::bigint AS reserved
     FROM earned a FULL JOIN books b ON b.merchant_id = a.merchant_id AND b.mode = a.mode AND b.currency = a.currency
     ORDER BY 1, 2, 3`,
    [projectId ?? null],
  );
}

/** Money transactions whose fee and settlement figures are missing. */
export async function missingFigures(q: Queryable, projectId?: string) {
  return q.query<{ id: string; order_id: string }>(
    `SELECT t.id, t.order_id FROM transactions t
     WHERE ${scope('t', 1)} AND (t.authorized_amount > 0 OR t.of_transaction_id IS NOT NULL)
       AND (t.fee_amount IS NULL OR t.settlement_amount IS NULL OR t.fee_currency IS NULL OR t.settlement_currency IS NULL)`,
    [projectId ?? null],
  );
}

// ---- Small writes on the original order and the job table that money movements need. ----

/** ensureJob as a part of one statement (store/db/writes.ts). */
export const ensureJobPart = (job: { project_id: string; kind: string; ref_id: string; run_at: Date }): Part => ({
  sql: 'INSERT INTO jobs (project_id, kind, ref_id, run_at) SELECT $1::uuid, $2::text, $3::text, $4::timestamptz WHERE true ON CONFLICT (kind, ref_id, project_id) DO NOTHING',
  params: [job.project_id, job.kind, job.ref_id, job.run_at],
});

/**
 * Money transactions awaiting settlement: sales, captures, refunds, chargebacks and reversals
 * (holds and voids move no money). Locked, skipping rows another settlement holds.
 */
const UNSETTLED = `
  SELECT t.* FROM transactions t JOIN orders o ON o.id = t.order_id
  WHERE t.project_id = $1 AND t.settled IS NULL AND t.settlement_amount IS NOT NULL
    AND t.status IN ('accepted', 'completed')
    AND ((o.kind = 'payment' AND t.capture_mode IS NULL) OR o.kind IN ('capture', 'refund', 'chargeback', 'reversal'))`;

/** The unsettled money of an order and of the orders made from it, locked. */
export async function lockUnsettledOfOrder(q: Queryable, projectId: ProjectId, orderId: OrderId): Promise<TransactionRow[]> {
  return q.query<TransactionRow>(
    `${UNSETTLED} AND (o.id = $2 OR o.related_order_id = $2) ORDER BY t.created, t.id FOR UPDATE OF t SKIP LOCKED`,
    [projectId, orderId],
  );
}

/** Up to `limit` unsettled money transactions created up to `cutoff`, oldest first, locked. */
export async function lockUnsettledBefore(q: Queryable, projectId: ProjectId, cutoff: Date, limit: number): Promise<TransactionRow[]> {
  return q.query<TransactionRow>(`${UNSETTLED} AND t.created <= $2 ORDER BY t.created, t.id LIMIT $3 FOR UPDATE OF t SKIP LOCKED`, [
    projectId,
    cutoff,
    limit,
  ]);
}

export async function hasUnsettled(q: Queryable, projectId: ProjectId): Promise<boolean> {
  return (await q.query(`${UNSETTLED} LIMIT 1`, [projectId])).length > 0;
}

/** A reserve held back at settlement, not yet released: the settled transaction it came from, and how much. */
export interface HeldReserve {
  order_id: string;
  transaction_id: string;
  payment_transaction_id: string;
  currency: string;
  amount: number;
}

/**
 * The reserves of a project booked up to `heldBefore` and not released yet. Their settled
 * transactions are locked first, so two runs never release one reserve twice.
 */
export async function reservesDue(q: Queryable, projectId: ProjectId, heldBefore: Date): Promise<HeldReserve[]> {
  const locked = await q.query<{ id: string }>(
    `SELECT t.id FROM transactions t
     WHERE t.project_id = $1 AND t.id IN (
       SELECT h.transaction_id FROM ledger_entries h
       WHERE h.project_id = $1 AND h.account = 'merchant_reserved' AND h.kind = 'reserve' AND h.created <= $2
         AND NOT EXISTS (SELECT 1 FROM ledger_entries r WHERE r.project_id = $1 AND r.account = 'merchant_reserved'
                         AND r.transaction_id = h.transaction_id AND r.kind = 'reserve_release'))
     ORDER BY t.id FOR UPDATE`,
    [projectId, heldBefore],
  );
  if (!locked.length) return [];
  return q.query<HeldReserve>(
    `SELECT e.order_id, e.transaction_id, e.payment_transaction_id, e.currency, (-sum(e.amount))::bigint AS amount
     FROM ledger_entries e
     WHERE e.project_id = $1 AND e.account = 'merchant_reserved' AND e.transaction_id = ANY($2::uuid[])
     GROUP BY e.order_id, e.transaction_id, e.payment_transaction_id, e.currency
     HAVING sum(e.amount) < 0`,
    [projectId, locked.map((r) => r.id)],
  );
}

/** How many journals the ledger holds (of one project, or all). */
export async function countJournals(q: Queryable, projectId?: string): Promise<number> {
  const [{ n }] = await q.query<{ n: number }>(
    'SELECT count(DISTINCT journal_id)::int AS n FROM ledger_entries WHERE ($1::uuid IS NULL OR project_id = $1::uuid)',
    [projectId ?? null],
  );
  return n;
}

declare module '../db/writes.ts' {
  interface Tables {
    ledger_entries: EntryRow;
  }
}

/**
 * Payouts whose ledger disagrees with their state (`tender ledger check`): a payout on its way or
 * booked has taken its amount from the available balance, a returned or rejected one has given it
 * all back. Of the merchant of one project, or of all.
 */
export async function payoutsOffBooks(q: Queryable, projectId?: string) {
  return q.query<{ id: string; state: PayoutState; amount: number; taken: number }>(
    `SELECT p.id, p.state, p.amount, COALESCE(SUM(e.amount), 0)::bigint AS taken
     FROM payouts p LEFT JOIN ledger_entries e ON e.payout_id = p.id AND e.account = 'merchant_available'
     WHERE $1::uuid IS NULL OR p.merchant_id = (SELECT merchant_id FROM projects WHERE id = $1::uuid)
     GROUP BY p.id
     HAVING COALESCE(SUM(e.amount), 0) <> CASE WHEN p.state IN ('returned', 'rejected') THEN 0 ELSE p.amount END`,
    [projectId ?? null],
  );
}

/**
 * Payouts whose statement disagrees with their amount (`tender ledger check`): the entries a
 * payout took (payout_entries, its own legs left out) add up to what it paid. Of the merchant of
 * one project, or of all.
 */
export async function payoutLinesOffBooks(q: Queryable, projectId?: string) {
  return q.query<{ id: string; amount: number; lines: number }>(
    `SELECT p.id, p.amount, COALESCE(-SUM(e.amount), 0)::bigint AS lines
     FROM payouts p
     LEFT JOIN payout_entries x ON x.payout_id = p.id
     LEFT JOIN ledger_entries e ON e.project_id = x.project_id AND e.id = x.entry_id AND e.kind <> 'payout'
     WHERE $1::uuid IS NULL OR p.merchant_id = (SELECT merchant_id FROM projects WHERE id = $1::uuid)
     GROUP BY p.id, p.amount
     HAVING COALESCE(-SUM(e.amount), 0) <> p.amount`,
    [projectId ?? null],
  );
}
