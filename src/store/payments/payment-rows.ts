import type { Queryable } from '../db/db.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { TransactionStatus } from '../../domain/status.ts';
import {
  revive,
  SEEN_COLUMN,
  THREE_DS_COLUMNS,
  THREE_DS_FROM,
  threeDsOf,
  viewOf,
  type RawThreeDs,
  type Seen,
  type StartView,
  type ThreeDsRows,
} from './card-flow.ts';
import { attemptJson, RESERVED_COLUMN, reviveAttempt, type AttemptRow, type Reserved } from './attempts.ts';
import type { OrderId, ProjectId, TransactionId } from '../../domain/ids.ts';

/**
 * The one read of a capture, void or refund (docs/performance-cards.md): the original
 * transaction and its order, both locked for the rest of the database transaction (every
 * movement of the payment's money queues here), the statuses of the order's transactions, the
 * project as stored, and the acquirer's reference of the authorization.
 */
export interface PaymentRows {
  txn: TransactionRow & { authorized: Date | null; capture_before: Date | null };
  order: OrderRow;
  project: ProjectRow;
  statuses: TransactionStatus[];
  reference: string | null;
  /** what the payment's attempts in flight reserve, per kind (store/payments/attempts.ts) */
  reserved: Reserved;
  /** the versions of the rows as read, for an apply planned from them (gateAsRecorded) */
  seen: Seen;
}

const COLUMNS = `to_jsonb(t) AS txn, to_jsonb(o) AS "order", (SELECT to_jsonb(p) FROM projects p WHERE p.id = t.project_id) AS project,
  ARRAY(SELECT s.status FROM transactions s WHERE s.project_id = t.project_id AND s.order_id = t.order_id ORDER BY s.created, s.id)::text[] AS statuses,
  (SELECT a.acquirer_reference FROM card_authentications a WHERE a.transaction_id = t.id) AS reference,
  ${RESERVED_COLUMN}, ${SEEN_COLUMN}`;

type Raw = {
  txn: object;
  order: object;
  project: object;
  statuses: TransactionStatus[];
  reference: string | null;
  reserved: Reserved;
  seen: Seen;
};

const rowsOf = (row: Raw | undefined): PaymentRows | undefined =>
  row && {
    txn: revive<PaymentRows['txn']>(row.txn)!,
    order: revive<OrderRow>(row.order)!,
    project: revive<ProjectRow>(row.project)!,
    statuses: row.statuses,
    reference: row.reference,
    reserved: Object.fromEntries(Object.entries(row.reserved ?? {}).map(([k, v]) => [k, Number(v)])),
    seen: row.seen,
  };

/** A transaction of an order, locked with its order. */
export async function lockPaymentRows(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  transactionId: TransactionId,
): Promise<PaymentRows | undefined> {
  const [row] = await q.query<Raw>(
    `SELECT ${COLUMNS} FROM transactions t JOIN orders o ON o.id = t.order_id
     WHERE t.project_id = $1 AND t.order_id = $2 AND t.id = $3 FOR UPDATE OF t, o`,
    [projectId, orderId, transactionId],
    { prepare: 'lock_payment_rows' },
  );
  return rowsOf(row);
}

/**
 * The authorized transaction of a payment order (a capture order stands for its original),
 * locked with its order; undefined when there is none (the caller says why).
 */
export async function lockOrderPaymentRows(q: Queryable, projectId: ProjectId, orderId: OrderId): Promise<PaymentRows | undefined> {
  const [row] = await q.query<Raw>(
    `SELECT ${COLUMNS} FROM orders o0
       JOIN orders o ON o.id = CASE WHEN o0.kind = 'capture' AND o0.related_order_id IS NOT NULL THEN o0.related_order_id ELSE o0.id END
       JOIN transactions t ON t.project_id = o.project_id AND t.order_id = o.id
     WHERE o0.project_id = $1 AND o0.id = $2 AND o.kind = 'payment' AND t.authorized_amount > 0
     ORDER BY t.created, t.id LIMIT 1 FOR UPDATE OF t, o`,
    [projectId, orderId],
    { prepare: 'lock_order_payment_rows' },
  );
  return rowsOf(row);
}

/** An attempt with its payment, both locked (the payment and its order FOR UPDATE): where an outcome is applied. */
export async function lockAttemptRows(q: Queryable, attemptId: string): Promise<(PaymentRows & { attempt: AttemptRow }) | undefined> {
  // Two statements: a statement that waited for the lock reads the other rows (the attempts in
  // flight, whose reservations the apply counts) as they were when it started, so an attempt
  // recorded by whoever held the lock would be missed. Read after the lock is held.
  const [locked] = await q.query<{ id: string }>(
    `SELECT t.id FROM acquirer_attempts x
       JOIN transactions t ON t.id = x.transaction_id AND t.project_id = x.project_id JOIN orders o ON o.id = t.order_id
     WHERE x.id = $1 FOR UPDATE OF t, o`,
    [attemptId],
    { prepare: 'lock_attempt' },
  );
  if (!locked) return undefined;
  const [row] = await q.query<Raw & { attempt: object }>(
    `SELECT ${COLUMNS}, to_jsonb(x) AS attempt FROM acquirer_attempts x
       JOIN transactions t ON t.id = x.transaction_id AND t.project_id = x.project_id JOIN orders o ON o.id = t.order_id
     WHERE x.id = $1`,
    [attemptId],
    { prepare: 'attempt_rows' },
  );
  return row && { ...rowsOf(row)!, attempt: reviveAttempt(row.attempt)! };
}

/**
 * An order locked, with its project and the statuses of its transactions (oldest first): what a
 * status change of one of them needs to derive the order's. Two statements: the statuses are read
 * after the lock is held, so a sibling transaction moved by whoever held it first is seen.
 */
export async function lockOrderContext(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
): Promise<{ order: OrderRow; project: ProjectRow; statuses: TransactionStatus[] } | undefined> {
  const [locked] = await q.query<{ id: string }>(
    'SELECT id FROM orders WHERE project_id = $1 AND id = $2 FOR UPDATE',
    [projectId, orderId],
    {
      prepare: 'lock_order',
    },
  );
  if (!locked) return undefined;
  const [row] = await q.query<{ order: object; project: object; statuses: TransactionStatus[] }>(
    `SELECT to_jsonb(o) AS "order", (SELECT to_jsonb(p) FROM projects p WHERE p.id = o.project_id) AS project,
       ARRAY(SELECT s.status FROM transactions s WHERE s.project_id = o.project_id AND s.order_id = o.id ORDER BY s.created, s.id)::text[] AS statuses
     FROM orders o WHERE o.project_id = $1 AND o.id = $2`,
    [projectId, orderId],
    { prepare: 'order_context' },
  );
  return { order: revive<OrderRow>(row.order)!, project: revive<ProjectRow>(row.project)!, statuses: row.statuses };
}

export interface StartRows extends StartView {
  /** what the transaction's attempts in flight reserve, per kind (a 3-D Secure lookup in flight is one) */
  reserved: Reserved;
  /** the attempt named, when one was */
  attempt?: AttemptRow;
  /** the versions of the rows as read, for an apply planned from them (gateAsRecorded) */
  seen: Seen;
}

type RawStart = {
  txn: object;
  order: object;
  project: object;
  statuses: TransactionStatus[];
  card: object | null;
  reserved: Reserved;
  attempt: object | null;
  seen: Seen;
};

/** The columns of a start's read: `t` the transaction, `o` its order (both locked). */
const START_COLUMNS = `to_jsonb(t) AS txn, to_jsonb(o) AS "order", (SELECT to_jsonb(p) FROM projects p WHERE p.id = $1) AS project,
  ARRAY(SELECT s.status FROM transactions s WHERE s.project_id = $1 AND s.order_id = t.order_id ORDER BY s.created, s.id)::text[] AS statuses,
  (SELECT to_jsonb(v) FROM vault_cards v WHERE v.project_id = $1 AND v.id = $4) AS card, ${RESERVED_COLUMN},
  (SELECT to_jsonb(x) FROM acquirer_attempts x WHERE x.project_id = $1 AND x.id = $5::uuid) AS attempt, ${SEEN_COLUMN}`;
const START_FROM = `FROM transactions t JOIN orders o ON o.id = t.order_id
  WHERE t.project_id = $1 AND t.order_id = $2 AND t.id = $3 FOR UPDATE OF t, o`;

const startOf = (row: RawStart): StartRows => ({
  ...viewOf(row),
  reserved: Object.fromEntries(Object.entries(row.reserved ?? {}).map(([k, v]) => [k, Number(v)])),
  attempt: reviveAttempt(row.attempt),
  seen: row.seen,
});

/**
 * What authenticating a transaction with a stored card needs: the transaction and its order,
 * both locked (FOR UPDATE), the card, the attempts in flight and, when named, the 3-D Secure
 * attempt whose answer is applied.
 */
export async function startRows(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  transactionId: TransactionId,
  vaultToken: string,
  attemptId: string | null = null,
): Promise<StartRows | undefined> {
  const [row] = await q.query<RawStart>(
    `SELECT ${START_COLUMNS} ${START_FROM}`,
    [projectId, orderId, transactionId, vaultToken, attemptId],
    {
      prepare: 'start_rows',
    },
  );
  return row && startOf(row);
}

/**
 * startRows and, in the same statement, the 3-D Secure lookup's attempt `lookup` recorded for the
 * transaction read (its amount and currency taken from it), before anything is checked: the
 * caller drops it when the start is refused (dropAttempt). The rows are read as they were before
 * the attempt: `reserved` and `attempt` do not show it. Nothing is recorded when the attempt's
 * id is taken (the retry of an Idempotency-Key: `attempt` is the one recorded before).
 * `recorded`: whether it was.
 */
export async function recordStart(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  transactionId: TransactionId,
  vaultToken: string,
  lookup: AttemptRow,
  keyedId: string | null,
): Promise<(StartRows & { recorded: boolean }) | undefined> {
  const [row] = await q.query<RawStart & { recorded: number }>(
    `WITH r AS (SELECT t.amount AS lookup_amount, t.currency AS lookup_currency, ${START_COLUMNS} ${START_FROM}),
          a AS (INSERT INTO acquirer_attempts
                  SELECT c.* FROM r, jsonb_populate_record(NULL::acquirer_attempts,
                    $6::jsonb || jsonb_build_object('amount', r.lookup_amount, 'currency', r.lookup_currency)) c
                ON CONFLICT DO NOTHING RETURNING id)
     SELECT r.*, (SELECT count(*) FROM a)::int AS recorded FROM r`,
    [projectId, orderId, transactionId, vaultToken, keyedId, attemptJson(lookup)],
    { prepare: 'record_start' },
  );
  return row && { ...startOf(row), recorded: row.recorded > 0 };
}

export interface AuthorizationRecord extends ThreeDsRows {
  seen: Seen;
  /** the authorization attempt as recorded; none when nothing was (see recordAuthorization) */
  attempt?: AttemptRow;
  /** the challenge's answer's own 3-D Secure attempt, recorded with it */
  challenge?: AttemptRow;
  /** an authorization of the transaction was in flight when the statement started */
  flying: boolean;
}

/**
 * The 3-D Secure page's record, in one autocommit statement: threeDsRows, locked for the
 * statement, and when the transaction is pending and ready to be authorized (its 3-D Secure
 * decided, or a challenge answered in this step: `challenge` given) with its card stored, the
 * authorization attempt `authorization` and, for a challenge (trans_status C), the answer's
 * three_ds attempt `challenge` recorded, and the sealed CVC dropped (it serves this one request;
 * the read still answers it). The attempts take the transaction's project, order, amount and
 * currency, and the times of the project's clock at `real` (recover_at `recoveryMs` on), from
 * the rows read. A second authorization of the transaction while one is in flight is refused by
 * the unique index: nothing is recorded, and `attempt` is undefined. `wake`: the job workers are
 * woken (recovery is due soon).
 */
export async function recordAuthorization(
  q: Queryable,
  transactionId: TransactionId,
  attempts: { authorization: AttemptRow; challenge?: AttemptRow; wake: boolean },
  real: Date,
  recoveryMs: number,
): Promise<AuthorizationRecord | undefined> {
  const [row] = await q.query<RawThreeDs & { seen: Seen; authorization: object | null; challenge: object | null; flying: boolean }>(
    `WITH r AS (SELECT ${THREE_DS_COLUMNS}, ${SEEN_COLUMN},
                  t.id AS r_txn, t.project_id AS r_project, t.order_id AS r_order, t.amount AS r_amount, t.currency AS r_currency,
                  a.trans_status AS r_three, a.vault_token AS r_card,
                  $2::timestamptz + p.clock_offset_ms * interval '1 millisecond' AS r_now,
                  t.status = 'pending' AND a.trans_status IS NOT NULL AND (a.trans_status <> 'C' OR $3::boolean)
                    AND EXISTS (SELECT 1 FROM vault_cards v WHERE v.project_id = t.project_id AND v.id = a.vault_token) AS r_ready,
                  EXISTS (SELECT 1 FROM acquirer_attempts x WHERE x.transaction_id = t.id AND x.project_id = t.project_id
                            AND x.kind = 'authorization' AND x.status IN ('processing', 'unknown')) AS flying
                ${THREE_DS_FROM} WHERE t.id = $1 FOR UPDATE OF t, o),
          x AS (INSERT INTO acquirer_attempts
                  SELECT c.* FROM r, jsonb_populate_record(NULL::acquirer_attempts, $4::jsonb || ${FROM_READ}) c WHERE r.r_ready
                ON CONFLICT DO NOTHING RETURNING to_jsonb(acquirer_attempts) AS row),
          y AS (INSERT INTO acquirer_attempts
                  SELECT c.* FROM r, x, jsonb_populate_record(NULL::acquirer_attempts, $5::jsonb || ${FROM_READ}) c
                   WHERE $5::jsonb IS NOT NULL AND r.r_three = 'C'
                RETURNING to_jsonb(acquirer_attempts) AS row),
          cvc AS (UPDATE vault_cards v SET cvc_ct = NULL FROM r, x WHERE v.project_id = r.r_project AND v.id = r.r_card)
     SELECT r.txn, r."order", r.project, r.statuses, r.auth, r.card, r.seen, r.flying,
            (SELECT row FROM x) AS authorization, (SELECT row FROM y) AS challenge,
            (SELECT pg_notify('tender_jobs', '') WHERE $7::boolean AND EXISTS (SELECT 1 FROM x)) AS woken FROM r`,
    [
      transactionId,
      real,
      attempts.challenge !== undefined,
      attemptJson(attempts.authorization),
      attempts.challenge ? attemptJson(attempts.challenge) : null,
      recoveryMs,
      attempts.wake,
    ],
    { prepare: 'record_authorization' },
  );
  if (!row) return undefined;
  return {
    ...threeDsOf(row),
    seen: row.seen,
    flying: row.flying,
    attempt: reviveAttempt(row.authorization),
    challenge: reviveAttempt(row.challenge),
  };
}

/** What an attempt recorded with the page's read takes from it: see recordAuthorization. */
const FROM_READ = `jsonb_build_object('project_id', r.r_project, 'transaction_id', r.r_txn, 'order_id', r.r_order,
  'amount', r.r_amount, 'currency', r.r_currency, 'created', r.r_now, 'modified', r.r_now,
  'recover_at', r.r_now + $6 * interval '1 millisecond')`;
