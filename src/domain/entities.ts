import type { MerchantId, OrderId, ProjectId, TransactionId } from './ids.ts';
import type { OrderStatus, TransactionStatus } from './status.ts';
import type { ProjectSettings } from './project.ts';
import type { OrderInput } from './schemas/order.ts';

/**
 * The entities of Tender as every layer names them: a row of their table, field for field
 * (store/ reads and writes them; services, routes and pages take them from here).
 */

/** A merchant's project: its API key, settings and (test projects) clock. */
export interface ProjectRow {
  id: ProjectId;
  merchant_id: MerchantId;
  name: string;
  mode: 'test' | 'live';
  webhook_url: string | null;
  settings: Partial<ProjectSettings>;
  clock_offset_ms: number;
  created: Date;
}

export type OrderKind = 'payment' | 'capture' | 'void' | 'refund' | 'chargeback' | 'reversal';

/** An order: a payment, or an operation on one (capture, void, refund, chargeback, reversal). */
export interface OrderRow {
  id: OrderId;
  project_id: ProjectId;
  merchant_id: MerchantId;
  kind: OrderKind;
  status: OrderStatus;
  merchant_order_id: string | null;
  description: string | null;
  currency: string;
  amount: number;
  flags: string[];
  customer_email: string | null;
  merchant_customer_id: string | null;
  related_order_id: string | null;
  payment_link_id: string | null;
  refunded_amount: number;
  body: OrderBody;
  created: Date;
  modified: Date;
  completed: Date | null;
}

/**
 * What an order keeps of its input beyond its columns (orders.body, JSON): the rest of a payment's
 * OrderInput, and whether its payment page stays open (order_url); an order made from another
 * (a capture, a refund) keeps what its own input said.
 */
export type OrderBody = Partial<Omit<OrderInput, 'currency' | 'amount' | 'merchant_order_id' | 'description' | 'transactions'>> & {
  order_url?: boolean;
};

/** A transaction of an order: one attempt to move its money with a payment method. */
export interface TransactionRow {
  id: TransactionId;
  project_id: ProjectId;
  order_id: OrderId;
  status: TransactionStatus;
  payment_method: string | null;
  payment_method_brand: string | null;
  currency: string;
  amount: number;
  credit_debit: 'credit' | 'debit';
  capture_mode: 'manual' | 'delayed' | null;
  transaction_type: string | null;
  expiration_period: string;
  expires_at: Date | null;
  is_capturable: boolean;
  authorized_amount: number;
  captured_amount: number;
  voided_amount: number;
  refunded_amount: number;
  charged_back_amount: number;
  reason: string | null;
  of_transaction_id: string | null;
  setup_token: string | null;
  setup_token_used: Date | null;
  details: Record<string, unknown>;
  outcomes: Record<string, unknown> | null;
  fee_currency: string | null;
  fee_amount: number | null;
  settlement_currency: string | null;
  settlement_amount: number | null;
  settled: Date | null;
  created: Date;
  modified: Date;
  /** when the money was authorized, and until when it can be captured (null before, or when not a card's) */
  authorized: Date | null;
  capture_before: Date | null;
  /** the velocity limits' decision on a screened card transaction (docs/risk.md) */
  risk?: Record<string, unknown> | null;
}

/** A line of a transaction's history. */
export interface EventRow {
  id: string;
  transaction_id: string;
  event: string;
  source: string;
  occurred: Date;
  noticed: Date;
}

/** Due work: one job per kind and reference, run when due on the project's clock. */
export interface JobRow {
  id: number;
  project_id: string;
  kind: string;
  ref_id: string;
  payload: Record<string, unknown>;
  run_at: Date;
  attempts: number;
}
