import type { Queryable } from '../db/db.ts';
import type { MoneyTxn } from '../../domain/money-state.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** Reads of the portal's money view: payment orders with their transactions' money counters. */

export interface PaymentMoneyRow extends MoneyTxn {
  order_id: string;
  order_status: string;
  currency: string;
  order_created: Date;
  /** null for an order without a transaction */
  txn_created: Date | null;
  payment_method: string | null;
  payment_method_brand: string | null;
}

const COLUMNS = `o.id AS order_id, o.status AS order_status, o.currency, o.created AS order_created,
  t.created AS txn_created, t.status, t.reason, t.credit_debit, t.capture_mode, t.is_capturable, t.payment_method, t.payment_method_brand,
  coalesce(t.authorized_amount, 0)::bigint AS authorized_amount, coalesce(t.captured_amount, 0)::bigint AS captured_amount,
  coalesce(t.voided_amount, 0)::bigint AS voided_amount, coalesce(t.refunded_amount, 0)::bigint AS refunded_amount,
  coalesce(t.charged_back_amount, 0)::bigint AS charged_back_amount`;

/** The payment orders `orderIds` of the project, one row per transaction (or one without), oldest transaction first. */
export async function paymentMoney(q: Queryable, projectId: ProjectId, orderIds: string[]): Promise<PaymentMoneyRow[]> {
  if (!orderIds.length) return [];
  return q.query<PaymentMoneyRow>(
    `SELECT ${COLUMNS} FROM orders o LEFT JOIN transactions t ON t.order_id = o.id AND t.project_id = o.project_id
     WHERE o.project_id = $1 AND o.id = ANY($2::uuid[]) AND o.kind = 'payment' ORDER BY o.id, t.created, t.id`,
    [projectId, orderIds],
  );
}

/** Every payment order created in [from, to), one row per transaction (or one without). */
export async function paymentMoneyBetween(q: Queryable, projectId: ProjectId, from: Date, to: Date): Promise<PaymentMoneyRow[]> {
  return q.query<PaymentMoneyRow>(
    `SELECT ${COLUMNS} FROM orders o LEFT JOIN transactions t ON t.order_id = o.id AND t.project_id = o.project_id
     WHERE o.project_id = $1 AND o.kind = 'payment' AND o.created >= $2 AND o.created < $3 ORDER BY o.id, t.created, t.id`,
    [projectId, from, to],
  );
}
