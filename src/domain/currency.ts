import cc from 'currency-codes';

// Codes that are not money a card can be charged in: precious metals, funds units, test codes.
const NOT_PAYABLE = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
  'BOV',
  'CHE',
  'CHW',
  'CLF',
  'COU',
  'MXV',
  'USN',
  'UYI',
  'UYW',
]);

/** ISO 4217 minor-unit exponent, or undefined when the code is not a payable currency. */
export function currencyExponent(code: string): number | undefined {
  // currency-codes looks codes up case-insensitively; ISO 4217 codes are capitals.
  if (typeof code !== 'string' || !/^[A-Z]{3}$/.test(code) || NOT_PAYABLE.has(code)) return undefined;
  const c = cc.code(code);
  return c ? c.digits : undefined;
}

/** ISO 4217 numeric code ("978" for EUR), as wallet payloads carry the currency. */
export const currencyNumeric = (code: string): string | undefined => cc.code(code)?.number;

/** Payable currencies whose exponent is not 2 (JPY 0, KWD 3...): what SQL needs to format amounts as formatMinor does. */
export const EXPONENTS_NOT_2: ReadonlyArray<readonly [string, number]> = cc.data
  .filter((c) => c.digits !== 2 && currencyExponent(c.code) !== undefined)
  .map((c) => [c.code, c.digits] as const);

export const isCurrency = (code: string) => currencyExponent(code) !== undefined;

export const PAYABLE_CURRENCIES: string[] = cc.codes().filter(isCurrency).sort();

export function isValidAmount(amount: unknown): amount is number {
  return typeof amount === 'number' && Number.isSafeInteger(amount) && amount >= 0;
}

/** Minor units to a decimal string in the currency's exponent: JPY 1234 -> "1234", EUR 1234 -> "12.34". */
export function formatMinor(amount: number, currency: string): string {
  const exp = currencyExponent(currency) ?? 2;
  const neg = amount < 0;
  const digits = String(Math.abs(amount)).padStart(exp + 1, '0');
  const whole = exp ? digits.slice(0, -exp) : digits;
  const frac = exp ? '.' + digits.slice(-exp) : '';
  return (neg ? '-' : '') + whole + frac;
}

/** Fee in minor units: basis points of the amount (rounded half up) plus a fixed part. */
export function feeFor(amount: number, bps: number, fixed: number): number {
  const scaled = amount * bps;
  if (Number.isSafeInteger(scaled) || !Number.isInteger(amount) || !Number.isInteger(bps))
    return Math.floor((scaled + 5000) / 10000) + fixed;
  // amount * bps beyond 2^53 loses digits as a double: exact integer arithmetic instead
  return Number((BigInt(amount) * BigInt(bps) + 5000n) / 10000n) + fixed;
}
