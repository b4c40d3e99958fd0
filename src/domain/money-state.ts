/**
 * What happened to a payment's money, as a merchant reads it: one state, the net amount, and
 * the actions the payment allows. Pure rules over the payment order's status and its
 * transactions' counters (docs/portal.md "Money states"). The API keeps the spec's shape; only
 * the portal summarises this way.
 */

export const MONEY_STATES = [
  'open', // waiting for the customer to pay
  'processing',
  'authorized',
  'partially_captured',
  'captured',
  'partially_refunded',
  'refunded',
  'charged_back',
  'voided',
  'declined',
  'expired',
  'cancelled',
  'failed',
] as const;
export type MoneyState = (typeof MONEY_STATES)[number];

/** What the rules read of one transaction of a payment order. */
export interface MoneyTxn {
  status: string;
  reason: string | null;
  credit_debit: 'credit' | 'debit';
  capture_mode: 'manual' | 'delayed' | null;
  is_capturable: boolean;
  authorized_amount: number;
  captured_amount: number;
  voided_amount: number;
  refunded_amount: number;
  charged_back_amount: number;
}

export interface MoneySummary {
  state: MoneyState;
  /** the decline or failure reason code, when the state is declined or failed */
  reason?: string;
  authorized: number;
  captured: number;
  voided: number;
  refunded: number;
  charged_back: number;
  /** still reserved on the card and capturable */
  open: number;
  /** the merchant's money: captured less refunded less charged back */
  net: number;
}

const sum = (txns: MoneyTxn[], k: keyof MoneyTxn) => txns.reduce((n, t) => n + (t[k] as number), 0);

/**
 * The payment's money state. Only transactions that were authorized move money; a payment
 * without one is open, processing, declined, expired, cancelled or failed as its last attempt says.
 */
export function moneyOf(orderStatus: string, txns: readonly MoneyTxn[]): MoneySummary {
  const paid = txns.filter((t) => t.credit_debit === 'credit' && t.authorized_amount > 0);
  const authorized = sum(paid, 'authorized_amount');
  const captured = sum(paid, 'captured_amount');
  const voided = sum(paid, 'voided_amount');
  const refunded = sum(paid, 'refunded_amount');
  const charged_back = sum(paid, 'charged_back_amount');
  const open = paid
    .filter((t) => t.is_capturable && t.status === 'accepted')
    .reduce((n, t) => n + t.authorized_amount - t.captured_amount - t.voided_amount, 0);
  const net = captured - refunded - charged_back;
  const base = { authorized, captured, voided, refunded, charged_back, open, net };
  if (paid.length) return { ...base, state: paidState(paid, base) };
  const last = txns.at(-1);
  const state = unpaidState(orderStatus, last?.status);
  const reason = (state === 'declined' || state === 'failed') && last?.reason ? { reason: last.reason } : {};
  return { ...base, state, ...reason };
}

function paidState(paid: MoneyTxn[], m: Omit<MoneySummary, 'state'>): MoneyState {
  if (m.captured > 0) {
    if (m.charged_back > 0 && m.net === 0) return 'charged_back';
    if (m.net === 0) return 'refunded';
    if (m.refunded > 0 || m.charged_back > 0) return 'partially_refunded';
    return m.captured < m.authorized ? 'partially_captured' : 'captured';
  }
  if (m.open > 0) return 'authorized';
  if (m.voided >= m.authorized) return 'voided';
  if (paid.some((t) => t.status === 'expired' || (t.capture_mode && !t.is_capturable))) return 'expired';
  return 'authorized';
}

function unpaidState(orderStatus: string, last: string | undefined): MoneyState {
  if (last === 'declined') return 'declined';
  if (orderStatus === 'expired' || last === 'expired') return 'expired';
  if (orderStatus === 'cancelled' || last === 'cancelled') return 'cancelled';
  if (orderStatus === 'error' || last === 'error') return 'failed';
  if (orderStatus === 'processing' || last === 'pending' || last === 'processing') return 'processing';
  return 'open';
}

/** The actions a payment allows, each with the amount it moves (minor units). */
export interface MoneyActions {
  /** capture what is still reserved */
  capture?: number;
  /** void (release) what is still reserved; a smaller amount may be given */
  void?: number;
  /** refund up to this amount */
  refund?: number;
  /** cancel the order before it is paid */
  cancel?: boolean;
}

export function moneyActions(orderStatus: string, m: MoneySummary): MoneyActions {
  const out: MoneyActions = {};
  if (m.open > 0) {
    out.capture = m.open;
    out.void = m.open;
  }
  if (m.net > 0) out.refund = m.net;
  if ((orderStatus === 'new' || orderStatus === 'processing') && m.authorized === 0) out.cancel = true;
  return out;
}

/** Totals of several payments per currency: money counted once, from each payment's own counters. */
export interface MoneyTotals {
  currency: string;
  payments: number;
  captured: number;
  refunded: number;
  charged_back: number;
  net: number;
}

export function moneyTotals(rows: readonly { currency: string; money: MoneySummary }[]): MoneyTotals[] {
  const by = new Map<string, MoneyTotals>();
  for (const { currency, money } of rows) {
    const t = by.get(currency) ?? { currency, payments: 0, captured: 0, refunded: 0, charged_back: 0, net: 0 };
    if (money.captured > 0) t.payments += 1;
    t.captured += money.captured;
    t.refunded += money.refunded;
    t.charged_back += money.charged_back;
    t.net += money.net;
    by.set(currency, t);
  }
  return [...by.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

/** A payment that succeeded, for the share that succeeded: its money was authorized (whatever happened to it later). */
export const succeeded = (m: MoneySummary) => m.authorized > 0;
/** A state in which the payment is over (succeeded or not): open and processing are not. */
export const ended = (s: MoneyState) => s !== 'open' && s !== 'processing';
