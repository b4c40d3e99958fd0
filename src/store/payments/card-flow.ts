import type { Queryable } from '../db/db.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { TransactionStatus } from '../../domain/status.ts';
import type { CardAuthRow, VaultCardRow } from '../vault/cards.ts';
import type { TransactionId } from '../../domain/ids.ts';

/**
 * The reads of the card flow's steps, one statement each (docs/performance-cards.md): every row
 * a step needs comes back in one round trip, as JSON per table (to_jsonb) turned back into the
 * rows the other store functions answer (timestamps as Date).
 */

/** Timestamp columns of the tables read here; JSON has them as strings. */
const TIMESTAMPS = new Set([
  'created',
  'modified',
  'completed',
  'expires_at',
  'setup_token_used',
  'settled',
  'recover_at',
  'authorized',
  'capture_before',
  'occurred',
  'noticed',
]);

export function revive<T>(json: object | null | undefined): T | undefined {
  if (!json) return undefined;
  const row = json as Record<string, unknown>;
  for (const k of Object.keys(row)) if (TIMESTAMPS.has(k) && typeof row[k] === 'string') row[k] = new Date(row[k] as string);
  return row as T;
}

/**
 * The versions of a payment's rows as a locking read saw them (store/payments/payment-rows.ts):
 * its transaction's and order's xmin, and the reading database transaction's id (`by`), which
 * then writes the attempt.
 */
export interface Seen {
  by: string;
  txn: string;
  order: string;
}

/** SQL of a locking read's column `seen` (Seen): `t` the payment's transaction, `o` its order. */
export const SEEN_COLUMN = `jsonb_build_object('by', xid(pg_current_xact_id())::text, 'txn', t.xmin::text, 'order', o.xmin::text) AS seen`;

export interface StartView {
  txn: TransactionRow;
  order: OrderRow;
  project: ProjectRow;
  /** the statuses of every transaction of the order (this one's included), oldest first */
  statuses: TransactionStatus[];
  card?: VaultCardRow;
}

export interface ThreeDsRows extends StartView {
  project: ProjectRow;
  auth?: CardAuthRow;
  /** the versions of the rows as read, when locked (an apply planned from them: gateAsRecorded) */
  seen?: Seen;
}

/** The columns of the 3-D Secure page's read: `t` the transaction, `o` its order, `p` its project, `a` its 3-D Secure row. */
export const THREE_DS_COLUMNS = `to_jsonb(t) AS txn, to_jsonb(o) AS "order", to_jsonb(p) AS project,
  ARRAY(SELECT s.status FROM transactions s WHERE s.project_id = t.project_id AND s.order_id = t.order_id ORDER BY s.created, s.id)::text[] AS statuses,
  to_jsonb(a) AS auth,
  (SELECT to_jsonb(v) FROM vault_cards v WHERE v.project_id = t.project_id AND v.id = a.vault_token) AS card`;
export const THREE_DS_FROM = `FROM transactions t JOIN orders o ON o.id = t.order_id JOIN projects p ON p.id = t.project_id
  LEFT JOIN card_authentications a ON a.project_id = t.project_id AND a.transaction_id = t.id`;

export type RawThreeDs = {
  txn: object;
  order: object;
  project: object;
  statuses: TransactionStatus[];
  auth: object | null;
  card: object | null;
  seen?: Seen;
};

export const threeDsOf = (row: RawThreeDs): ThreeDsRows => ({
  ...viewOf(row),
  auth: revive<CardAuthRow>(row.auth),
  ...(row.seen ? { seen: row.seen } : {}),
});

/**
 * What the 3-D Secure page needs of a transaction: it, its order and project, its 3-D Secure
 * row and stored card; the transaction and its order locked (FOR UPDATE), with their versions.
 */
export async function threeDsRows(q: Queryable, transactionId: TransactionId): Promise<ThreeDsRows | undefined> {
  const [row] = await q.query<RawThreeDs>(
    `SELECT ${THREE_DS_COLUMNS}, ${SEEN_COLUMN} ${THREE_DS_FROM} WHERE t.id = $1 FOR UPDATE OF t, o`,
    [transactionId],
    { prepare: 'three_ds_rows_locked' },
  );
  return row && threeDsOf(row);
}

/** The rows a step's read answers as JSON, revived (dates, numbers) into their entity types. */
export function viewOf(row: { txn: object; order: object; project: object; statuses: TransactionStatus[]; card: object | null }) {
  return {
    txn: revive<TransactionRow>(row.txn)!,
    order: revive<OrderRow>(row.order)!,
    project: revive<ProjectRow>(row.project)!,
    statuses: row.statuses,
    card: revive<VaultCardRow>(row.card),
  };
}
