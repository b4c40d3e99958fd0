import { randomUUID } from 'node:crypto';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import {
  PaymentMethodDetailsInput,
  READ_ONLY_FIELDS,
  type OrderInput,
  type OrderUpdate,
  type TransactionInput,
} from '../../domain/schemas/order.ts';
import { DomainError, invalid, notFound } from '../../domain/errors.ts';
import { isCurrency } from '../../domain/currency.ts';
import { addDuration, isPositiveDuration } from '../../domain/duration.ts';
import { customerProblem, missingBilling } from '../../domain/customer.ts';
import { activeMethods, methodAccepts, resolveMethod, settingsOf, type MethodAliases } from '../../domain/project.ts';
import { isPaymentMethod, type PaymentMethod, CARD, isSandboxMethod, isWallet } from '../../domain/payment-methods.ts';
import { deriveOrderStatus, isCancellable, isFinalOrder } from '../../domain/status.ts';
import { checkMethodRules, methodStart } from './methods/rules.ts';
import { loadOrderView, renderOrder } from './order-view.ts';
import { unchanged } from '../../domain/read-only.ts';
import { moveTransaction, newEventRow, refreshOrderStatus, setOrderStatus } from './transitions.ts';
import { canTryAgain } from './methods/attempts.ts';
import { authorizationInFlight } from '../../store/payments/attempts.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { checkOrderUrls } from '../platform/public-urls.ts';
import { newId, type OrderId } from '../../domain/ids.ts';
import type { OrderBody, OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import { orderExpiresAt } from '../../domain/order-page.ts';

/** The wallet methods (wallet-a-pay, wallet-b-pay): the one spelling of "is a wallet" here. */

/** Rules of an order body that its schema cannot express. Throws the first one broken. */
export function checkOrderInput(project: ProjectRow, input: OrderInput) {
  if (!isCurrency(input.currency)) throw invalid('currency', `currency ${input.currency} is not an ISO 4217 currency`);
  if (input.expiration_period !== undefined && !isPositiveDuration(input.expiration_period))
    throw invalid('expiration_period', 'expiration_period must be a positive ISO 8601 duration');
  if (input.customer) {
    const p = customerProblem(input.customer);
    if (p) throw invalid(p.field, p.message);
  }
  const settings = settingsOf(project.settings);
  input.payment_methods?.forEach((m, i) => checkMethod(settings, m, input.currency, `payment_methods[${i}]`));
  const t = input.transactions?.[0];
  if (t) {
    checkMethod(settings, t.payment_method, input.currency, 'transactions[0].payment_method');
    checkDetails(t.payment_method_details, 'transactions[0].payment_method_details');
    checkMethodRules(t, input, 'transactions[0].payment_method');
    if (t.expiration_period !== undefined && !isPositiveDuration(t.expiration_period))
      throw invalid('transactions[0].expiration_period', 'expiration_period must be a positive ISO 8601 duration');
    if (t.capture_mode && t.payment_method !== CARD && !isWallet(t.payment_method) && !isSandboxMethod(t.payment_method))
      throw invalid('transactions[0].capture_mode', `capture_mode is not supported for ${t.payment_method}`);
    checkTransactionInformation(settings, t, input);
  }
}

function checkMethod(settings: ReturnType<typeof settingsOf>, method: string, currency: string, field: string) {
  if (!isPaymentMethod(method)) throw invalid(field, `payment method ${method} is not known`);
  if (!activeMethods(settings).includes(method))
    throw new DomainError('Forbidden', `payment method ${method} is not active in this project`, field);
  if (!methodAccepts(settings, method, currency))
    throw new DomainError('Forbidden', `payment method ${method} does not accept ${currency} in this project`, field);
}

const DETAILS = Object.keys(PaymentMethodDetailsInput.properties);

/** After the method: details it does not take are refused by name (the schema leaves them open). */
function checkDetails(details: Record<string, unknown> | undefined, field: string) {
  const unknown = Object.keys(details ?? {}).find((k) => !DETAILS.includes(k));
  if (unknown) throw invalid(`${field}.${unknown}`, `${field}.${unknown} is not a known field`);
}

/**
 * The order with its payment methods as Tender names them: an operator's alias (such as a
 * wallet's own name, PAYMENT_METHOD_ALIASES) becomes the method it stands for.
 */
export function withMethodNames<T extends Pick<OrderInput, 'payment_methods' | 'transactions'>>(aliases: MethodAliases, input: T): T {
  const out = { ...input };
  if (input.payment_methods) out.payment_methods = [...new Set(input.payment_methods.map((m) => resolveMethod(aliases, m)))];
  if (input.transactions)
    out.transactions = input.transactions.map((t) => ({ ...t, payment_method: resolveMethod(aliases, t.payment_method) }));
  return out;
}

/** AFT needs a receiver and a billing address; wallets need billing where the project requires it. */
function checkTransactionInformation(settings: ReturnType<typeof settingsOf>, t: TransactionInput, input: OrderInput) {
  const missing: string[] = [];
  if (t.transaction_type === 'aft') {
    if (!t.payment_method_details?.receiver_account_number) missing.push('transactions[0].payment_method_details.receiver_account_number');
    if (!t.payment_method_details?.receiver_account_number_type)
      missing.push('transactions[0].payment_method_details.receiver_account_number_type');
    missing.push(...missingBilling(input.customer).map((f) => `customer.${f}`));
  } else if (isWallet(t.payment_method) && settings.wallet_billing_required) {
    missing.push(...missingBilling(input.customer).map((f) => `customer.${f}`));
  }
  if (missing.length)
    throw new DomainError(
      'MissingInformationToCreateTransaction',
      `missing information to create the transaction: ${missing.join(', ')}`,
      missing[0],
    );
}

/** Builds the transaction row of a new payment transaction. */
function newTransactionRow(project: ProjectRow, order: OrderRow, t: TransactionInput, now: Date): TransactionRow {
  const settings = settingsOf(project.settings);
  const id = newId();
  // the methods of domain/payment-methods.ts: their starting status, details and capture mode
  const start = methodStart(t.payment_method, order.id, id, t.payment_method_details);
  const expiration = t.expiration_period ?? start?.expiration ?? settings.default_expiration_period;
  const details: Record<string, unknown> = { ...start?.details };
  if (t.payment_method_details?.receiver_account_number) details.receiver_account_number = t.payment_method_details.receiver_account_number;
  if (t.payment_method_details?.receiver_account_number_type)
    details.receiver_account_number_type = t.payment_method_details.receiver_account_number_type;
  return {
    id,
    project_id: project.id,
    order_id: order.id,
    status: start?.status ?? 'new',
    payment_method: start?.storeAs ?? t.payment_method,
    payment_method_brand: null,
    currency: order.currency,
    amount: order.amount,
    credit_debit: 'credit',
    capture_mode: t.capture_mode ?? start?.capture_mode ?? null,
    transaction_type: t.transaction_type ?? null,
    expiration_period: expiration,
    expires_at: addDuration(now, expiration),
    ...orders.NO_MONEY_MOVED,
    reason: null,
    of_transaction_id: null,
    setup_token: (start?.storeAs ?? t.payment_method) === CARD || isWallet(t.payment_method) ? randomUUID() : null,
    setup_token_used: null,
    details,
    outcomes: null,
    fee_currency: null,
    fee_amount: null,
    settlement_currency: null,
    settlement_amount: null,
    settled: null,
    authorized: null,
    capture_before: null,
    created: now,
    modified: now,
  };
}

/** A new payment transaction's rows: the transaction, its `new` event and its expiry job. */
function newTransactionRows(project: ProjectRow, order: OrderRow, t: TransactionInput, now: Date) {
  const transaction = newTransactionRow(project, order, t, now);
  return {
    transaction,
    event: newEventRow(transaction, transaction.status, now),
    job: { project_id: project.id, kind: 'expire_transaction', ref_id: transaction.id, run_at: transaction.expires_at!, payload: {} },
  };
}

/** Inserts a payment transaction with its `new` event and its expiry job, in the caller's transaction. */
async function addTransaction(
  q: Parameters<typeof orders.insertTransaction>[0],
  project: ProjectRow,
  order: OrderRow,
  t: TransactionInput,
  now: Date,
) {
  const { transaction, event, job } = newTransactionRows(project, order, t, now);
  await orders.insertTransaction(q, transaction);
  await orders.insertEvent(q, event);
  await schedule(q, job);
  return transaction;
}

export interface CreateOrderExtras {
  paymentLinkId?: string;
}

/** The rows of a new order, as one NewOrder: the order and, when one was sent, its transaction with the `new` event and the expiry job. */
export function newOrderRows(project: ProjectRow, input: OrderInput, now: Date, extras: CreateOrderExtras = {}): orders.NewOrder {
  const { currency, amount, merchant_order_id, description, transactions, customer, ...rest } = input;
  const order: OrderRow = {
    id: newId(),
    project_id: project.id,
    merchant_id: project.merchant_id,
    kind: 'payment',
    status: 'new',
    merchant_order_id: merchant_order_id ?? null,
    description: description ?? null,
    currency,
    amount,
    flags: project.mode === 'test' ? ['is-test'] : [],
    customer_email: customer?.email_address ?? null,
    merchant_customer_id: customer?.merchant_customer_id ?? null,
    related_order_id: null,
    payment_link_id: extras.paymentLinkId ?? null,
    refunded_amount: 0,
    body: { ...rest, customer, order_url: !transactions?.length },
    created: now,
    modified: now,
    completed: null,
  };
  // Written with the order, the expiry job sends no NOTIFY: it is due a whole expiration_period
  // ahead, found by the workers' poll, and PostgreSQL serialises the commits of all that notify.
  // Without a transaction the order itself expires (its own period, else the project's default).
  if (transactions?.[0]) {
    const rows = newTransactionRows(project, order, transactions[0], now);
    // a bank transfer starts pending: its order is processing from the start
    if (rows.transaction.status !== 'new') order.status = deriveOrderStatus('new', [rows.transaction.status]);
    return { order, ...rows };
  }
  return {
    order,
    job: {
      project_id: project.id,
      kind: 'expire_order',
      ref_id: order.id,
      run_at: orderExpiresAt(order, settingsOf(project.settings)),
      payload: {},
    },
  };
}

export async function createOrder(ctx: Ctx, project: ProjectRow, sent: OrderInput, extras: CreateOrderExtras = {}) {
  const input = withMethodNames(ctx.config.paymentMethodAliases, sent);
  checkOrderInput(project, input);
  await checkOrderUrls(ctx, project, input); // live projects: no webhook or return URL into private networks
  // The hot path: one statement for all the rows (grouped with other requests' new orders under
  // load), and the answer rendered from those rows, not read back.
  const rows = newOrderRows(project, input, nowFor(project), extras);
  await orders.insertNewOrder(ctx.db, rows);
  const { order, transaction, event } = rows;
  return renderOrder(ctx.config, order, transaction ? [transaction] : [], event ? [event] : [], [], { withSetupToken: true });
}

export async function getOrder(ctx: Ctx, project: ProjectRow, orderId: OrderId) {
  const view = await loadOrderView(ctx.db, ctx, project.id, orderId);
  if (!view) throw notFound('order');
  return view;
}

/**
 * PUT: the order as GET returns it, or any part of it. The merchant's fields it holds replace
 * theirs (validated as on creation); read-only fields are accepted when unchanged and refused by
 * name when changed; fields it leaves out keep their value. Only while the order is not final.
 */
export async function updateOrder(ctx: Ctx, project: ProjectRow, orderId: OrderId, input: OrderUpdate) {
  if (input.customer) {
    const p = customerProblem(input.customer);
    if (p) throw invalid(p.field, p.message);
  }
  await checkOrderUrls(ctx, project, input);
  return ctx.db.tx(async (q) => {
    const order = await orders.findOrder(q, project.id, orderId, true);
    if (!order) throw notFound('order');
    if (isFinalOrder(order.status))
      throw new DomainError('ValidationError', `order is ${order.status} and can no longer be changed`, undefined, 'conflict');
    const current = (await loadOrderView(q, ctx, project.id, order.id))!;
    // what the service keeps up to date is ignored: a client's copy of it may be stale (the plugin SDK's updateOrder)
    const changed = READ_ONLY_FIELDS.find((f) => input[f] !== undefined && !SERVER_KEPT.has(f) && !unchanged(input[f], current[f]));
    if (changed) throw invalid(changed, `${changed} is read-only and can not be changed`);
    const { description, merchant_order_id, customer, return_url, failure_url, webhook_url, extra, order_lines } = input;
    const sent = Object.entries({ customer, return_url, failure_url, webhook_url, extra, order_lines }).filter(([, v]) => v !== undefined);
    const body: OrderBody = { ...order.body, ...Object.fromEntries(sent) };
    await orders.setOrderDetails(q, order.id, {
      description: description ?? order.description,
      merchant_order_id: merchant_order_id ?? order.merchant_order_id,
      ...(customer ? { customer_email: customer.email_address ?? null, merchant_customer_id: customer.merchant_customer_id ?? null } : {}),
      body,
      modified: nowFor(project),
    });
    return (await loadOrderView(q, ctx, project.id, order.id))!;
  });
}

/** Read-only fields the service changes as the order moves on: a PUT ignores them, whatever their value. */
const SERVER_KEPT = new Set<string>(['modified', 'status', 'transactions', 'flags', 'refunded_amount', 'completed']);

/** DELETE: cancels an order whose transaction has not reached the acquirer. */
export async function cancelOrder(ctx: Ctx, project: ProjectRow, orderId: OrderId) {
  return ctx.db.tx(async (q) => {
    // Transactions before their order: the lock order of authorization and expiry, so no deadlock.
    await orders.lockTransactionsOfOrder(q, project.id, orderId);
    const order = await orders.findOrder(q, project.id, orderId, true);
    if (!order) throw notFound('order');
    const now = nowFor(project);
    const txns = await orders.transactionsOf(q, project.id, [order.id]);
    if (order.kind !== 'payment' || isFinalOrder(order.status) || txns.some((t) => !isCancellable(t.status)))
      throw new DomainError('CanNotCancelTransaction', `order in status ${order.status} can not be cancelled`);
    // a pending card payment whose authorization is under way at the acquirer (read once the locks are held)
    if (
      txns.some((t) => t.status === 'pending') &&
      (await authorizationInFlight(
        q,
        project.id,
        txns.map((t) => t.id),
      ))
    )
      throw new DomainError('CanNotCancelTransaction', 'the transaction is being authorized at the acquirer: it can not be cancelled');
    if (txns.length === 0) await setOrderStatus(ctx, q, order, 'cancelled', now);
    for (const t of txns) await moveTransaction(ctx, q, t, 'cancelled', now, { reason: 'cancelled by merchant', source: 'merchant' });
    return (await loadOrderView(q, ctx, project.id, order.id))!;
  });
}

/** POST /v1/orders/{id}/transactions/: starts the one transaction of an order created without one. */
export async function startTransaction(
  ctx: Ctx,
  project: ProjectRow,
  orderId: OrderId,
  sent: TransactionInput,
  opts: { retry?: boolean } = {},
) {
  const input = { ...sent, payment_method: resolveMethod(ctx.config.paymentMethodAliases, sent.payment_method) };
  return ctx.db.tx(async (q) => {
    const order = await orders.findOrder(q, project.id, orderId, true);
    if (!order) throw notFound('order');
    const txns = await orders.transactionsOf(q, project.id, [order.id]);
    // Through the API an order holds one payment attempt; the hosted page (retry) may add another
    // after a failed or cancelled one, until the order expires (methods/attempts.ts says when).
    const again = opts.retry && canTryAgain(order, txns);
    if (!again && txns.length) throw new DomainError('TransactionAlreadyStarted', 'this order already has a transaction');
    // Past its expiry the order takes no transaction, whether or not its expire_order job has run.
    if (order.status === 'expired' || nowFor(project) >= orderExpiresAt(order, settingsOf(project.settings)))
      throw new DomainError('TransactionAlreadyStarted', 'this order has expired');
    if (!again && isFinalOrder(order.status)) throw new DomainError('TransactionAlreadyStarted', 'this order already has a transaction');
    try {
      checkOrderInput(project, {
        currency: order.currency,
        amount: order.amount,
        customer: order.body.customer,
        order_lines: order.body.order_lines,
        transactions: [input],
      });
    } catch (err) {
      // The body here is the transaction itself: name its fields as sent (payment_method, not transactions[0].payment_method).
      if (!(err instanceof DomainError) || !err.field) throw err;
      const own = (s: string) => s.replaceAll('transactions[0].', '');
      throw new DomainError(err.type, own(err.message), own(err.field), err.kind);
    }
    if (again && order.status !== 'new') await setOrderStatus(ctx, q, order, 'new', nowFor(project));
    const txn = await addTransaction(q, project, order, input, nowFor(project));
    if (txn.status !== 'new') await refreshOrderStatus(ctx, q, project.id, order.id, nowFor(project));
    return (await loadOrderView(q, ctx, project.id, order.id, { withSetupToken: true }))!;
  });
}

export type { PaymentMethod };
