import { luhnValid } from '../../../domain/card.ts';

/**
 * What `tender ds-host`'s issuers do, by card number (docs/three-d-secure.md "ds-host"). Two
 * Visa-like and one Mastercard-like card range; within a range the three digits before the check
 * digit pick the behaviour. Any other number in a range is frictionless.
 */

export type Behaviour =
  /** ARes Y: frictionless, ECI 05/02 with an authentication value */
  | 'frictionless'
  /** ARes A: attempts, ECI 06/01 */
  | 'attempts'
  /** ARes C: the ACS asks for CHALLENGE_CODE; right Y, wrong N, in the RReq and the CRes */
  | 'challenge'
  | 'not_authenticated'
  | 'rejected'
  | 'unavailable'
  /** the AReq is never answered (the DS's connection stays open) */
  | 'no_answer'
  /** the ARes is not JSON */
  | 'malformed'
  /** a challenge whose RReq is sent twice */
  | 'duplicate_rreq'
  /** the method range: Y when the 3DS Method ran for the transaction (threeDSCompInd Y), else a challenge */
  | 'method';

/** The code the ACS's challenge page takes. */
export const DS_CHALLENGE_CODE = '123456';

export interface DsRange {
  start: string;
  end: string;
  brand: 'visa' | 'mastercard';
  /** the range runs the 3DS Method first */
  method: boolean;
}

export const DS_RANGES: readonly DsRange[] = [
  { start: '4000001200000000', end: '4000001299999999', brand: 'visa', method: false },
  { start: '5200001200000000', end: '5200001299999999', brand: 'mastercard', method: false },
  { start: '4000001300000000', end: '4000001399999999', brand: 'visa', method: true },
];

const BY_DIGITS: Record<string, Behaviour> = {
  '001': 'frictionless',
  '002': 'attempts',
  '003': 'challenge',
  '004': 'not_authenticated',
  '005': 'rejected',
  '006': 'unavailable',
  '007': 'no_answer',
  '008': 'malformed',
  '009': 'duplicate_rreq',
};

/** The range a PAN is in (same length, between start and end), or undefined. */
export const rangeOf = (pan: string) => DS_RANGES.find((r) => pan.length === r.start.length && pan >= r.start && pan <= r.end);

/** What the issuer does for `pan`; undefined when the PAN is in none of the DS's ranges. */
export function behaviourOf(pan: string): Behaviour | undefined {
  const range = rangeOf(pan);
  if (!range) return undefined;
  if (range.method) return 'method';
  return BY_DIGITS[pan.slice(-4, -1)] ?? 'frictionless';
}

/** A number with its Luhn check digit appended. */
function withCheck(body: string): string {
  for (let d = 0; d < 10; d++) if (luhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

/** The documented cards: one per behaviour and brand (the README and the tests use them). */
const DS_TEST_CARDS: readonly { pan: string; brand: string; behaviour: Behaviour }[] = [
  ...Object.entries(BY_DIGITS).flatMap(([digits, behaviour]) => [
    { pan: withCheck(`400000120000${digits}`), brand: 'visa', behaviour },
    { pan: withCheck(`520000120000${digits}`), brand: 'mastercard', behaviour },
  ]),
  { pan: withCheck('400000130000001'), brand: 'visa', behaviour: 'method' as const },
];

/** The documented card of `behaviour` and `brand`. */
export function dsCard(behaviour: Behaviour, brand = 'visa'): string {
  const c = DS_TEST_CARDS.find((x) => x.behaviour === behaviour && x.brand === brand);
  if (!c) throw new Error(`no ds-host card for ${behaviour} (${brand})`);
  return c.pan;
}
