import { ended, moneyTotals, succeeded, type MoneySummary, type MoneyTotals } from './money-state.ts';

/**
 * Figures of a period's payments for the portal's overview: net volume by day per currency,
 * payments by method and brand, and the share that succeeded. Pure: the payments are given.
 */

export interface InsightPayment {
  currency: string;
  created: Date;
  payment_method: string | null;
  brand: string | null;
  money: MoneySummary;
}

export interface DayVolume {
  day: string;
  payments: number;
  net: number;
}

export interface MethodRow {
  method: string;
  brand: string;
  payments: number;
  succeeded: number;
}

export interface Insight {
  totals: MoneyTotals[];
  /** per currency, one entry per day of the period (days without payments are 0) */
  byDay: { currency: string; days: DayVolume[] }[];
  byMethod: MethodRow[];
  ended: number;
  succeeded: number;
}

const DAY = 24 * 3600 * 1000;
const dayOf = (d: Date) => new Date(d).toISOString().slice(0, 10);

/** `from` is the first UTC day, `days` how many days the period has. */
export function insightOf(payments: readonly InsightPayment[], from: Date, days: number): Insight {
  const dayKeys = Array.from({ length: days }, (_, i) => dayOf(new Date(from.getTime() + i * DAY)));
  const currencies = [...new Set(payments.map((p) => p.currency))].sort();
  const byDay = currencies.map((currency) => {
    const map = new Map(dayKeys.map((day) => [day, { day, payments: 0, net: 0 }]));
    for (const p of payments) {
      const d = p.currency === currency ? map.get(dayOf(p.created)) : undefined;
      if (!d || p.money.captured === 0) continue;
      d.payments += 1;
      d.net += p.money.net;
    }
    return { currency, days: [...map.values()] };
  });
  const methods = new Map<string, MethodRow>();
  for (const p of payments) {
    if (!ended(p.money.state)) continue;
    const method = p.payment_method ?? '—';
    const brand = p.brand ?? '—';
    const key = `${method}\u0000${brand}`;
    const row = methods.get(key) ?? { method, brand, payments: 0, succeeded: 0 };
    row.payments += 1;
    if (succeeded(p.money)) row.succeeded += 1;
    methods.set(key, row);
  }
  const done = payments.filter((p) => ended(p.money.state));
  return {
    totals: moneyTotals(payments),
    byDay,
    byMethod: [...methods.values()].sort((a, b) => b.payments - a.payments || a.method.localeCompare(b.method)),
    ended: done.length,
    succeeded: done.filter((p) => succeeded(p.money)).length,
  };
}
