import creditCardType from 'credit-card-type';

/** Pure card rules: Luhn, brand detection, truncation, expiry, ECI. No I/O. */

export function luhnValid(pan: string): boolean {
  if (!/^[0-9]{2,19}$/.test(pan)) return false;
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let d = pan.charCodeAt(pan.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** credit-card-type ids to the brand names the API shows (snake case, short scheme names). */
const BRAND_NAME: Record<string, string> = { 'american-express': 'amex', 'diners-club': 'diners' };
const brandName = (type: string) => BRAND_NAME[type] ?? type.replace(/-/g, '_');

/**
 * Co-badged cards carry a domestic scheme beside the international one. A BIN library only
 * sees the international prefix, so the few ranges we know are listed here. The first brand
 * is the one the payment is routed on (see docs/cards.md, Decisions).
 */
const CO_BADGES: { prefix: string; brands: string[] }[] = [{ prefix: '4000002500001001', brands: ['cartes_bancaires', 'visa'] }];

export interface BrandInfo {
  brand: string;
  brands: string[];
}

/** The brands of a full PAN whose length fits the scheme, or undefined when none is known. */
/** What the vault takes as a PAN: 12 to 19 digits, a valid check digit, a supported brand (OpenAPI format `card-number`). */
export const isCardNumber = (pan: string) => /^[0-9]{12,19}$/.test(pan) && luhnValid(pan) && detectBrands(pan) !== undefined;

export function detectBrands(pan: string): BrandInfo | undefined {
  const co = CO_BADGES.find((c) => pan.startsWith(c.prefix));
  if (co) return { brand: co.brands[0], brands: [...co.brands] };
  // The brands depend on the first BIN_DIGITS digits and the length only; credit-card-type copies
  // its whole table on every call, a few per cent of a card payment's CPU, so the answer is kept
  // per BIN and length (the BIN is not secret: truncated PANs show six of its digits).
  const key = `${pan.slice(0, BIN_DIGITS)}:${pan.length}`;
  let brands = brandsByBin.get(key);
  if (!brands) {
    brands = creditCardType(pan)
      .filter((t) => t.lengths.includes(pan.length))
      .map((t) => brandName(t.type));
    if (brandsByBin.size >= 4096) brandsByBin.clear();
    brandsByBin.set(key, brands);
  }
  return brands.length ? { brand: brands[0], brands: [...brands] } : undefined;
}

/** The longest prefix credit-card-type's patterns look at. */
const BIN_DIGITS = 8;
const brandsByBin = new Map<string, string[]>();

/**
 * Masked number for display: first six and last four digits for PANs of 15 digits or more
 * (PCI DSS maximum), only the last four for shorter ones.
 */
export function truncatePan(pan: string): string {
  if (pan.length >= 15) return pan.slice(0, 6) + '*'.repeat(pan.length - 10) + pan.slice(-4);
  return '*'.repeat(pan.length - 4) + pan.slice(-4);
}

/** MMYYYY -> the first instant after the card's last valid day (cards are valid through their month). */
export function expiryEnd(expiry: string): Date {
  const month = Number(expiry.slice(0, 2));
  const year = Number(expiry.slice(2));
  return new Date(Date.UTC(year, month, 1)); // month is 1-based, so this is the next month's first day
}

export const isExpired = (expiry: string, now: Date) => now.getTime() >= expiryEnd(expiry).getTime();

/** 3-D Secure 2 transStatus values. C means a challenge is required. */
export type TransStatus = 'Y' | 'A' | 'N' | 'U' | 'R' | 'C';

/** Liability moves to the issuer for authenticated (Y) and attempted (A) authentications. */
/** An EMV 3-D Secure exchange's result (acquirer/threeds/, docs/three-d-secure.md): its ids and the issuer's authentication value. */
export interface EmvResult {
  /** Tender's threeDSServerTransID (the lookup attempt's id) */
  server_trans_id: string;
  ds_trans_id?: string;
  acs_trans_id?: string;
  /** the protocol version spoken (2.2.0) */
  version: string;
  /** the CAVV / AAV (base64), for Y and A */
  authentication_value?: string;
  /** a challenge's ACS URL (C) */
  acs_url?: string;
  /** the challenge's result as the DS's RReq gave it (the first RReq; a duplicate changes nothing) */
  rreq?: { trans_status: TransStatus; eci?: string; authentication_value?: string };
}

export const liabilityShift = (s: TransStatus) => s === 'Y' || s === 'A';

const MASTERCARD_LIKE = new Set(['mastercard', 'maestro']);

/** ECI by scheme: Mastercard-like 02/01/00, every other scheme Visa-like 05/06/07. */
export function eciFor(brand: string, s: TransStatus): string {
  const [full, attempted, none] = MASTERCARD_LIKE.has(brand) ? ['02', '01', '00'] : ['05', '06', '07'];
  return s === 'Y' ? full : s === 'A' ? attempted : none;
}

/** One brand's rules as the hosted page's script applies them while the customer types. */
export interface BrandRule {
  brand: string;
  name: string;
  /** prefixes: a number, or an inclusive [from, to] range of same-length prefixes */
  patterns: (number | [number, number])[];
  lengths: number[];
  /** positions after which a space is shown */
  gaps: number[];
  cvc: number;
}

/**
 * The vault's brand rules (credit-card-type, plus the co-badged ranges) as data, for the
 * hosted form's script: the page shows the brand the vault will store, from one source.
 */
export function brandRules(): { brands: BrandRule[]; coBadges: typeof CO_BADGES } {
  const brands = Object.values(creditCardType.types).map((type) => {
    const info = creditCardType.getTypeInfo(type);
    return {
      brand: brandName(info.type),
      name: info.niceType,
      patterns: info.patterns as (number | [number, number])[],
      lengths: info.lengths,
      gaps: info.gaps,
      cvc: info.code.size,
    };
  });
  return { brands, coBadges: CO_BADGES };
}
