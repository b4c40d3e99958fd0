import type { Queryable } from '../db/db.ts';
import type { Part, WriteSet } from '../db/writes.ts';
import type { OperationKind } from '../../domain/attempts.ts';
import { revive, type Seen } from './card-flow.ts';
import type { ProjectId, TransactionId } from '../../domain/ids.ts';

/**
 * Acquirer attempts (migration 200): one row per operation sent to an acquirer, written and
 * committed before the call (docs/money.md "Acquirer attempts").
 */

export type AttemptStatus = 'processing' | 'unknown' | 'succeeded' | 'failed' | 'reversed';

export interface AttemptRow {
  id: string;
  project_id: string;
  transaction_id: string;
  order_id: string;
  kind: OperationKind;
  amount: number;
  currency: string;
  status: AttemptStatus;
  idempotency_key: string;
  authorization_reference: string | null;
  reference: string | null;
  response_code: string | null;
  response_description: string | null;
  error: string | null;
  request: Record<string, unknown>;
  result_order_id: string | null;
  created: Date;
  modified: Date;
  settled: Date | null;
  /** when recovery asks about it, while in flight (the project's clock); null: never swept (a reversal) */
  recover_at: Date | null;
}

/** In flight: the acquirer may still move (or have moved) its money. */
const IN_FLIGHT: readonly AttemptStatus[] = ['processing', 'unknown'];
export const inFlight = (a: Pick<AttemptRow, 'status'>) => IN_FLIGHT.includes(a.status);

/** What settling an attempt changes. */
export type AttemptChange = Partial<
  Pick<
    AttemptRow,
    'status' | 'reference' | 'response_code' | 'response_description' | 'error' | 'result_order_id' | 'settled' | 'recover_at'
  >
> & { modified: Date };

const ROW = (a: AttemptRow) => ({ ...a, request: a.request ?? {} });

/** An attempt as the jsonb its INSERT populates a row from. */
export const attemptJson = (a: AttemptRow) => JSON.stringify(ROW(a));

/** The attempt's INSERT as a part of one statement (store/db/writes.ts). */
export function recordPart(a: AttemptRow): Part {
  return {
    sql: `INSERT INTO acquirer_attempts SELECT * FROM jsonb_populate_record(NULL::acquirer_attempts, $1::jsonb) WHERE true`,
    params: [attemptJson(a)],
  };
}

/**
 * Records an attempt in one statement, only while the attempts in flight of `reserve.kinds` on its
 * transaction, with this one, stay within `reserve.max`. The statement reads with its own snapshot,
 * taken after the caller locked the payment: every attempt recorded under that lock before is
 * seen, so two requests never reserve the same money. False: nothing written.
 */
export async function recordAttempt(
  q: Queryable,
  a: AttemptRow,
  reserve: { kinds: OperationKind[]; max: number },
  opts: { commit?: boolean } = {},
): Promise<boolean> {
  const [row] = await q.query<{ n: number }>(
    `WITH a AS (INSERT INTO acquirer_attempts SELECT * FROM jsonb_populate_record(NULL::acquirer_attempts, $1::jsonb)
         WHERE (SELECT coalesce(sum(x.amount), 0) FROM acquirer_attempts x WHERE x.transaction_id = $2::uuid AND x.project_id = $3::uuid
                  AND x.kind = ANY($4::text[]) AND x.status IN ('processing', 'unknown')) + $5::bigint <= $6::bigint
         RETURNING id)
     SELECT count(*)::int AS n FROM a`,
    [attemptJson(a), a.transaction_id, a.project_id, reserve.kinds, a.amount, reserve.max],
    { prepare: 'record_attempt', commit: opts.commit },
  );
  return row.n > 0;
}

/**
 * The recovery sweep: the attempts in flight whose recover_at has come (on their project's
 * clock) become jobs of `kind`, at most `limit`, oldest first; each one's recover_at moves
 * `againMs` on, so an attempt its job leaves in flight comes back then, not at the next sweep.
 * SKIP LOCKED: an attempt being applied right now is left to that apply. A job already there
 * (its retries under way, or another node's sweep) is kept. Returns how many were taken.
 */
export async function sweepDueAttempts(
  q: Queryable,
  opts: { kind: string; limit: number; againMs: number; projectId?: string },
): Promise<number> {
  const [row] = await q.query<{ n: number }>(
    `WITH due AS (SELECT a.id, a.project_id, a.recover_at FROM acquirer_attempts a JOIN projects p ON p.id = a.project_id
                   WHERE a.status IN ('processing', 'unknown') AND a.recover_at IS NOT NULL
                     AND a.recover_at <= now() + (p.clock_offset_ms * interval '1 millisecond')
                     AND ($4::uuid IS NULL OR a.project_id = $4::uuid)
                   ORDER BY a.recover_at LIMIT $2
                   FOR UPDATE OF a SKIP LOCKED),
          later AS (UPDATE acquirer_attempts a SET recover_at = due.recover_at + ($3 * interval '1 millisecond')
                     FROM due WHERE a.id = due.id AND a.project_id = due.project_id),
          jobs AS (INSERT INTO jobs (project_id, kind, ref_id, run_at, payload)
                   SELECT project_id, $1::text, id::text, recover_at, '{}' FROM due
                   ON CONFLICT (kind, ref_id, project_id) DO NOTHING)
     SELECT count(*)::int AS n FROM due`,
    [opts.kind, opts.limit, opts.againMs, opts.projectId ?? null],
  );
  return row.n;
}

/**
 * The attempt's change while it is still in flight, as a part of one statement; a settled
 * attempt is left as it is (its outcome was applied once, by whoever came first).
 *
 * "Still in flight" is written as "not settled" (the same rows, by the status CHECK) so that the
 * planner cannot answer it from the in-flight partial index: a prepared statement's generic plan,
 * made while few attempts were in flight, did, and then read every attempt in flight to find
 * this one, a cost that grows with a backlog (an acquirer outage leaves thousands in flight).
 * The primary key finds the one row.
 */
export function changePart(id: string, change: AttemptChange): Part {
  return {
    sql: `UPDATE acquirer_attempts a SET (status, reference, response_code, response_description, error, result_order_id, settled, recover_at, modified) =
            (SELECT coalesce(c.status, a.status), coalesce(c.reference, a.reference), coalesce(c.response_code, a.response_code),
                    coalesce(c.response_description, a.response_description), coalesce(c.error, a.error),
                    coalesce(c.result_order_id, a.result_order_id), coalesce(c.settled, a.settled), coalesce(c.recover_at, a.recover_at), c.modified
               FROM jsonb_populate_record(NULL::acquirer_attempts, $2::jsonb) c)
          WHERE a.id = $1::uuid AND a.status NOT IN ('succeeded', 'failed', 'reversed')`,
    params: [id, JSON.stringify(change)],
  };
}

/** An attempt recorded before its request was checked, dropped when the request is refused: it was never sent. */
export const dropAttemptPart = (id: string): Part => ({
  sql: `DELETE FROM acquirer_attempts WHERE id = $1::uuid AND status = 'processing'`,
  params: [id],
});

/** dropAttemptPart alone (one round trip). */
export async function dropAttempt(q: Queryable, id: string) {
  const p = dropAttemptPart(id);
  await q.query(p.sql, p.params);
}

/** changePart alone (one round trip, its own transaction when q is the pool). */
export async function changeAttempt(q: Queryable, id: string, change: AttemptChange) {
  const p = changePart(id, change);
  await q.query(p.sql, p.params);
}

export async function findAttempt(q: Queryable, id: string): Promise<AttemptRow | undefined> {
  const [row] = await q.query<AttemptRow>('SELECT * FROM acquirer_attempts WHERE id = $1', [id]);
  return row && { ...row, amount: Number(row.amount) };
}

/** The attempts of a transaction, oldest first. */
export async function attemptsOf(q: Queryable, projectId: ProjectId, transactionId: TransactionId): Promise<AttemptRow[]> {
  const rows = await q.query<AttemptRow>(
    'SELECT * FROM acquirer_attempts WHERE project_id = $1 AND transaction_id = $2 ORDER BY created, id',
    [projectId, transactionId],
  );
  return rows.map((r) => ({ ...r, amount: Number(r.amount) }));
}

/** SQL of a payment read's extra columns: the amounts its in-flight attempts reserve, per kind, and (named) one attempt. */
export const RESERVED_COLUMN = `(SELECT coalesce(jsonb_object_agg(r.kind, r.amount), '{}') FROM (SELECT x.kind, sum(x.amount)::bigint AS amount
    FROM acquirer_attempts x WHERE x.transaction_id = t.id AND x.project_id = t.project_id AND x.status IN ('processing', 'unknown')
    GROUP BY x.kind) r) AS reserved`;

/** Reserved amounts per kind, as the read answers them. */
export type Reserved = Partial<Record<OperationKind, number>>;

export const reviveAttempt = (row: object | null | undefined): AttemptRow | undefined => {
  const a = revive<AttemptRow>(row as Record<string, unknown> | null);
  if (a) a.amount = Number(a.amount);
  return a;
};

/**
 * The gate of an answer applied from the rows its record read (WriteSet.lockedAsSeen): the
 * payment's transaction and order, and the attempt, as the record left them. Every step that
 * changes the payment (another record, an apply, the recovery job, an expiry) locks its
 * transaction or order first, so none has run since when the gate holds.
 *
 * `reserved`: what the payment's attempts in flight reserve, per kind, as the plan took it (this
 * attempt's own amount included). The record's locking read may have waited for the lock, and a
 * read that waited keeps its older snapshot for subqueries, so an attempt recorded by whoever held
 * the lock may be missing from it; this statement's snapshot, taken after the record committed,
 * sees every one, and a plan made without one is held back.
 */
export function gateAsRecorded(w: WriteSet, seen: Seen, txn: { id: string; order_id: string }, attemptId: string, reserved?: Reserved) {
  w.lockedAsSeen(
    [
      { table: 'transactions', id: txn.id, version: seen.txn },
      { table: 'orders', id: txn.order_id, version: seen.order },
      { table: 'acquirer_attempts', id: attemptId, version: seen.by },
    ],
    seen.by,
    reserved && {
      sql: `(SELECT coalesce(jsonb_object_agg(r.kind, r.amount), '{}') FROM (SELECT x.kind, sum(x.amount)::bigint AS amount
              FROM acquirer_attempts x WHERE x.transaction_id = g0.id AND x.project_id = g0.project_id AND x.status IN ('processing', 'unknown')
              GROUP BY x.kind) r) = $1::jsonb`,
      params: [JSON.stringify(reserved)],
    },
  );
}

// the table this module's gate names (its writes are parts of their own)
declare module '../db/writes.ts' {
  interface Tables {
    acquirer_attempts: AttemptRow;
  }
}

/**
 * Whether an authorization of one of the transactions is in flight: the 3-D Secure page records
 * it with the transaction still `pending`, so a cancel or an expiry asks this first. Read after
 * the caller locked the transactions: this statement's snapshot sees every one recorded before.
 */
export async function authorizationInFlight(q: Queryable, projectId: ProjectId, transactionIds: string[]): Promise<boolean> {
  const [row] = await q.query<{ flying: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM acquirer_attempts WHERE project_id = $1 AND transaction_id = ANY($2::uuid[])
                      AND kind = 'authorization' AND status IN ('processing', 'unknown')) AS flying`,
    [projectId, transactionIds],
  );
  return row.flying;
}
