import type { Queryable } from './db.ts';
import type { OrderRow } from './orders.ts';
import type { SearchAfter, SortSpec } from '../domain/query.ts';
import { keysetCondition } from '../domain/query.ts';

/**
 * The SQL of order search and reports. `where` is a compiled query (src/domain/query.ts) over
 * alias `o` whose parameters start at $2; $1 is always the project. Every statement is
 * parameterised: only text from query.ts's constants reaches the SQL.
 */
export interface Filter {
  projectId: string;
  where: string;
  params: unknown[];
}

export interface Window {
  sort: SortSpec;
  /** keyset: only orders after this cursor (search_after) */
  after?: SearchAfter | null;
  limit: number;
  /** simple paging; 0 with a cursor */
  offset?: number;
}

/** WHERE ... ORDER BY ... LIMIT of one page of orders, with its bind parameters. */
function pageSql(f: Filter, w: Window) {
  const params: unknown[] = [f.projectId, ...f.params];
  const keyset = keysetCondition(w.sort, w.after ?? null, params.length + 1);
  params.push(...keyset.params);
  params.push(w.limit);
  const limit = `$${params.length}`;
  let offset = '';
  if (w.offset) {
    params.push(w.offset);
    offset = ` OFFSET $${params.length}`;
  }
  const where = `o.project_id = $1 AND ${f.where} AND ${keyset.sql}`;
  return { where, order: `ORDER BY ${w.sort.orderBy} LIMIT ${limit}${offset}`, params };
}

export type SearchRow = OrderRow & { sort_value: string | number | null };

/** One page of matching orders in sort order, each with its exact sort value (for search_after). */
export async function findOrders(q: Queryable, f: Filter, w: Window): Promise<SearchRow[]> {
  const { where, order, params } = pageSql(f, w);
  return q.query<SearchRow>(`SELECT o.*, ${w.sort.valueSql} AS sort_value FROM orders o WHERE ${where} ${order}`, params);
}

/**
 * How many orders match, counting no further than `cap` (a count stops early: exact totals of
 * broad queries over millions of orders would cost more than the page itself).
 */
export async function countOrders(q: Queryable, f: Filter, cap: number): Promise<number> {
  const rows = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM orders o WHERE o.project_id = $1 AND ${f.where} LIMIT $${f.params.length + 2}) s`,
    [f.projectId, ...f.params, cap],
  );
  return rows[0].n;
}

/** Timestamps as the API writes them (order-view.ts `iso`): millisecond precision, `+00:00`. */
const ts = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

/** A row of the transaction report: an order with one of its transactions (t_* null without one). */
export interface ReportRow {
  id: string;
  kind: string;
  merchant_order_id: string | null;
  created: string;
  completed: string | null;
  modified: string;
  currency: string;
  amount: number;
  status: string;
  description: string | null;
  flags: string[];
  refunded_amount: number;
  related_order_id: string | null;
  payment_link_id: string | null;
  merchant_id: string;
  project_id: string;
  merchant_name: string | null;
  customer: Record<string, unknown> | null;
  sort_value: string | number | null;
  t_id: string | null;
  t_status: string | null;
  t_payment_method: string | null;
  t_brand: string | null;
  t_currency: string | null;
  t_amount: number | null;
  t_credit_debit: string | null;
  t_of: string | null;
  t_truncated_pan: string | null;
  t_card_expiry: string | null;
  t_liability_shift: boolean | null;
  t_settlement_currency: string | null;
  t_settlement_amount: number | null;
  t_fee_currency: string | null;
  t_fee_amount: number | null;
  t_created: string | null;
  t_modified: string | null;
  t_reason: string | null;
  t_capture_mode: string | null;
  t_transaction_type: string | null;
  t_is_capturable: boolean | null;
}

/**
 * A batch of the transaction report: the next `limit` matching orders in sort order, joined to
 * their transactions (oldest first; one row with null t_* for an order without any). Only the
 * columns the report needs, timestamps formatted by the database.
 */
export async function reportBatch(q: Queryable, f: Filter, w: Window): Promise<ReportRow[]> {
  const { where, order, params } = pageSql(f, w);
  return q.query<ReportRow>(
    `SELECT o.id, o.kind, o.merchant_order_id, ${ts('o.created')} AS created, ${ts('o.completed')} AS completed, ${ts('o.modified')} AS modified,
            o.currency, o.amount, o.status, o.description, o.flags, o.refunded_amount, o.related_order_id, o.payment_link_id,
            o.merchant_id, o.project_id, o.body->>'merchant_name' AS merchant_name, o.body->'customer' AS customer, o.sort_value,
            t.id AS t_id, t.status AS t_status, t.payment_method AS t_payment_method, t.payment_method_brand AS t_brand,
            t.currency AS t_currency, t.amount AS t_amount, t.credit_debit AS t_credit_debit, t.of_transaction_id AS t_of,
            t.details->>'truncated_pan' AS t_truncated_pan, t.details->>'card_expiry' AS t_card_expiry,
            (t.details->'liability_shift')::boolean AS t_liability_shift,
            t.settlement_currency AS t_settlement_currency, t.settlement_amount AS t_settlement_amount,
            t.fee_currency AS t_fee_currency, t.fee_amount AS t_fee_amount,
            ${ts('t.created')} AS t_created, ${ts('t.modified')} AS t_modified, t.reason AS t_reason,
            t.capture_mode AS t_capture_mode, t.transaction_type AS t_transaction_type, t.is_capturable AS t_is_capturable
     FROM (SELECT o.*, ${w.sort.valueSql} AS sort_value FROM orders o WHERE ${where} ${order}) o
     LEFT JOIN transactions t ON t.order_id = o.id AND t.project_id = o.project_id
     ORDER BY ${w.sort.orderBy}, t.created, t.id`,
    params,
  );
}
