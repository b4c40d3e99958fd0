import type { Queryable } from '../db/db.ts';
import { ACTING_KINDS } from '../payments/orders.ts';
import type { SearchAfter, SortSpec } from '../../domain/sort.ts';
import { keysetCondition } from '../../domain/sort.ts';
import { EXPONENTS_NOT_2 } from '../../domain/currency.ts';
import type { OrderRow } from '../../domain/entities.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * The SQL of order search and reports. `where` is a compiled query (src/domain/query.ts) over
 * alias `o` whose parameters start at $2; $1 is always the project. Every statement is
 * parameterised: only text from query.ts's constants reaches the SQL.
 */
export interface Filter {
  projectId: ProjectId;
  where: string;
  params: unknown[];
  /** the same filter over transactions `t` alone, when the query is one transactions.* term */
  transactions?: { where: string; params: unknown[] } | null;
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
 * broad queries over millions of orders would cost more than the page itself). In no
 * particular order, so the planner takes the cheapest way to the first `cap` matches.
 */
export async function countOrders(q: Queryable, f: Filter, cap: number): Promise<number> {
  // one transactions.* term: its orders are the distinct order_ids of the matching transactions,
  // read from the transactions' index without probing every order
  const t = f.transactions;
  const rows = t
    ? await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT DISTINCT t.order_id FROM transactions t WHERE t.project_id = $1 AND ${t.where} LIMIT $${t.params.length + 2}) s`,
        [f.projectId, ...t.params, cap],
      )
    : await q.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM orders o WHERE o.project_id = $1 AND ${f.where} LIMIT $${f.params.length + 2}) s`,
        [f.projectId, ...f.params, cap],
      );
  return rows[0].n;
}

/** Timestamps as the API writes them (order-view.ts `iso`): millisecond precision, `+00:00`. */
const ts = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

const CUSTOMER_FIELDS = [
  'merchant_customer_id',
  'email_address',
  'first_name',
  'last_name',
  'address_type',
  'address',
  'postal_code',
  'city',
  'state',
  'country',
  'locale',
  'ip_address',
];

/**
 * A row of the transaction report: an order with one of its transactions (transaction cells
 * null for an order without any). Every cell is text formatted by the database, named by its
 * report column (services/reporting/reports.ts COLUMN_NAMES), so the same SELECT feeds both the streamed
 * CSV and PostgreSQL's COPY. `id` and `sort_value` are the keyset cursor of the batch path.
 */
export type ReportRow = Record<string, string | null> & {
  id: string;
  sort_value: string | number | null;
};

/** The currency's exponent (JPY 0, KWD 3, else 2), as SQL over a currency column. */
export const exponentSql = (col: string) =>
  `CASE ${col} ${EXPONENTS_NOT_2.map(([code, digits]) => `WHEN '${code}' THEN ${digits}`).join(' ')} ELSE 2 END`;

/** Minor units as a decimal in the currency's exponent, as domain/currency.ts formatMinor writes them. */
export const decimalsSql = (amount: string, e: string) =>
  `CASE WHEN ${e} = 0 THEN ${amount}::text ELSE CASE WHEN ${amount} < 0 THEN '-' ELSE '' END || (abs(${amount}) / (10 ^ ${e})::bigint)::text || '.' || lpad((abs(${amount}) % (10 ^ ${e})::bigint)::text, ${e}, '0') END`;

/**
 * The customer's phone numbers are joined by commas, nulls left out, by concat_ws over the
 * array's items: the order schema takes at most 10 (domain/schemas/order.ts). A subquery over
 * jsonb_array_elements_text per order made the whole COPY twice as slow.
 */
const PHONE_ITEMS = Array.from({ length: 10 }, (_, i) => i);

/**
 * The report's SELECT over the window's orders, each joined to its transactions (oldest first),
 * the transactions probed by order_id for each order. Returns the SQL and its parameters.
 */
function reportSelect(f: Filter, w: Window) {
  const { where, order, params } = pageSql(f, w);
  // the customer object is taken out of the body once per order (o.body_customer), not once per field
  const customer = CUSTOMER_FIELDS.map((k) => `o.body_customer->>'${k}' AS "customer.${k}"`).join(', ');
  const phones = `o.body_customer->'phone_numbers'`;
  const ofOrder = ACTING_KINDS.map((k) => `CASE WHEN o.kind = '${k}' THEN o.related_order_id::text END AS "${k}_of_order_id"`).join(', ');
  const ofTxn = ACTING_KINDS.map((k) => `CASE WHEN o.kind = '${k}' THEN t.t_of END AS "transaction.${k}_of_transaction_id"`).join(', ');
  const sql = `SELECT o.id, o.merchant_order_id, ${ts('o.created')} AS created, ${ts('o.completed')} AS completed, ${ts('o.modified')} AS modified,
            o.currency, o.amount::text AS amount, o.status, o.description, array_to_string(o.flags, ',') AS flags,
            CASE WHEN o.kind = 'payment' THEN o.refunded_amount::text END AS refunded_amount, o.related_order_id::text AS related_order_id,
            ${ofOrder}, ${ofTxn},
            o.payment_link_id::text AS payment_link_id, o.merchant_id::text AS merchant_id, o.project_id::text AS project_id,
            o.body->>'merchant_name' AS merchant_name, ${customer},
            CASE WHEN jsonb_typeof(${phones}) = 'array' THEN NULLIF(concat_ws(',', ${PHONE_ITEMS.map((i) => `${phones}->>${i}`).join(', ')}), '') END
              AS "customer.phone_numbers",
            o.sort_value, t.*
     FROM (SELECT o.*, ${w.sort.valueSql} AS sort_value, o.body->'customer' AS body_customer FROM orders o WHERE ${where} ${order}) o
     LEFT JOIN LATERAL (
       SELECT t.of_transaction_id::text AS t_of, t.created AS t_created, t.id AS t_id,
              t.id::text AS "transaction.id", t.status AS "transaction.status",
              t.payment_method AS "transaction.payment_method", t.payment_method_brand AS "transaction.payment_method_brand",
              ${decimalsSql('t.amount', 'x.e')} AS "transaction.amount_with_decimals",
              t.credit_debit AS "transaction.credit_debit",
              t.details->>'truncated_pan' AS "transaction.payment_method_details.truncated_pan",
              t.details->>'card_expiry' AS "transaction.payment_method_details.card_expiry",
              t.details->>'liability_shift' AS "transaction.payment_method_details.liability_shift",
              t.settlement_currency AS "transaction.settlement_currency", t.settlement_amount::text AS "transaction.settlement_amount",
              t.fee_currency AS "transaction.fee_currency", t.fee_amount::text AS "transaction.fee_amount",
              ${ts('t.created')} AS "transaction.created", ${ts('t.modified')} AS "transaction.modified", t.currency AS "transaction.currency",
              t.amount::text AS "transaction.amount", t.reason AS "transaction.reason", t.capture_mode AS "transaction.capture_mode",
              t.transaction_type AS "transaction.transaction_type", t.is_capturable::text AS "transaction.is_capturable"
       FROM transactions t CROSS JOIN LATERAL (SELECT ${exponentSql('t.currency')} AS e) x
       WHERE t.order_id = o.id AND t.project_id = o.project_id
       OFFSET 0 -- keeps it a per-order probe of transactions_order, never a scan of all transactions
     ) t ON true
     ORDER BY ${w.sort.orderBy}, t.t_created, t.t_id`;
  return { sql, params };
}

/**
 * Report cells that are never empty text, only NULL or a value: ids, timestamps and numbers
 * formatted by reportSelect. The others may hold '' (merchant and customer text), which
 * NULLIF turns into NULL for COPY; skipping it where it cannot matter saves a good part of the
 * COPY's time.
 */
const NEVER_EMPTY = new Set([
  'id',
  'created',
  'completed',
  'modified',
  'amount',
  'refunded_amount',
  'related_order_id',
  'payment_link_id',
  'merchant_id',
  'project_id',
  ...ACTING_KINDS.map((k) => `${k}_of_order_id`),
  ...ACTING_KINDS.map((k) => `transaction.${k}_of_transaction_id`),
  ...['id', 'amount_with_decimals', 'settlement_amount', 'fee_amount', 'created', 'modified', 'amount', 'is_capturable'].map(
    (c) => `transaction.${c}`,
  ),
]);

/**
 * Cells that hold text someone typed (the merchant, or a payer on a hosted page) are neutralised
 * as OWASP recommends against formula injection: one beginning with =, +, -, @, a tab or a
 * carriage return gets a leading single quote, so a spreadsheet shows it as text instead of
 * running it. The database-formatted cells (NEVER_EMPTY: ids, timestamps, numbers) are left
 * alone, so a negative amount stays a number.
 */
export const isTypedCell = (column: string) => !NEVER_EMPTY.has(column);

/** The same rule in JS, for the streamed report's cells (services/reporting/reports.ts). */
export const neutralised = (cell: string) => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell);

/** The rule as SQL over a text cell; '' becomes NULL (an empty cell in COPY's CSV). */
const neutralisedSql = (cell: string) =>
  `CASE WHEN ascii(${cell}) IN (9, 13, 43, 45, 61, 64) THEN '''' || ${cell} ELSE NULLIF(${cell}, '') END`;

/** The next `limit` matching orders in sort order, with their transactions: one query. */
export async function reportBatch(q: Queryable, f: Filter, w: Window): Promise<ReportRow[]> {
  const { sql, params } = reportSelect(f, w);
  return q.query<ReportRow>(sql, params);
}

/**
 * The whole report as one statement whose columns are the given cells, in order, empty text
 * as NULL (so COPY writes an empty cell for both, as the streamed CSV does), typed text
 * neutralised (isTypedCell). limit null: every matching order.
 */
export function reportCellsSql(f: Filter, w: Omit<Window, 'limit'> & { limit: number | null }, columns: readonly string[]) {
  const { sql, params } = reportSelect(f, { ...w, limit: w.limit as number });
  const cells = columns.map((c) => (NEVER_EMPTY.has(c) ? `r."${c}"` : neutralisedSql(`r."${c.replaceAll('"', '""')}"::text`))).join(', ');
  return { sql: `SELECT ${cells} FROM (${sql}) r`, params };
}

/**
 * The report split into parts of `chunk` orders each, in report order, for COPYs side by side
 * (Db.copyCsvParts): reads the cursor of every chunk-th matching order (one index walk, no
 * formatting), then gives each part's cell statement (reportCellsSql after that cursor). Run in
 * the snapshot the parts are copied in, so together they hold exactly the rows of the one
 * statement reportCellsSql would make for the whole window.
 */
export async function reportParts(
  q: Queryable,
  f: Filter,
  w: Omit<Window, 'limit'> & { limit: number | null },
  columns: readonly string[],
  chunk: number,
): Promise<Array<{ sql: string; params: unknown[] }>> {
  const start = w.offset ?? 0;
  const end = w.limit === null ? null : start + w.limit;
  const params: unknown[] = [f.projectId, ...f.params];
  const keyset = keysetCondition(w.sort, w.after ?? null, params.length + 1);
  params.push(...keyset.params);
  const n = params.length;
  params.push(start, chunk, end);
  const cuts = await q.query<{ sort_value: string | number | null; id: string; n: number }>(
    // the sort value is formatted for the cut orders only, not for every order walked
    `SELECT ${w.sort.valueSql} AS sort_value, o.id, s.n::int AS n FROM (
       SELECT o.id, row_number() OVER (ORDER BY ${w.sort.orderBy}) AS n
       FROM orders o WHERE o.project_id = $1 AND ${f.where} AND ${keyset.sql}) s
     JOIN orders o ON o.id = s.id
     WHERE s.n >= $${n + 1}::bigint AND s.n > 0 AND (s.n - $${n + 1}::bigint) % $${n + 2}::bigint = 0 AND ($${n + 3}::bigint IS NULL OR s.n < $${n + 3}::bigint)
     ORDER BY s.n`,
    params,
  );
  // part c starts after the order at row start + c * chunk (row 0: the window's own cursor)
  const starts: Array<{ after: SearchAfter | null; row: number }> = start === 0 ? [{ after: w.after ?? null, row: 0 }] : [];
  for (const c of cuts) starts.push({ after: { value: c.sort_value, id: c.id }, row: c.n });
  if (!starts.length) return []; // the offset is past the last order
  return starts.map((s, i) => {
    const last = i === starts.length - 1;
    const limit = !last ? chunk : end === null ? null : end - s.row;
    return reportCellsSql(f, { sort: w.sort, after: s.after, offset: 0, limit }, columns);
  });
}
