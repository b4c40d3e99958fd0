import type { WriteSet } from '../db/writes.ts';
import type { EventRow, OrderRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderStatus } from '../../domain/status.ts';
import type { Leg } from '../../domain/ledger.ts';
import { journalRows, type JournalHead } from './ledger.ts';
import type { StatusColumns } from './orders.ts';
import './orders.ts';

/**
 * What a payment step changes, said in the domain's terms and gathered in the step's one
 * statement (store/db/writes.ts): the services plan with these and never name a table or column
 * of their own. Each function is one kind of change; the WriteSet merges patches of one row.
 */

/** The transaction's columns a step may change besides those of its status: its money counters and figures. */
export type TransactionChange = StatusColumns &
  Partial<
    Pick<
      TransactionRow,
      | 'status'
      | 'modified'
      | 'authorized_amount'
      | 'refunded_amount'
      | 'charged_back_amount'
      | 'authorized'
      | 'capture_before'
      | 'fee_currency'
      | 'fee_amount'
      | 'settlement_currency'
      | 'settlement_amount'
      | 'settled'
    >
  >;

export const changeTransaction = (w: WriteSet, id: string, change: TransactionChange) => w.update('transactions', id, change);

/** An order's status, flags and refunded amount. */
export const changeOrder = (
  w: WriteSet,
  id: string,
  change: Partial<Pick<OrderRow, 'status' | 'modified' | 'completed' | 'flags' | 'refunded_amount'>>,
) => w.update('orders', id, change);

/** Events of a transaction's history. */
export const addEvents = (w: WriteSet, events: Array<EventRow & { project_id: string }>) => w.insertMany('events', events);

/**
 * An order's status change for the webhook queue: the outbox row, named so that what the status
 * hooks write in the same statement (a delivery) can refer to it (w.outbox).
 */
export function addOutbox(w: WriteSet, order: Pick<OrderRow, 'id' | 'project_id'>, status: OrderStatus, now: Date) {
  w.outbox = w.name('outbox');
  w.insert('outbox', { project_id: order.project_id, order_id: order.id, status, created: now }, { name: w.outbox, returning: 'id' });
}

/**
 * A new order with its one transaction, as they will be stored. Foreign keys (the outbox row
 * and the transaction refer to the order) are checked at the statement's end.
 */
export function addOrder(w: WriteSet, order: OrderRow, txn: TransactionRow) {
  w.insert('orders', order);
  w.insert('transactions', txn);
}

/** One ledger journal of a movement (nothing when there are no legs). */
export const addJournal = (w: WriteSet, head: JournalHead, legs: Leg[]) => w.insertMany('ledger_entries', journalRows(head, legs));
