import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';
import type { Leg } from '../../domain/ledger.ts';
import { newId, type OrderId, type ProjectId } from '../../domain/ids.ts';
import type { TransactionRow } from '../../domain/entities.ts';

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

/** insertJournal's rows, for a statement of several writes (store/writes.ts insertMany); [] when there is nothing to book. */
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

/** ensureJob as a part of one statement (store/writes.ts). */
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
