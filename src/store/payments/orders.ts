import type { Db, Queryable } from '../db/db.ts';
import { coalescer } from '../db/coalesce.ts';
import { WriteSet, type RowPatch, type TableName } from '../db/writes.ts';
import type { EventRow, OrderKind, OrderRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderId, ProjectId } from '../../domain/ids.ts';
import type { OrderStatus } from '../../domain/status.ts';

/** Kinds of order that act on another order and its transaction (related_order_id, of_transaction_id). */
export const ACTING_KINDS: ReadonlyArray<Exclude<OrderKind, 'payment'>> = ['capture', 'void', 'refund', 'chargeback', 'reversal'];

/** The money counters of a transaction that has moved no money yet. */
export const NO_MONEY_MOVED = {
  is_capturable: false,
  authorized_amount: 0,
  captured_amount: 0,
  voided_amount: 0,
  refunded_amount: 0,
  charged_back_amount: 0,
} as const;

/** Inserts one row (through a WriteSet: the one generic insert, typed by the table's columns). */
export async function insertRow<T extends TableName>(q: Queryable, table: T, row: RowPatch<T>) {
  const w = new WriteSet();
  w.insert(table, row);
  await w.run(q);
}

/** A new order as written at creation: with its transaction, that transaction's `new` event and its expiry job. */
export interface NewOrder {
  order: OrderRow;
  transaction?: TransactionRow;
  event?: EventRow & { project_id: string };
  job?: { project_id: string; kind: string; ref_id: string; run_at: Date; payload: Record<string, unknown> };
}

/** The columns each table of a NewOrder is written with; the others keep their defaults. */
const NEW_ORDER_COLUMNS: {
  orders: Array<keyof OrderRow>;
  transactions: Array<keyof TransactionRow>;
  events: Array<keyof NonNullable<NewOrder['event']>>;
  jobs: Array<keyof NonNullable<NewOrder['job']>>;
} = {
  orders: [
    'id',
    'project_id',
    'merchant_id',
    'kind',
    'status',
    'merchant_order_id',
    'description',
    'currency',
    'amount',
    'flags',
    'customer_email',
    'merchant_customer_id',
    'related_order_id',
    'payment_link_id',
    'refunded_amount',
    'body',
    'created',
    'modified',
    'completed',
  ],
  transactions: [
    'id',
    'project_id',
    'order_id',
    'status',
    'payment_method',
    'payment_method_brand',
    'currency',
    'amount',
    'credit_debit',
    'capture_mode',
    'transaction_type',
    'expiration_period',
    'expires_at',
    'is_capturable',
    'authorized_amount',
    'captured_amount',
    'voided_amount',
    'refunded_amount',
    'charged_back_amount',
    'reason',
    'of_transaction_id',
    'setup_token',
    'setup_token_used',
    'details',
    'outcomes',
    'fee_currency',
    'fee_amount',
    'settlement_currency',
    'settlement_amount',
    'settled',
    'created',
    'modified',
  ],
  events: ['id', 'project_id', 'transaction_id', 'event', 'source', 'occurred', 'noticed'],
  jobs: ['project_id', 'kind', 'ref_id', 'run_at', 'payload'],
};

/**
 * One statement for any number of new orders: each table's rows go in as one JSON array
 * (jsonb_populate_recordset types each field by the table's own column), as sibling CTEs, so
 * the statement's text is fixed and prepared once per connection. Foreign keys between the
 * CTEs hold: they are checked at the statement's end.
 */
const INSERT_NEW_ORDERS = (() => {
  const insert = (table: keyof typeof NEW_ORDER_COLUMNS, param: number) => {
    const cols = NEW_ORDER_COLUMNS[table].join(', ');
    return `INSERT INTO ${table} (${cols}) SELECT ${cols} FROM jsonb_populate_recordset(NULL::${table}, $${param}::jsonb)`;
  };
  return `WITH o AS (${insert('orders', 1)}), t AS (${insert('transactions', 2)}), e AS (${insert('events', 3)}) ${insert('jobs', 4)}`;
})();

/** Inserts new orders, all or none. */
async function insertNewOrders(q: Queryable, batch: NewOrder[]) {
  const rows = (pick: (n: NewOrder) => object | undefined) => JSON.stringify(batch.flatMap((n) => pick(n) ?? []));
  const params = [rows((n) => n.order), rows((n) => n.transaction), rows((n) => n.event), rows((n) => n.job)];
  // Planning this statement costs more than running it: prepared once per connection.
  await q.query(INSERT_NEW_ORDERS, params, { prepare: 'insert_new_orders' });
}

const writers = new WeakMap<Db, (n: NewOrder) => Promise<void>>();

/**
 * Inserts a new order; concurrent calls on one store are grouped into one statement (coalesce.ts).
 * Two batches at most run at once, so order creation leaves the rest of the pool to other work.
 */
export function insertNewOrder(db: Db, n: NewOrder): Promise<void> {
  // Inside a request's own transaction (an Idempotency-Key): written there, alone. Grouped, the
  // batch would run in whichever request's transaction started it, and a 201 could come back
  // for an order another request's transaction had not committed (or rolled back).
  if (db.held()) return insertNewOrders(db, [n]);
  let write = writers.get(db);
  if (!write) writers.set(db, (write = coalescer((batch: NewOrder[]) => insertNewOrders(db, batch), { maxInFlight: 2, maxBatch: 64 })));
  return write(n);
}

/** UPDATE ... WHERE id = $1 of the given columns: the named updates below, and links.ts. */
export async function updateRow<T extends TableName>(q: Queryable, table: T, id: string, patch: RowPatch<T>) {
  if (!Object.values(patch).some((v) => v !== undefined)) return;
  const w = new WriteSet();
  w.update(table, id, patch);
  await w.run(q);
}

export const insertTransaction = (q: Queryable, t: Partial<TransactionRow>) => insertRow(q, 'transactions', t);

// ---- named updates: each says which columns a use case may change -------------------------

/** The merchant's own fields of an order (PUT while not final). */
export const setOrderDetails = (
  q: Queryable,
  id: string,
  d: Pick<OrderRow, 'description' | 'merchant_order_id' | 'body' | 'modified'> &
    Partial<Pick<OrderRow, 'customer_email' | 'merchant_customer_id'>>,
) => updateRow(q, 'orders', id, d);

/** The customer a wallet handed over (the billing address), in the order's body, before its transaction starts. */
export const setOrderCustomer = (q: Queryable, id: string, d: Pick<OrderRow, 'body' | 'modified'>) => updateRow(q, 'orders', id, d);

/** What may change with a transaction's status: the outcome, the card seen, the money the move settles. */
export type StatusColumns = Partial<
  Pick<TransactionRow, 'reason' | 'payment_method_brand' | 'details' | 'outcomes' | 'captured_amount' | 'voided_amount' | 'is_capturable'>
>;

export const markSettled = (q: Queryable, id: string, now: Date) => updateRow(q, 'transactions', id, { settled: now, modified: now });

export async function findOrder(q: Queryable, projectId: ProjectId, id: string, lock = false): Promise<OrderRow | undefined> {
  return (
    await q.query<OrderRow>(`SELECT * FROM orders WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [projectId, id])
  )[0];
}

export async function transactionsOf(q: Queryable, projectId: ProjectId, orderIds: string[]): Promise<TransactionRow[]> {
  if (!orderIds.length) return [];
  return q.query<TransactionRow>('SELECT * FROM transactions WHERE project_id = $1 AND order_id = ANY($2::uuid[]) ORDER BY created, id', [
    projectId,
    orderIds,
  ]);
}

export async function findTransaction(
  q: Queryable,
  projectId: ProjectId,
  orderId: OrderId,
  id: string,
  lock = false,
): Promise<TransactionRow | undefined> {
  return (
    await q.query<TransactionRow>(
      `SELECT * FROM transactions WHERE project_id = $1 AND order_id = $2 AND id = $3${lock ? ' FOR UPDATE' : ''}`,
      [projectId, orderId, id],
    )
  )[0];
}

/** A transaction by id alone within a project (hosted pages and the vault know only that). */
export async function transactionById(q: Queryable, id: string, lock = false): Promise<TransactionRow | undefined> {
  return (await q.query<TransactionRow>(`SELECT * FROM transactions WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]))[0];
}

export async function orderById(q: Queryable, id: string): Promise<OrderRow | undefined> {
  return (await q.query<OrderRow>('SELECT * FROM orders WHERE id = $1', [id]))[0];
}

export async function eventsOf(q: Queryable, projectId: ProjectId, transactionIds: string[]): Promise<EventRow[]> {
  if (!transactionIds.length) return [];
  return q.query<EventRow>('SELECT * FROM events WHERE project_id = $1 AND transaction_id = ANY($2::uuid[]) ORDER BY seq', [
    projectId,
    transactionIds,
  ]);
}

export async function childOrdersOf(
  q: Queryable,
  projectId: ProjectId,
  orderIds: string[],
): Promise<Pick<OrderRow, 'id' | 'kind' | 'related_order_id'>[]> {
  if (!orderIds.length) return [];
  return q.query(
    'SELECT id, kind, related_order_id FROM orders WHERE project_id = $1 AND related_order_id = ANY($2::uuid[]) ORDER BY created, id',
    [projectId, orderIds],
  );
}

export async function insertEvent(q: Queryable, e: EventRow & { project_id: string }) {
  await q.query(
    'INSERT INTO events (id, project_id, transaction_id, event, source, occurred, noticed) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [e.id, e.project_id, e.transaction_id, e.event, e.source, e.occurred, e.noticed],
  );
}

/** Locks every transaction of an order, in id order (so concurrent cancels cannot deadlock). */
export async function lockTransactionsOfOrder(q: Queryable, projectId: ProjectId, orderId: OrderId) {
  await q.query('SELECT id FROM transactions WHERE project_id = $1 AND order_id = $2 ORDER BY id FOR UPDATE', [projectId, orderId]);
}

// the tables this module writes through WriteSet and the row helpers, with their row types
declare module '../db/writes.ts' {
  interface Tables {
    orders: OrderRow;
    transactions: TransactionRow;
    events: EventRow & { project_id: string };
    /** an order's status change for the webhook queue (migration 030) */
    outbox: { id: string; project_id: string; order_id: string; status: OrderStatus; created: Date };
  }
}
