import { parse, type Duration } from 'tinyduration';

// tinyduration's own pattern is not anchored ("xPT30M " parses): the whole text must be ISO 8601,
// with at least one component, and a T only when a time component follows.
const N = '\\d+(?:[.,]\\d+)?';
const ISO_DURATION = new RegExp(`^-?P(?!$)(?:${N}Y)?(?:${N}M)?(?:${N}W)?(?:${N}D)?(?:T(?=\\d)(?:${N}H)?(?:${N}M)?(?:${N}S)?)?$`);

export function parseDuration(text: string): Duration | undefined {
  if (typeof text !== 'string' || !ISO_DURATION.test(text)) return undefined;
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}

/** A duration that parses and moves time forward. */
export function isPositiveDuration(text: string): boolean {
  const d = parseDuration(text);
  if (!d || d.negative) return false;
  return addDuration(new Date(0), d).getTime() > 0;
}

/** Calendar addition in UTC: P1M from Jan 31 lands on the last day of February. */
export function addDuration(from: Date, d: Duration | string): Date {
  const dur = typeof d === 'string' ? parseDuration(d) : d;
  if (!dur) throw new Error(`invalid duration ${d}`);
  const sign = dur.negative ? -1 : 1;
  const t = new Date(from.getTime());
  const months = ((dur.years ?? 0) * 12 + (dur.months ?? 0)) * sign;
  if (months) {
    const day = t.getUTCDate();
    t.setUTCDate(1);
    t.setUTCMonth(t.getUTCMonth() + months);
    const last = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 0)).getUTCDate();
    t.setUTCDate(Math.min(day, last));
  }
  const ms =
    ((dur.weeks ?? 0) * 7 * 86400 + (dur.days ?? 0) * 86400 + (dur.hours ?? 0) * 3600 + (dur.minutes ?? 0) * 60 + (dur.seconds ?? 0)) *
    1000;
  return new Date(t.getTime() + Math.round(ms) * sign);
}

export const durationMs = (text: string) => addDuration(new Date(0), text).getTime();

/** A span of time in days, hours, minutes and seconds (whole seconds), as a clock ahead is told. */
export function spanParts(ms: number): { days: number; hours: number; minutes: number; seconds: number } {
  const s = Math.max(0, Math.round(ms / 1000));
  return { days: Math.floor(s / 86400), hours: Math.floor((s % 86400) / 3600), minutes: Math.floor((s % 3600) / 60), seconds: s % 60 };
}

/** A span as an ISO 8601 duration in days and time (`PT31M`, `P5DT1M`, `PT0S`). */
export function isoSpan(ms: number): string {
  const p = spanParts(ms);
  const time = `${p.hours ? `${p.hours}H` : ''}${p.minutes ? `${p.minutes}M` : ''}${p.seconds ? `${p.seconds}S` : ''}`;
  if (!p.days && !time) return 'PT0S';
  return `P${p.days ? `${p.days}D` : ''}${time ? `T${time}` : ''}`;
}
