import { currencyExponent } from './currency.ts';

/** Pure rules of the merchant portal: amounts typed by people, session expiry. */

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

/** A session ends after `idleMs` without a request, and `maxMs` after sign-in whatever happens. */
export function sessionExpired(s: { created: Date; last_seen: Date }, now: Date, idleMs: number, maxMs: number): boolean {
  return now.getTime() - new Date(s.last_seen).getTime() > idleMs || now.getTime() - new Date(s.created).getTime() > maxMs;
}

/** Email addresses are compared lower-cased and trimmed. */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();
export const isEmail = (email: string) => /^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email) && email.length <= 254;
