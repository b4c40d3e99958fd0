import type { Queryable } from '../../store/db/db.ts';
import * as orders from '../../store/payments/orders.ts';
import type { Config } from '../../config.ts';
import type { EventRow, OrderRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderView, TransactionView } from '../../domain/schemas/order.ts';
import { SEALED, openHolderNames } from '../vault/holder-names.ts';
import { customerMessage } from '../../domain/customer-message.ts';
import { isFinalOrder } from '../../domain/status.ts';
import type { OrderId, ProjectId } from '../../domain/ids.ts';

/** URLs of the hosted pages, built from configuration only. */
const urls = (config: Config) => ({
  order: (orderId: OrderId) => `${config.publicBaseUrl}/pay/${orderId}/`,
  transaction: (orderId: OrderId, txnId: string) => `${config.publicBaseUrl}/pay/${orderId}/transactions/${txnId}/`,
});

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString().replace('Z', '+00:00') : undefined);

const OF_FIELD: Record<string, string> = {
  capture: 'capture_of_transaction_id',
  void: 'void_of_transaction_id',
  refund: 'refund_of_transaction_id',
  chargeback: 'chargeback_of_transaction_id',
  reversal: 'reversal_of_transaction_id',
};
const ORDER_OF_FIELD: Record<string, string> = {
  capture: 'capture_of_order_id',
  void: 'void_of_order_id',
  refund: 'refund_of_order_id',
  chargeback: 'chargeback_of_order_id',
  reversal: 'reversal_of_order_id',
};
const LIST_FIELD: Record<string, string> = { refund: 'refund_orders', chargeback: 'chargeback_orders', reversal: 'reversal_orders' };

function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined || o[k] === null) delete o[k];
  return o;
}

function renderTransaction(
  config: Config,
  order: OrderRow,
  t: TransactionRow,
  events: EventRow[],
  opts: RenderOptions = {},
): TransactionView {
  const details: Record<string, unknown> = { ...t.details };
  delete details[SEALED];
  const name = opts.holderNames?.get(t.id);
  if (name !== undefined) details.cardholder_name = name;
  if (opts.withSetupToken && t.setup_token) details.setup_token = t.setup_token;
  const view: Record<string, unknown> = {
    id: t.id,
    order_id: t.order_id,
    project_id: t.project_id,
    merchant_id: order.merchant_id,
    created: iso(t.created),
    modified: iso(t.modified),
    status: t.status,
    reason: t.reason,
    customer_message: customerMessage(t.status, t.reason, order.body?.customer?.locale),
    currency: t.currency,
    amount: t.amount,
    credit_debit: t.credit_debit,
    expiration_period: t.expiration_period,
    payment_method: t.payment_method,
    payment_method_brand: t.payment_method_brand,
    payment_method_details: details,
    payment_url: order.kind === 'payment' ? urls(config).transaction(order.id, t.id) : undefined,
    capture_mode: t.capture_mode,
    transaction_type: t.transaction_type,
    is_capturable: t.is_capturable,
    events: events.map((e) => ({ event: e.event, id: e.id, occurred: iso(e.occurred), noticed: iso(e.noticed), source: e.source })),
    outcomes: t.outcomes,
    ...(t.risk ? { risk: t.risk } : {}),
    flags: order.flags.includes('is-test') ? ['is-test'] : [],
    fee_currency: t.fee_currency,
    fee_amount: t.fee_amount,
    settlement_currency: t.settlement_currency,
    settlement_amount: t.settlement_amount,
  };
  if (t.of_transaction_id && OF_FIELD[order.kind]) view[OF_FIELD[order.kind]] = t.of_transaction_id;
  // compact drops the nulls the schema's optional fields leave out
  return compact(view) as TransactionView;
}

export interface RenderOptions {
  withSetupToken?: boolean;
  /** cardholder names opened (openHolderNames), by transaction id */
  holderNames?: Map<string, string>;
}

/** What rendering needs of the context: the master key opens the cardholder names. */
export type ViewCtx = { config: Config; masterKey?: Buffer };

/** The order as the API shows it, with transactions, events and linked orders. */
export async function loadOrderView(
  q: Queryable,
  ctx: ViewCtx,
  projectId: ProjectId,
  orderId: OrderId,
  opts: RenderOptions = {},
): Promise<OrderView | undefined> {
  const { config } = ctx;
  const order = await orders.findOrder(q, projectId, orderId);
  if (!order) return undefined;
  const txns = await orders.transactionsOf(q, projectId, [orderId]);
  const events = await orders.eventsOf(
    q,
    projectId,
    txns.map((t) => t.id),
  );
  const children = await orders.childOrdersOf(q, projectId, [orderId]);
  const holderNames = await openHolderNames(q, ctx.masterKey, txns);
  return renderOrder(config, order, txns, events, children, { ...opts, holderNames });
}

export function renderOrder(
  config: Config,
  order: OrderRow,
  txns: TransactionRow[],
  events: EventRow[],
  children: Pick<OrderRow, 'id' | 'kind'>[],
  opts: RenderOptions = {},
): OrderView {
  const b = order.body ?? {};
  const view: Record<string, unknown> = {
    id: order.id,
    project_id: order.project_id,
    merchant_id: order.merchant_id,
    merchant_order_id: order.merchant_order_id,
    merchant_name: b.merchant_name,
    description: order.description,
    currency: order.currency,
    amount: order.amount,
    status: order.status,
    flags: order.flags,
    created: iso(order.created),
    modified: iso(order.modified),
    completed: iso(order.completed),
    expiration_period: b.expiration_period,
    payment_methods: b.payment_methods,
    return_url: b.return_url,
    failure_url: b.failure_url,
    webhook_url: b.webhook_url,
    customer: b.customer,
    client: b.client,
    extra: b.extra,
    order_lines: b.order_lines,
    // Where the customer pays: orders created without a transaction keep it; one created with a
    // transaction has it while the customer can still pay (the page shows that transaction's form).
    order_url:
      order.kind === 'payment' && (b.order_url !== false || !isFinalOrder(order.status)) ? urls(config).order(order.id) : undefined,
    related_order_id: order.related_order_id,
    related_payment_link_id: order.payment_link_id,
    transactions: txns.map((t) =>
      renderTransaction(
        config,
        order,
        t,
        events.filter((e) => e.transaction_id === t.id),
        opts,
      ),
    ),
  };
  if (order.kind === 'payment') view.refunded_amount = order.refunded_amount;
  if (order.related_order_id && ORDER_OF_FIELD[order.kind]) view[ORDER_OF_FIELD[order.kind]] = order.related_order_id;
  if (children.length) {
    view.related_orders = children.map((c) => c.id);
    for (const [kind, field] of Object.entries(LIST_FIELD)) {
      const ids = children.filter((c) => c.kind === kind).map((c) => c.id);
      if (ids.length) view[field] = ids;
    }
  }
  return compact(view) as OrderView;
}
