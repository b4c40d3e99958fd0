import { currencyExponent } from './currency.ts';

/** Pure rules of the merchant portal: amounts typed by people, sign-in throttling, session expiry. */

/**
 * An amount as a person types it ("12.5", "12,50", "1 000.00") in the currency's major unit, to
 * minor units. Undefined when it is not a positive amount with at most the currency's decimals.
 */
export function parseMajorAmount(text: string, currency: string): number | undefined {
  const exp = currencyExponent(currency);
  if (exp === undefined) return undefined;
  const clean = text
    .trim()
    .replace(/[\s\u00a0]/g, '')
    .replace(',', '.');
  const m = /^(\d{1,15})(?:\.(\d*))?$/.exec(clean);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > exp) return undefined;
  const minor = Number(m[1]) * 10 ** exp + Number(frac.padEnd(exp, '0') || '0');
  return Number.isSafeInteger(minor) && minor > 0 ? minor : undefined;
}

export interface ThrottleRule {
  /** failures within the window that lock the scope */
  maxFailures: number;
  windowMs: number;
  lockMs: number;
}

export interface FailureCount {
  failures: number;
  first_failure: Date;
  locked_until: Date | null;
}

/** Seconds the scope stays locked from now, or 0 when it is not locked. */
export function lockedFor(row: FailureCount | undefined, now: Date): number {
  if (!row?.locked_until) return 0;
  const ms = new Date(row.locked_until).getTime() - now.getTime();
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/** The scope's count after one more failure: a fresh window when the old one passed; locked at the limit. */
export function afterFailure(row: FailureCount | undefined, now: Date, rule: ThrottleRule): FailureCount {
  const lockEnded = row?.locked_until != null && lockedFor(row, now) === 0;
  const fresh = !row || lockEnded || now.getTime() - new Date(row.first_failure).getTime() > rule.windowMs;
  const failures = fresh ? 1 : row!.failures + 1;
  const first_failure = fresh ? now : new Date(row!.first_failure);
  if (failures >= rule.maxFailures) return { failures: 0, first_failure: now, locked_until: new Date(now.getTime() + rule.lockMs) };
  return { failures, first_failure, locked_until: null };
}

/** A session ends after `idleMs` without a request, and `maxMs` after sign-in whatever happens. */
export function sessionExpired(s: { created: Date; last_seen: Date }, now: Date, idleMs: number, maxMs: number): boolean {
  return now.getTime() - new Date(s.last_seen).getTime() > idleMs || now.getTime() - new Date(s.created).getTime() > maxMs;
}

/** Email addresses are compared lower-cased and trimmed. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();
export const isEmail = (email: string) => /^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email) && email.length <= 254;
