/**
 * Payout schedules (docs/payouts.md): when a merchant is paid, in the merchant's time zone.
 * `daily`, `weekly:mon` .. `weekly:sun`, `monthly:1` .. `monthly:31` (a month shorter than the
 * day pays on its last day).
 */
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

export type Every = { kind: 'daily' } | { kind: 'weekly'; weekday: number } | { kind: 'monthly'; day: number };

/** The schedule's `every`, or why it is not one. */
export function parseEvery(text: string): Every | string {
  if (text === 'daily') return { kind: 'daily' };
  const weekly = /^weekly:([a-z]{3})$/.exec(text);
  if (weekly) {
    const weekday = (WEEKDAYS as readonly string[]).indexOf(weekly[1]!);
    if (weekday >= 0) return { kind: 'weekly', weekday };
  }
  const monthly = /^monthly:([0-9]{1,2})$/.exec(text);
  if (monthly && Number(monthly[1]) >= 1 && Number(monthly[1]) <= 31) return { kind: 'monthly', day: Number(monthly[1]) };
  return 'every must be daily, weekly:mon .. weekly:sun, or monthly:1 .. monthly:31';
}

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The calendar date of an instant in a time zone: year, month (1-12), day, weekday (0 Sunday). */
function localDate(at: Date, zone: string) {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const get = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  const year = get('year');
  const month = get('month');
  const day = get('day');
  return { year, month, day, weekday: new Date(Date.UTC(year, month - 1, day)).getUTCDay() };
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The period a run at `at` pays for, as the local date `YYYY-MM-DD`, or undefined when the
 * schedule is not due that day. One payout per merchant, mode, currency and period.
 */
export function duePeriod(every: Every, at: Date, zone: string): string | undefined {
  const d = localDate(at, zone);
  const key = `${d.year}-${pad(d.month)}-${pad(d.day)}`;
  if (every.kind === 'daily') return key;
  if (every.kind === 'weekly') return d.weekday === every.weekday ? key : undefined;
  const last = new Date(Date.UTC(d.year, d.month, 0)).getUTCDate();
  return d.day === Math.min(every.day, last) ? key : undefined;
}

/** The zone's offset from UTC at an instant, in ms (east positive). */
function offsetMs(at: Date, zone: string): number {
  const name =
    new Intl.DateTimeFormat('en', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(at).find((p) => p.type === 'timeZoneName')
      ?.value ?? 'GMT';
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3_600_000 + Number(m[3] ?? 0) * 60_000) : 0;
}

/** The instant a local calendar day starts in the zone (month and day may overflow: Date.UTC's rules). */
export function localMidnight(year: number, month: number, day: number, zone: string): Date {
  const wall = Date.UTC(year, month - 1, day);
  const first = wall - offsetMs(new Date(wall), zone);
  // the offset at midnight itself, should a change of summer time fall in between
  return new Date(wall - offsetMs(new Date(first), zone));
}

/** The start of the next local day after `now` in the zone: when the worker next looks at a merchant's schedule. */
export function nextLocalMidnight(now: Date, zone: string): Date {
  const d = localDate(now, zone);
  return localMidnight(d.year, d.month, d.day + 1, zone);
}

/** An instant as local ISO 8601 with the zone's offset, to the second: `2026-11-01T00:30:00+01:00`. */
export function localIso(at: Date, zone: string): string {
  const off = offsetMs(at, zone);
  const wall = new Date(at.getTime() + off).toISOString().slice(0, 19);
  const m = Math.abs(off) / 60_000;
  return `${wall}${off < 0 ? '-' : '+'}${pad(Math.floor(m / 60))}:${pad(m % 60)}`;
}
