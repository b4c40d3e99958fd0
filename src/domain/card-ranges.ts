/**
 * EMV 3-D Secure card ranges (a directory server's PRes, docs/three-d-secure.md "Card ranges"):
 * which account numbers the DS's issuers authenticate, the protocol versions their ACS and the
 * DS speak, and whether the issuer runs a 3DS Method. A range is a span of PANs of one length
 * (13 to 19 digits); a PAN is in it when it has that length and lies between its ends.
 */

export interface CardRange {
  start_range: string;
  end_range: string;
  acs_start_version: string;
  acs_end_version: string;
  ds_start_version: string | null;
  ds_end_version: string | null;
  /** the issuer's 3DS Method URL, when it has one */
  method_url: string | null;
}

/** What the 3DS Server knows of a PAN before an AReq. */
export type RangeAnswer =
  /** no ranges of the DS are known yet (never refreshed, or its PReq failed): the AReq is sent as before */
  | { known: false }
  /** in no range, or in one whose versions exclude ours: no AReq, the unauthenticated fallback */
  | { known: true; range?: undefined }
  | { known: true; range: CardRange };

const RANGE = /^[0-9]{13,19}$/;

/** Whether two ends make a range: digits, the same length, start <= end. */
export const isRange = (start: string, end: string) => RANGE.test(start) && RANGE.test(end) && start.length === end.length && start <= end;

/** The range `pan` is in, or undefined (the narrowest when ranges overlap). */
export function rangeOf(ranges: readonly CardRange[], pan: string): CardRange | undefined {
  let best: CardRange | undefined;
  for (const r of ranges) {
    if (pan.length !== r.start_range.length || pan < r.start_range || pan > r.end_range) continue;
    if (!best || BigInt(r.end_range) - BigInt(r.start_range) < BigInt(best.end_range) - BigInt(best.start_range)) best = r;
  }
  return best;
}

/** -1, 0, 1 as version a is before, the same as, after b ("2.2.0" < "2.10.0"). */
export function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Whether the issuer's ACS (and the DS, when the range says) speak `version`. */
export function speaks(range: CardRange, version: string): boolean {
  const within = (lo: string | null, hi: string | null) =>
    (!lo || compareVersions(lo, version) <= 0) && (!hi || compareVersions(version, hi) <= 0);
  return within(range.acs_start_version, range.acs_end_version) && within(range.ds_start_version, range.ds_end_version);
}

/** How long a DS's ranges are kept before the next PReq (daily), and the least time between two PReqs (hourly). */
export const RANGES_REFRESH_MS = 24 * 3600_000;
export const RANGES_RETRY_MS = 3600_000;
