import { PassThrough, Readable, Transform } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Ctx } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import { ACTING_KINDS } from '../../store/payments/orders.ts';
import * as store from '../../store/reporting/search.ts';
import type { ReportRow } from '../../store/reporting/search.ts';
import { planSearch, type SearchInput, type SearchPlan } from './search.ts';
import type { SearchAfter } from '../../domain/sort.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { takeReportShare } from '../platform/fair-share.ts';
import { guardedReport } from './report-guard.ts';
import { spooled } from './spool.ts';

/**
 * The CSV transaction report (POST /v1/search/orders/?format=csv): one row per transaction,
 * with the fields of its order; an order without a transaction has one row with empty
 * transaction columns. Capture, void, refund, chargeback and reversal results are orders of
 * their own, so each has its own row.
 *
 * Memory stays flat at any size, and a slow client slows the reading down instead of filling
 * memory: on PostgreSQL the COPY stream is paused by backpressure; on PGlite the orders are read
 * in keyset batches (BATCH orders in sort order, then the next BATCH after the last one), each
 * only when the CSV stream asks for more.
 */
const BATCH = 2000;

const CUSTOMER = [
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
  'phone_numbers',
  'ip_address',
];

/**
 * Every column, in order: the spec's list first, then ours. The header line holds the names;
 * the database formats every cell under the same name (store/reporting/search.ts reportSelect).
 */
export const COLUMN_NAMES: readonly string[] = [
  'id',
  'merchant_order_id',
  'created',
  'completed',
  'currency',
  'amount',
  'status',
  'transaction.id',
  'transaction.status',
  'transaction.payment_method',
  'transaction.payment_method_brand',
  'transaction.amount_with_decimals',
  'transaction.credit_debit',
  'transaction.refund_of_transaction_id',
  'transaction.payment_method_details.truncated_pan',
  'transaction.settlement_currency',
  'transaction.settlement_amount',
  'transaction.fee_currency',
  'transaction.fee_amount',
  'customer.merchant_customer_id',
  'merchant_id',
  'project_id',
  // further columns
  'description',
  'modified',
  'flags',
  'refunded_amount',
  'related_order_id',
  ...ACTING_KINDS.map((k) => `${k}_of_order_id`),
  'payment_link_id',
  'merchant_name',
  ...CUSTOMER.map((f) => `customer.${f}`),
  ...['created', 'modified', 'currency', 'amount', 'reason', 'capture_mode', 'transaction_type', 'is_capturable'].map(
    (c) => `transaction.${c}`,
  ),
  ...ACTING_KINDS.filter((k) => k !== 'refund').map((k) => `transaction.${k}_of_transaction_id`),
  'transaction.payment_method_details.card_expiry',
  'transaction.payment_method_details.liability_shift',
];

/** The CSV record of a report row (an order with one of its transactions, or alone). */
function csvRecord(r: ReportRow): string[] {
  const record = new Array<string>(COLUMN_NAMES.length);
  for (let i = 0; i < COLUMN_NAMES.length; i++) {
    const cell = r[COLUMN_NAMES[i]] ?? '';
    record[i] = TYPED[i] ? store.neutralised(cell) : cell;
  }
  return record;
}

/** Which columns hold typed text, neutralised against formula injection (store isTypedCell). */
const TYPED = COLUMN_NAMES.map(store.isTypedCell);

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
 *
 * On PostgreSQL the database writes the CSV itself (COPY of the report's SELECT, one snapshot,
 * bytes streamed through with backpressure): Node then neither decodes rows nor encodes cells,
 * which is what the export's speed and flat memory need. Embedded PGlite has no COPY to a
 * stream and a single connection that a long statement would hold from every other request:
 * there the rows are read in keyset batches and written by csv-stringify. Both paths produce
 * the same bytes (test/e2e/search-reports.test.ts compares them, forcing the batch writer on
 * PostgreSQL with `copy: false`). On PostgreSQL the COPY goes in parts of `partOrders` orders
 * (PART_ORDERS), copied side by side on the report connections in one snapshot, into a spool
 * file (spool.ts) the client reads behind it: a client that stalls holds no report connection.
 * The batch path holds none between its batches, so it needs no spool. Reports read ctx.replica
 * (DATABASE_REPLICA_URL, else the primary).
 */
export function orderReport(
  ctx: Ctx,
  project: ProjectRow,
  input: SearchInput,
  now: Date,
  opts: { copy?: boolean; partOrders?: number } = {},
): Report {
  const plan = planSearch(project.id, input, { unlimited: true, maxCost: ctx.config.limits.maxQueryCost });
  const filename = `orders-${now.toISOString().slice(0, 10)}.csv`;
  const source = ctx.replica;
  // the project's share of reports (429 beyond it), held until the download ends however it ends
  const release = takeReportShare(ctx, project.id);
  let stream: Readable;
  try {
    stream =
      opts.copy !== false && source.copyCsv
        ? // spooled: the COPY runs at the database's pace and frees its connections, whatever the client reads
          spooled(copiedReport(ctx, source, plan, opts.partOrders ?? PART_ORDERS))
        : streamedReport(ctx, plan);
  } catch (err) {
    release();
    throw err;
  }
  const { reportReadTimeoutMs, reportMaxMs } = ctx.config.limits;
  return {
    plan,
    filename,
    stream: guardedReport(stream, {
      readTimeoutMs: reportReadTimeoutMs,
      maxMs: reportMaxMs,
      onEnd: release,
      onCut: (why) => ctx.log.warn({ project_id: project.id, why }, 'CSV report cut off'),
    }),
  };
}

/** The header line, as csv-stringify writes it for the batch path. */
const HEADER = `${COLUMN_NAMES.join(',')}\n`;

/**
 * Orders per part of a report copied in parts (Db.copyCsvParts): each part is one COPY of the
 * report's statement over the next PART_ORDERS orders, the parts copied side by side on the
 * report connections and written in order.
 */
const PART_ORDERS = 5000;

function copiedReport(ctx: Ctx, source: Ctx['db'], plan: SearchPlan, partOrders: number): Readable {
  const out = new PassThrough();
  out.write(HEADER);
  const window = { sort: plan.sort, after: plan.after, offset: plan.start, limit: plan.size ?? null };
  const fail = (err: Error) => {
    ctx.log.error({ err }, 'CSV report failed');
    out.destroy(err);
  };
  const copyParts = source.copyCsvParts;
  const copied = copyParts
    ? copyParts((q) => store.reportParts(q, plan.filter, window, COLUMN_NAMES, partOrders))
    : (() => {
        const { sql, params } = store.reportCellsSql(plan.filter, window, COLUMN_NAMES);
        return source.copyCsv!(sql, params);
      })();
  copied.then((rows) => {
    // the client went away (maybe before the COPY began): abandon it, which frees its connection
    if (out.destroyed) return void rows.destroy();
    out.on('close', () => rows.destroy());
    rows.on('error', fail);
    rows.pipe(out);
  }, fail);
  return out;
}

function streamedReport(ctx: Ctx, plan: SearchPlan): Readable {
  // records go out as strings (readableObjectMode), not one Buffer each: the chunker joins them
  const csv = stringify({ header: true, columns: [...COLUMN_NAMES], eof: true, readableObjectMode: true });
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
  // each batch reads on its own: a long transaction would hold PGlite's one connection
  const run = produce(ctx.replica);
  run.then(
    () => (abort.signal.aborted ? csv.destroy() : csv.end()),
    (err) => {
      ctx.log.error({ err }, 'CSV report failed');
      out.destroy(err);
    },
  );
  return out;
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
