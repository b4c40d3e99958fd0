import type { Ctx } from '../platform/context.ts';
import { isUuid, type OrderId } from '../../domain/ids.ts';
import { nowFor } from '../platform/context.ts';
import * as orders from '../../store/payments/orders.ts';
import { findProject } from '../../store/platform/projects.ts';
import { activeMethods, methodAccepts, settingsOf, type ProjectSettings } from '../../domain/project.ts';
import { type PaymentMethod, CARD, PAY_NOW, isSandboxMethod, methodProblem } from '../../domain/payment-methods.ts';
import { orderExpiresAt } from '../../domain/order-page.ts';
import { canTryAgain } from './methods/attempts.ts';
import { brandRefused } from './methods/rules.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import { startTransaction } from './orders.ts';
import { storeCardForTransaction } from '../vault/cards.ts';
import { startCardPayment } from './card.ts';
import { setOrderStatus } from './transitions.ts';
import { detectBrands, luhnValid } from '../../domain/card.ts';
import type { OrderRow, ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { Shopper } from '../risk/screen.ts';

/**
 * Use cases behind the hosted payment pages (src/http/pay): what a page shows, and paying
 * an order by card from the page. The pages hold no rules of their own.
 */

/** The vault and the acquirer need the master key besides the usual context. */

export interface Checkout {
  project: ProjectRow;
  order: OrderRow;
  /** the order's payment attempts, oldest first (an order holds at most one) */
  transactions: TransactionRow[];
  /** the methods this page offers: active in the project, wanted by the order, accepting its currency */
  methods: PaymentMethod[];
  merchantName: string;
  now: Date;
}

/** The payment methods of the hosted page: the project's active ones, filtered by the order. */
function offeredMethods(settings: ProjectSettings, order: Pick<OrderRow, 'currency' | 'amount' | 'body'>): PaymentMethod[] {
  const wanted: unknown = order.body?.payment_methods;
  const list = Array.isArray(wanted) && wanted.length ? (wanted as string[]) : undefined;
  // a method of payment-methods.ts only where the order meets its rules (amount, BNPL's order lines and address)
  const usable = (m: PaymentMethod) =>
    m === PAY_NOW ||
    !isSandboxMethod(m) ||
    !methodProblem(
      m,
      { currency: order.currency, amount: order.amount, customer: order.body?.customer, order_lines: order.body?.order_lines },
      'm',
    );
  return activeMethods(settings).filter((m) => (!list || list.includes(m)) && methodAccepts(settings, m, order.currency) && usable(m));
}

/** Everything a hosted page of the order shows; undefined for an unknown id or a non-payment order. */
export async function loadCheckout(ctx: Ctx, orderId: OrderId): Promise<Checkout | undefined> {
  if (!isUuid(orderId)) return undefined;
  const order = await orders.orderById(ctx.db, orderId);
  if (!order || order.kind !== 'payment') return undefined;
  const project = await findProject(ctx.db, order.project_id);
  if (!project) return undefined;
  const transactions = (await orders.transactionsOf(ctx.db, project.id, [order.id])).filter((t) => t.credit_debit === 'credit');
  return {
    project,
    order,
    transactions,
    methods: offeredMethods(settingsOf(project.settings), order),
    merchantName: (order.body?.merchant_name as string | undefined) || project.name,
    now: nowFor(project),
  };
}

export const transactionOf = (c: Checkout, id: string) => c.transactions.find((t) => t.id === id.toLowerCase());

/** A card transaction the customer can still enter a card for. */
export const isOpenCardTransaction = (t: TransactionRow | undefined): boolean =>
  !!t && t.payment_method === CARD && t.status === 'new' && !t.setup_token_used;

export type Outcome = 'open' | 'pending' | 'paid' | 'failed' | 'cancelled' | 'expired';

/** Where the order stands, in the customer's terms, with the reason of a failure. */
export function outcomeOf(c: Checkout): { outcome: Outcome; reason?: string; transaction?: TransactionRow } {
  const transaction = c.transactions.at(-1);
  const reason = transaction?.reason ?? undefined;
  switch (c.order.status) {
    case 'completed':
      return { outcome: 'paid', transaction };
    case 'error':
      return { outcome: 'failed', reason, transaction };
    case 'cancelled':
      return { outcome: 'cancelled', transaction };
    case 'expired':
      return { outcome: 'expired', transaction };
    case 'processing':
    case 'see-transactions':
      return { outcome: 'pending', transaction };
  }
  if (!transaction && orderLapsed(c)) return { outcome: 'expired' };
  // an attempt failed and the order stayed open for another (its page): failed, as the customer sees it
  if (transaction && (transaction.status === 'declined' || transaction.status === 'error'))
    return { outcome: 'failed', reason, transaction };
  // a card already stored for the transaction: 3-D Secure is about to start
  if (transaction && transaction.payment_method === CARD && !isOpenCardTransaction(transaction)) return { outcome: 'pending', transaction };
  return { outcome: 'open', transaction };
}

/** After a failed or cancelled attempt, the hosted page offers the methods again until the order expires. */
export const canRetry = (c: Checkout): boolean => canTryAgain(c.order, c.transactions) && !orderLapsed(c);

/**
 * "Back to the shop" after a failed attempt on the order's page: the customer gives up, so the
 * order ends cancelled (its webhook goes) and the customer goes to failure_url, else return_url.
 * Nothing changes for an order that is not open after a failed attempt. Answers the order as it is.
 */
export async function leaveCheckout(ctx: Ctx, c: Checkout): Promise<OrderRow> {
  if (c.order.status !== 'new' || !canTryAgain(c.order, c.transactions)) return c.order;
  return ctx.db.tx(async (q) => {
    await orders.lockTransactionsOfOrder(q, c.project.id, c.order.id);
    const order = await orders.findOrder(q, c.project.id, c.order.id, true);
    if (!order || order.status !== 'new') return order ?? c.order;
    const txns = await orders.transactionsOf(q, c.project.id, [order.id]);
    if (!canTryAgain(order, txns)) return order;
    await setOrderStatus(ctx, q, order, 'cancelled', nowFor(c.project));
    return order;
  });
}

/** An order without a transaction past its expiry, before its expire_order job has run. */
const orderLapsed = (c: Checkout) => c.now >= orderExpiresAt(c.order, settingsOf(c.project.settings));

// ---- the card form -------------------------------------------------------------------

export type CardField = 'name' | 'pan' | 'expiry' | 'cvc';

export interface CardEntry {
  name: string;
  pan: string;
  /** MMYYYY */
  expiry: string;
  cvc: string;
}

export interface CardCheck {
  card?: CardEntry;
  /** error code per field (see i18n field_error) */
  errors: Partial<Record<CardField, string>>;
  /** what may be shown again in the form: never the PAN or the CVC */
  keep: { name: string; expiry: string };
}

/** "08/29", "8 / 29", "08-2029", "0829", "082029" -> "082029"; undefined when not a month and year. */
export function normaliseExpiry(text: string): string | undefined {
  const s = text.trim();
  const m = /^(\d{1,2})\s*[/.\- ]\s*(\d{2}|\d{4})$/.exec(s) ?? /^(\d{2})(\d{2}|\d{4})$/.exec(s);
  if (!m) return undefined;
  const month = Number(m[1]);
  if (month < 1 || month > 12) return undefined;
  const year = m[2].length === 2 ? `20${m[2]}` : m[2];
  return `${String(month).padStart(2, '0')}${year}`;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * Server-side checks of the card form, the vault's rules in the customer's terms. The expiry
 * is checked for its form only: a date in the past is the issuer's to decline (expired_card),
 * as the sandbox does for server-to-server payments.
 */
export function checkCardForm(body: Record<string, unknown>): CardCheck {
  const errors: CardCheck['errors'] = {};
  const name = str(body.name).trim().replace(/\s+/g, ' ');
  if (!name) errors.name = 'name_required';
  else if ([...name].length > 120) errors.name = 'name_too_long';

  const pan = str(body.pan).replace(/[\s-]/g, '');
  if (!pan) errors.pan = 'pan_required';
  else if (!/^[0-9]{12,19}$/.test(pan)) errors.pan = 'pan_format';
  else if (!luhnValid(pan)) errors.pan = 'pan_luhn';
  else if (!detectBrands(pan)) errors.pan = 'pan_brand';

  const rawExpiry = str(body.expiry).trim();
  const expiry = normaliseExpiry(rawExpiry);
  if (!rawExpiry) errors.expiry = 'expiry_required';
  else if (!expiry) errors.expiry = 'expiry_format';

  // American Express prints a 4-digit code on the front; every other brand 3 on the back.
  const cvc = str(body.cvc).trim();
  const amex = !errors.pan && detectBrands(pan)?.brand === 'amex';
  if (!cvc) errors.cvc = 'cvc_required';
  else if (!(amex ? /^[0-9]{4}$/ : /^[0-9]{3}$/).test(cvc)) errors.cvc = amex ? 'cvc_format_amex' : 'cvc_format';

  const keep = { name: name.slice(0, 120), expiry: rawExpiry.slice(0, 7) };
  if (Object.keys(errors).length) return { errors, keep };
  return { card: { name, pan, expiry: expiry!, cvc }, errors, keep };
}

/**
 * Pays the order by card: starts its card transaction when it has none yet (the customer
 * picked the method), stores the card in the vault with the transaction's setup_token, then
 * starts 3-D Secure. Returns where to send the customer.
 */
export async function payByCard(
  ctx: Ctx,
  c: Checkout,
  card: CardEntry,
  transactionId?: string,
  shopper: Shopper = {},
): Promise<{ redirect_url: string; transaction_id: string }> {
  const outcome = outcomeOf(c).outcome;
  const retry = canRetry(c);
  if (outcome !== 'open' && !retry) throw new DomainError('TransactionAlreadyStarted', `this order is ${outcome}`);
  let txn = transactionId ? transactionOf(c, transactionId) : c.transactions.find(isOpenCardTransaction);
  if (transactionId && !txn) throw notFound('transaction');
  if (!txn) {
    if (!c.methods.includes(CARD)) throw new DomainError('Forbidden', 'card payments are not offered for this order');
    if (c.transactions.length && !retry) throw new DomainError('TransactionAlreadyStarted', 'this order already has a transaction');
    const view = await startTransaction(ctx, c.project, c.order.id, { payment_method: CARD }, { retry });
    txn = await orders.transactionById(ctx.db, view.transactions.at(-1)!.id);
    if (txn) c.transactions.push(txn);
  }
  if (!txn || !isOpenCardTransaction(txn) || !txn.setup_token)
    throw new DomainError('TransactionAlreadyStarted', 'this transaction has already started');
  // an amex transaction takes American Express cards only
  if (brandRefused(txn, detectBrands(card.pan)?.brand))
    throw new DomainError('ValidationError', 'this payment takes American Express cards only', 'pan');
  const stored = await storeCardForTransaction(ctx, txn.id, {
    pan: card.pan,
    expiry: card.expiry,
    name: card.name,
    setup_token: txn.setup_token,
  });
  const { redirect_url } = await startCardPayment(ctx, txn.id, { vault_token: stored.vault_token, cvc: card.cvc }, shopper);
  return { redirect_url, transaction_id: txn.id };
}
