import { Readable, Transform } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Ctx } from './context.ts';
import type { Queryable } from '../store/db.ts';
import type { ProjectRow } from '../store/projects.ts';
import * as store from '../store/search.ts';
import type { ReportRow } from '../store/search.ts';
import { formatMinor } from '../domain/money.ts';
import { planSearch, type SearchInput, type SearchPlan } from './search.ts';
import type { SearchAfter } from '../domain/query.ts';

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

type Cell = string | null | undefined;
type Getter = (r: ReportRow) => Cell;
const cell = (name: string): Getter => (r) => r[name];
/** the transaction this one captures, voids, refunds...: by the kind of its order */
const ofTxn = (kind: string): Getter => (r) => (r.kind === kind ? r.t_of : null);
const ofOrder = (kind: string): Getter => (r) => (r.kind === kind ? r.related_order_id : null);
const OF_KINDS = ['capture', 'void', 'refund', 'chargeback', 'reversal'];
const CUSTOMER = ['email_address', 'first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'state', 'country', 'locale', 'phone_numbers', 'ip_address'];
const cells = (...names: string[]) => names.map((name) => [name, cell(name)] as const);

/** Every column, in order: the spec's list first, then ours. The header line holds the names. */
export const COLUMNS: ReadonlyArray<readonly [string, Getter]> = [
  ...cells('id', 'merchant_order_id', 'created', 'completed', 'currency', 'amount', 'status'),
  ...cells('transaction.id', 'transaction.status', 'transaction.payment_method', 'transaction.payment_method_brand'),
  ['transaction.amount_with_decimals', (r) => (r.t_amount === null ? null : decimals(r.t_amount, r.t_currency!))],
  ...cells('transaction.credit_debit'),
  ['transaction.refund_of_transaction_id', ofTxn('refund')],
  ...cells('transaction.payment_method_details.truncated_pan', 'transaction.settlement_currency', 'transaction.settlement_amount', 'transaction.fee_currency', 'transaction.fee_amount'),
  ...cells('customer.merchant_customer_id', 'merchant_id', 'project_id'),
  // further columns
  ...cells('description', 'modified', 'flags', 'refunded_amount', 'related_order_id'),
  ...OF_KINDS.map((k) => [`${k}_of_order_id`, ofOrder(k)] as const),
  ...cells('payment_link_id', 'merchant_name', ...CUSTOMER.map((f) => `customer.${f}`)),
  ...cells(...['created', 'modified', 'currency', 'amount', 'reason', 'capture_mode', 'transaction_type', 'is_capturable'].map((c) => `transaction.${c}`)),
  ...OF_KINDS.filter((k) => k !== 'refund').map((k) => [`transaction.${k}_of_transaction_id`, ofTxn(k)] as const),
  ...cells('transaction.payment_method_details.card_expiry', 'transaction.payment_method_details.liability_shift'),
];
export const COLUMN_NAMES = COLUMNS.map(([name]) => name);
const GETTERS = COLUMNS.map(([, get]) => get);

/** Minor units in the currency's main unit: JPY 1234 -> 1234, EUR 1234 -> 12.34, KWD 1234 -> 1.234. */
const decimals = (amount: number, currency: string) => formatMinor(amount, currency);

/** The CSV record of a report row (an order with one of its transactions, or alone). */
export function csvRecord(r: ReportRow): string[] {
  const record = new Array<string>(GETTERS.length);
  for (let i = 0; i < GETTERS.length; i++) record[i] = GETTERS[i](r) ?? '';
  return record;
}

interface Batch {
  rows: ReportRow[];
  /** orders in the batch (rows of one order are adjacent) */
  orders: number;
  limit: number;
}

async function loadBatch(q: Queryable, plan: SearchPlan, after: SearchAfter | null, offset: number, limit: number): Promise<Batch> {
  const rows = await store.reportBatch(q, plan.filter, { sort: plan.sort, after, limit, offset });
  let orders = 0;
  for (let i = 0; i < rows.length; i++) if (i === 0 || rows[i].id !== rows[i - 1].id) orders++;
  return { rows, orders, limit };
}

/**
 * The report's records, batch by batch, pulled on demand. One batch ahead is read while the
 * current one is written, so the database and the CSV encoding work side by side.
 */
async function* reportRecords(q: Queryable, plan: SearchPlan, signal?: AbortSignal): AsyncGenerator<string[][]> {
  let left = plan.size ?? Infinity;
  const ahead = (after: SearchAfter | null, offset: number) => {
    const p = loadBatch(q, plan, after, offset, Math.min(BATCH, left));
    p.catch(() => {}); // awaited below; an abandoned report must not leave an unhandled rejection
    return p;
  };
  let next: Promise<Batch> | undefined = left > 0 ? ahead(plan.after, plan.start) : undefined;
  while (next && !signal?.aborted) {
    const batch: Batch = await next;
    next = undefined;
    left -= batch.orders;
    if (batch.orders === batch.limit && left > 0) {
      const last = batch.rows.at(-1)!;
      next = ahead({ value: last.sort_value, id: last.id }, 0);
    }
    if (batch.rows.length) yield batch.rows.map(csvRecord);
  }
  if (next) await next.catch(() => {});
}

/** Joins csv-stringify's per-record strings into chunks of about 64 KB: fewer, larger socket writes. */
function chunker(size = 64 * 1024): Transform {
  let parts: string[] = [];
  let length = 0;
  return new Transform({
    writableObjectMode: true,
    transform(chunk: string, _enc, done) {
      parts.push(chunk);
      length += chunk.length;
      if (length >= size) {
        this.push(parts.join(''), 'utf8');
        parts = [];
        length = 0;
      }
      done();
    },
    flush(done) {
      if (length) this.push(parts.join(''), 'utf8');
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
  // records go out as strings (readableObjectMode), not one Buffer each: the chunker joins them
  const csv = stringify({ header: true, columns: COLUMN_NAMES, eof: true, readableObjectMode: true });
  const abort = new AbortController();
  const out = csv.pipe(chunker());
  out.on('close', () => abort.abort());
  csv.on('error', (err) => out.destroy(err));

  const produce = async (q: Queryable) => {
    for await (const batch of reportRecords(q, plan, abort.signal)) {
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
