import cc from 'currency-codes';
import { currencyNumeric } from '../../domain/currency.ts';
import { Iso8583Error } from './codec.ts';

/** The values inside fields that carry more than one thing (docs/acquirer-iso8583.md). */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Field 7: MMDDhhmmss in UTC. */
export const transmissionTime = (d: Date) =>
  pad(d.getUTCMonth() + 1) + pad(d.getUTCDate()) + pad(d.getUTCHours()) + pad(d.getUTCMinutes()) + pad(d.getUTCSeconds());
/** Fields 12 (hhmmss) and 13 (MMDD) are taken from field 7: an e-commerce terminal's local time is UTC. */

/** Field 14 (YYMM) from Tender's MMYYYY, and back (the century of a two-digit year is 20xx). */
export const expiryField = (mmyyyy: string) => mmyyyy.slice(4, 6) + mmyyyy.slice(0, 2);
export const expiryFromField = (yymm: string) => yymm.slice(2, 4) + '20' + yymm.slice(0, 2);

/** Field 3: the transaction type in its first two digits; accounts default (00). */
export const PROCESSING = { purchase: '000000', refund: '200000' } as const;

/** Field 70: network management. */
export const NETWORK = { signOn: '001', signOff: '002', echo: '301' } as const;

/** Field 22: e-commerce, PAN keyed (01) with no PIN capability (2). */
export const ECOMMERCE_ENTRY = '012';

/** Field 90: what a reversal or completion refers to. */
export interface OriginalData {
  mti: string;
  stan: string;
  /** field 7 of the original */
  transmission: string;
}

/** original MTI n4, STAN n6, transmission date and time n10, acquirer and forwarding institution n11 each (zeros). */
export const originalData = (o: OriginalData) => o.mti + o.stan + o.transmission + '0'.repeat(22);

export function parseOriginalData(v: string): OriginalData {
  if (!/^\d{42}$/.test(v)) throw new Iso8583Error('field 90: expected 42 digits');
  return { mti: v.slice(0, 4), stan: v.slice(4, 10), transmission: v.slice(10, 20) };
}

/**
 * Field 48, the 3-D Secure result, as tag-length-value elements: a 2-letter tag, 3 digits of
 * length, the value. EC the ECI (2 digits), AV the authentication value (base64, the CAVV/AAV),
 * DS the directory server transaction id (a UUID), VR the EMV 3-D Secure protocol version (2.2.0).
 * Unknown tags are kept and ignored.
 */
export interface SecureResult {
  eci: string;
  authenticationValue?: string;
  dsTransactionId?: string;
  version?: string;
}

const TAGS = { eci: 'EC', authenticationValue: 'AV', dsTransactionId: 'DS', version: 'VR' } as const;

export function secureField(r: SecureResult): string {
  let out = '';
  for (const [key, tag] of Object.entries(TAGS) as [keyof SecureResult, string][]) {
    const v = r[key];
    if (v !== undefined) out += tag + pad(v.length, 3) + v;
  }
  return out;
}

export function parseSecureField(v: string): SecureResult {
  const found: Record<string, string> = {};
  let at = 0;
  while (at < v.length) {
    const tag = v.slice(at, at + 2);
    const len = v.slice(at + 2, at + 5);
    if (!/^[A-Z0-9]{2}$/.test(tag) || !/^\d{3}$/.test(len) || at + 5 + Number(len) > v.length)
      throw new Iso8583Error(`field 48: broken element at ${at}`);
    found[tag] = v.slice(at + 5, at + 5 + Number(len));
    at += 5 + Number(len);
  }
  if (!found.EC) throw new Iso8583Error('field 48: no ECI (EC)');
  return {
    eci: found.EC,
    ...(found.AV !== undefined ? { authenticationValue: found.AV } : {}),
    ...(found.DS !== undefined ? { dsTransactionId: found.DS } : {}),
    ...(found.VR !== undefined ? { version: found.VR } : {}),
  };
}

/** Field 49 from an ISO 4217 letter code, and back. */
export const currencyField = (code: string): string | undefined => currencyNumeric(code);
export const currencyFromField = (n: string): string | undefined => cc.number(n)?.code;
