/**
 * Money rules without I/O: which pre-authorizations can be captured or voided, how much can be
 * refunded, fee and settlement figures, and the double-entry journals of every money movement.
 *
 * Sign convention: a leg's amount is positive when it debits the account, negative when it
 * credits it. Every journal sums to zero.
 */
import { feeFor } from './currency.ts';

export const ACCOUNTS = [
  'holds', // funds reserved on the cardholder's card by an authorization (debit-normal)
  'holds_contra', // the merchant's claim on those reserved funds, awaiting capture (credit-normal)
  'acquirer_receivable', // captured money the acquirer owes us, until it settles (debit-normal)
  'merchant_payable', // what we owe the merchant, net of fees, until the acquirer settles: the pending balance (credit-normal)
  'merchant_available', // what we owe the merchant once settled, until a payout takes it: the available balance (credit-normal)
  'merchant_reserved', // the rolling reserve held back from settled money until its release (credit-normal)
  'fee_income', // our fees (credit-normal)
  'bank', // our cash: what the acquirer paid us less what payouts took (debit-normal)
] as const;
export type Account = (typeof ACCOUNTS)[number];

export const ENTRY_KINDS = [
  'hold',
  'sale',
  'capture',
  'void',
  'expiry',
  'refund',
  'chargeback',
  'reversal',
  'fee',
  'settlement',
  'reserve',
  'reserve_release',
  'payout',
  'payout_return',
] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

export interface Leg {
  account: Account;
  amount: number;
  kind: EntryKind;
}

export type Direction = 'credit' | 'debit';

const leg = (account: Account, amount: number, kind: EntryKind): Leg => ({ account, amount, kind });
/** Zero legs say nothing; dropping them keeps journals readable and the balance unchanged. */
const nonZero = (legs: Leg[]) => legs.filter((l) => l.amount !== 0);

/** The fee moves from the merchant's balance to our income. */
export const feeLegs = (fee: number): Leg[] => nonZero([leg('merchant_payable', fee, 'fee'), leg('fee_income', -fee, 'fee')]);

/** A pre-authorization reserves the amount. */
export const holdLegs = (amount: number): Leg[] => nonZero([leg('holds', amount, 'hold'), leg('holds_contra', -amount, 'hold')]);

/** A void or a lapsed authorization releases (part of) the reservation. */
export const releaseLegs = (amount: number, kind: 'void' | 'expiry'): Leg[] =>
  nonZero([leg('holds', -amount, kind), leg('holds_contra', amount, kind)]);

/**
 * Money captured: a sale at once, or a pre-authorization's hold turned into money the acquirer
 * owes us and we owe the merchant, less our fee.
 */
export function captureLegs(amount: number, fee: number, fromHold: boolean): Leg[] {
  const kind: EntryKind = fromHold ? 'capture' : 'sale';
  return nonZero([
    ...(fromHold ? [leg('holds', -amount, kind), leg('holds_contra', amount, kind)] : []),
    leg('acquirer_receivable', amount, kind),
    leg('merchant_payable', -amount, kind),
    ...feeLegs(fee),
  ]);
}

/** Money going back to the cardholder (refund) or taken by the issuer (chargeback), charged to the merchant. */
export const debitLegs = (amount: number, fee: number, kind: 'refund' | 'chargeback'): Leg[] =>
  nonZero([leg('merchant_payable', amount, kind), leg('acquirer_receivable', -amount, kind), ...feeLegs(fee)]);

/** A chargeback reversed: the issuer gives the money back and the merchant is credited again. */
export const reversalLegs = (amount: number, fee: number): Leg[] =>
  nonZero([leg('acquirer_receivable', amount, 'reversal'), leg('merchant_payable', -amount, 'reversal'), ...feeLegs(fee)]);

/**
 * Settlement of one transaction: the acquirer pays us (or takes back) the gross amount, and what
 * we owe the merchant for it moves from pending (merchant_payable) to available: the settlement
 * amount, net of the fee already booked. Nothing leaves the bank until a payout takes it.
 */
export function settlementLegs(direction: Direction, amount: number, fee: number): Leg[] {
  const net = direction === 'credit' ? amount - fee : -(amount + fee);
  const cash = direction === 'credit' ? amount : -amount;
  return nonZero([
    leg('acquirer_receivable', -cash, 'settlement'),
    leg('bank', cash, 'settlement'),
    leg('merchant_payable', net, 'settlement'),
    leg('merchant_available', -net, 'settlement'),
  ]);
}

/** A rolling reserve: part of settled money held back from the available balance (`reserve`), or given back to it (`reserve_release`). */
export const reserveLegs = (amount: number, kind: 'reserve' | 'reserve_release'): Leg[] =>
  kind === 'reserve'
    ? nonZero([leg('merchant_available', amount, kind), leg('merchant_reserved', -amount, kind)])
    : nonZero([leg('merchant_reserved', amount, kind), leg('merchant_available', -amount, kind)]);

/** What the reserve holds back of a settled credit: `bps` of its net amount, rounded half up; debits hold nothing. */
export const reserveFor = (direction: Direction, net: number, bps: number): number =>
  direction === 'credit' && net > 0 && bps > 0 ? feeFor(net, bps, 0) : 0;

/** A payout takes available money out of what we owe, paid from the bank; a returned or rejected one puts it back. */
export const payoutLegs = (amount: number, kind: 'payout' | 'payout_return'): Leg[] =>
  kind === 'payout'
    ? nonZero([leg('merchant_available', amount, kind), leg('bank', -amount, kind)])
    : nonZero([leg('bank', amount, kind), leg('merchant_available', -amount, kind)]);

export const journalSum = (legs: readonly Pick<Leg, 'amount'>[]) => legs.reduce((s, l) => s + l.amount, 0);
export const isBalanced = (legs: readonly Pick<Leg, 'amount'>[]) => journalSum(legs) === 0;

export interface FeeRule {
  bps: number;
  fixed: number;
}

/**
 * Fee and settlement figures of a money movement, in its own currency. Nothing moved, no fee.
 * A credit settles as amount − fee; a debit costs the merchant amount + fee.
 */
export function figures(direction: Direction, amount: number, rule: FeeRule | undefined): { fee: number; settlement: number } {
  const fee = amount === 0 || !rule ? 0 : feeFor(amount, rule.bps ?? 0, rule.fixed ?? 0);
  return { fee, settlement: direction === 'credit' ? amount - fee : amount + fee };
}

/** The money counters of an authorization. */
export interface Counters {
  authorized_amount: number;
  captured_amount: number;
  voided_amount: number;
  refunded_amount: number;
  charged_back_amount: number;
}

export const remainingAuthorization = (c: Counters) => c.authorized_amount - c.captured_amount - c.voided_amount;
/** Captured money the merchant still holds: what a refund or chargeback can take back. */
export const refundable = (c: Counters) => c.captured_amount - c.refunded_amount - c.charged_back_amount;

/** Every rule the counters of one transaction must obey. Empty when sound. */
export function counterViolations(c: Counters): string[] {
  const out: string[] = [];
  for (const k of ['authorized_amount', 'captured_amount', 'voided_amount', 'refunded_amount', 'charged_back_amount'] as const)
    if (c[k] < 0) out.push(`${k} ${c[k]} is negative`);
  if (c.captured_amount + c.voided_amount > c.authorized_amount)
    out.push(`captured ${c.captured_amount} + voided ${c.voided_amount} > authorized ${c.authorized_amount}`);
  if (c.refunded_amount + c.charged_back_amount > c.captured_amount)
    out.push(`refunded ${c.refunded_amount} + charged back ${c.charged_back_amount} > captured ${c.captured_amount}`);
  return out;
}

/** What capture and void decisions read of a transaction. */
export interface Authorization extends Counters {
  status: string;
  capture_mode: 'manual' | 'delayed' | null;
  is_capturable: boolean;
  capture_before: Date | string | null;
}

const passed = (a: Authorization, now: Date) => a.capture_before !== null && now.getTime() >= new Date(a.capture_before).getTime();

/** Why a pre-authorization can not be captured now, or undefined when it can. */
export function captureProblem(a: Authorization, now: Date): string | undefined {
  if (!a.capture_mode) return 'only a pre-authorization (capture_mode manual or delayed) can be captured; a sale is captured at once';
  // captured per order line, part of it may still be captured (docs/money.md)
  if (a.captured_amount > 0 && remainingAuthorization(a) <= 0) return 'the transaction has already been captured';
  if (a.status === 'expired' || (a.capture_mode === 'manual' && a.status === 'accepted' && passed(a, now)))
    return 'the authorization has expired';
  if (a.status === 'cancelled') return 'the authorization has been voided in full';
  if (a.status !== 'accepted' || !a.is_capturable) return `a transaction in status ${a.status} can not be captured`;
  if (remainingAuthorization(a) <= 0) return 'nothing is left to capture';
  return undefined;
}

/** Why (part of) a pre-authorization can not be voided now, or undefined when it can. amount undefined: all that remains. */
export function voidProblem(a: Authorization, now: Date, amount?: number): string | undefined {
  if (!a.capture_mode) return 'only a pre-authorization (capture_mode manual or delayed) can be voided; use a refund';
  // what a capture per order line left can be released; captured money is refunded
  if (a.captured_amount > 0 && remainingAuthorization(a) <= 0) return 'the transaction has been captured; use a refund instead';
  if (a.status === 'expired' || (a.capture_mode === 'manual' && a.status === 'accepted' && passed(a, now)))
    return 'the authorization has expired';
  if (a.capture_mode === 'delayed' && passed(a, now)) return 'a delayed capture can only be voided before the end of its expiration_period';
  if (a.status === 'cancelled') return 'the authorization has already been voided in full';
  if (a.status !== 'accepted' || !a.is_capturable) return `a transaction in status ${a.status} can not be voided`;
  const remaining = remainingAuthorization(a);
  if (remaining <= 0) return 'nothing is left to void';
  if (amount !== undefined && amount > remaining) return `amount ${amount} is above the remaining authorized amount ${remaining}`;
  return undefined;
}
