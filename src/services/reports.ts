import { Readable, Transform } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Ctx } from './context.ts';
import type { Queryable } from '../store/db.ts';
import type { ProjectRow } from '../store/projects.ts';
import * as store from '../store/search.ts';
import type { ReportRow } from '../store/search.ts';
import { currencyExponent, formatMinor } from '../domain/money.ts';
import { planSearch, type SearchInput, type SearchPlan } from './search.ts';

/**
 * The CSV transaction report (POST /v1/search/orders/?format=csv): one row per transaction,
 * with the fields of its order; an order without a transaction has one row with empty
 * transaction columns. Capture, void, refund, chargeback and reversal results are orders of
 * their own, so each has its own row.
 *
 * Memory stays flat at any size: the orders are read in keyset batches (BATCH orders in sort
 * order, then the next BATCH after the last one), each batch only when the CSV stream asks for
 * more, so a slow client slows the reading down instead of filling memory.
 */
export const BATCH = 2000;

type Cell = string | number | boolean | null | undefined;
const OF_PREFIX: Record<string, string> = { capture: 'capture', void: 'void', refund: 'refund', chargeback: 'chargeback', reversal: 'reversal' };
const ofTxn = (kind: string) => (r: ReportRow) => (r.kind === kind ? r.t_of : null);
const ofOrder = (kind: string) => (r: ReportRow) => (r.kind === kind ? r.related_order_id : null);
const customer = (field: string) => (r: ReportRow) => {
  const v = r.customer?.[field];
  return Array.isArray(v) ? v.join(',') : (v as Cell);
};

/** Every column, in order: the spec's list first, then ours. The header line holds the names. */
export const COLUMNS: ReadonlyArray<readonly [string, (r: ReportRow) => Cell]> = [
  ['id', (r) => r.id],
  ['merchant_order_id', (r) => r.merchant_order_id],
  ['created', (r) => r.created],
  ['completed', (r) => r.completed],
  ['currency', (r) => r.currency],
  ['amount', (r) => r.amount],
  ['status', (r) => r.status],
  ['transaction.id', (r) => r.t_id],
  ['transaction.status', (r) => r.t_status],
  ['transaction.payment_method', (r) => r.t_payment_method],
  ['transaction.payment_method_brand', (r) => r.t_brand],
  ['transaction.amount_with_decimals', (r) => (r.t_id === null ? null : decimals(r.t_amount!, r.t_currency!))],
  ['transaction.credit_debit', (r) => r.t_credit_debit],
  ['transaction.refund_of_transaction_id', ofTxn('refund')],
  ['transaction.payment_method_details.truncated_pan', (r) => r.t_truncated_pan],
  ['transaction.settlement_currency', (r) => r.t_settlement_currency],
  ['transaction.settlement_amount', (r) => r.t_settlement_amount],
  ['transaction.fee_currency', (r) => r.t_fee_currency],
  ['transaction.fee_amount', (r) => r.t_fee_amount],
  ['customer.merchant_customer_id', customer('merchant_customer_id')],
  ['merchant_id', (r) => r.merchant_id],
  ['project_id', (r) => r.project_id],
  // further columns
  ['description', (r) => r.description],
  ['modified', (r) => r.modified],
  ['flags', (r) => r.flags.join(',')],
  ['refunded_amount', (r) => (r.kind === 'payment' ? r.refunded_amount : null)],
  ['related_order_id', (r) => r.related_order_id],
  ...Object.values(OF_PREFIX).map((k) => [`${k}_of_order_id`, ofOrder(k)] as const),
  ['payment_link_id', (r) => r.payment_link_id],
  ['merchant_name', (r) => r.merchant_name],
  ...['email_address', 'first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'state', 'country', 'locale', 'phone_numbers', 'ip_address'].map(
    (f) => [`customer.${f}`, customer(f)] as const,
  ),
  ['transaction.created', (r) => r.t_created],
  ['transaction.modified', (r) => r.t_modified],
  ['transaction.currency', (r) => r.t_currency],
  ['transaction.amount', (r) => r.t_amount],
  ['transaction.reason', (r) => r.t_reason],
  ['transaction.capture_mode', (r) => r.t_capture_mode],
  ['transaction.transaction_type', (r) => r.t_transaction_type],
  ['transaction.is_capturable', (r) => r.t_is_capturable],
  ...['capture', 'void', 'chargeback', 'reversal'].map((k) => [`transaction.${k}_of_transaction_id`, ofTxn(k)] as const),
  ['transaction.payment_method_details.card_expiry', (r) => r.t_card_expiry],
  ['transaction.payment_method_details.liability_shift', (r) => r.t_liability_shift],
];
export const COLUMN_NAMES = COLUMNS.map(([name]) => name);

/** Minor units in the currency's main unit: JPY 1234 -> 1234, EUR 1234 -> 12.34, KWD 1234 -> 1.234. */
const exponents = new Map<string, number | undefined>();
function decimals(amount: number, currency: string): string {
  if (!exponents.has(currency)) exponents.set(currency, currencyExponent(currency));
  return exponents.get(currency) === 0 ? String(amount) : formatMinor(amount, currency);
}

/** A cell as text: numbers as digits, booleans as true/false, nothing as an empty cell. */
const text = (v: Cell): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : String(v));

/** The CSV record of a report row. */
export const csvRecord = (r: ReportRow): string[] => COLUMNS.map(([, get]) => text(get(r)));

/** The report rows of a plan, batch by batch, pulled on demand. */
async function* reportRows(q: Queryable, plan: SearchPlan, signal?: AbortSignal): AsyncGenerator<string[][]> {
  let after = plan.after;
  let offset = plan.start;
  let left = plan.size ?? Infinity;
  while (left > 0 && !signal?.aborted) {
    const limit = Math.min(BATCH, left);
    const rows = await store.reportBatch(q, plan.filter, { sort: plan.sort, after, limit, offset });
    if (!rows.length) return;
    yield rows.map(csvRecord);
    let orders = 0;
    let prev: string | undefined;
    for (const r of rows) if (r.id !== prev) ((prev = r.id), orders++);
    if (orders < limit) return;
    const last = rows.at(-1)!;
    after = { value: last.sort_value, id: last.id };
    offset = 0;
    left -= orders;
  }
}

/** Joins the per-record strings of csv-stringify into chunks of about 64 KB: fewer, larger socket writes. */
function chunker(size = 64 * 1024): Transform {
  let parts: string[] = [];
  let length = 0;
  return new Transform({
    transform(chunk: Buffer | string, _enc, done) {
      const s = String(chunk);
      parts.push(s);
      length += s.length;
      if (length >= size) {
        this.push(parts.join(''));
        parts = [];
        length = 0;
      }
      done();
    },
    flush(done) {
      if (length) this.push(parts.join(''));
      done();
    },
  });
}

export interface Report {
  plan: SearchPlan;
  filename: string;
  /** the CSV, streamed: header line, then the rows */
  stream: Readable;
}

/**
 * Checks the request (the same rules as the JSON search; without size, every matching order)
 * and returns the report as a stream. Validation errors throw here, before anything is sent.
 * On PostgreSQL the whole report reads one snapshot (a REPEATABLE READ, READ ONLY transaction),
 * so it is consistent however long it streams. Embedded PGlite has a single connection that a
 * long transaction would hold from every other request: there each batch reads on its own.
 */
export function orderReport(ctx: Ctx, project: ProjectRow, input: SearchInput, now: Date): Report {
  const plan = planSearch(project.id, input, { unlimited: true });
  const csv = stringify({ header: true, columns: COLUMN_NAMES, eof: true });
  const abort = new AbortController();
  const out = csv.pipe(chunker());
  out.on('close', () => abort.abort());
  csv.on('error', (err) => out.destroy(err));

  const produce = async (q: Queryable) => {
    for await (const batch of reportRows(q, plan, abort.signal)) {
      for (const record of batch) {
        if (!csv.write(record)) await drained(csv, abort.signal);
        if (abort.signal.aborted) return;
      }
    }
  };
  const run =
    ctx.db.kind === 'postgres'
      ? ctx.db.tx(async (q) => {
          await q.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
          await produce(q);
        })
      : produce(ctx.db);
  run.then(
    () => (abort.signal.aborted ? csv.destroy() : csv.end()),
    (err) => {
      ctx.log.error({ err }, 'CSV report failed');
      out.destroy(err);
    },
  );
  return { plan, filename: `orders-${now.toISOString().slice(0, 10)}.csv`, stream: out };
}

/** Resolves when the stream wants more, or when the report is abandoned. */
function drained(stream: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      stream.off('drain', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stream.once('drain', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
