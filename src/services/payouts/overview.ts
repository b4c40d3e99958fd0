import type { Ctx } from '../platform/context.ts';
import { duePeriod, parseEvery } from '../../domain/payouts/schedule.ts';
import * as store from '../../store/payouts/overview.ts';

const DAY = 86_400_000;
/** How many payouts that came back the view lists. */
const RETURNED_MAX = 100;

/** The next local date from `now` on which the schedule pays and has not paid yet (within two months). */
function nextPeriod(every: string, zone: string, paid: string[], now: Date): string | undefined {
  const e = parseEvery(every);
  if (typeof e === 'string') return undefined;
  for (let k = 0; k <= 62; k++) {
    const period = duePeriod(e, new Date(now.getTime() + k * DAY), zone);
    if (period && !paid.includes(period)) return period;
  }
  return undefined;
}

/**
 * `tender payouts overview` and the admin page: across merchants, the balances per mode and
 * currency, the next payout of each schedule with what it would take now (euros: what SEPA pays),
 * the payouts that came back, and the merchants whose available balance is negative.
 * `open_disputes`: the disputes open or defended and not decided, in that currency.
 */
export async function payoutsOverview(ctx: Ctx, now = new Date()) {
  const [balances, schedules, returned, disputes] = await Promise.all([
    store.merchantBalances(ctx.db),
    store.schedulesWithPeriods(ctx.db),
    store.returnedPayouts(ctx.db, RETURNED_MAX),
    store.openDisputes(ctx.db),
  ]);
  const rows = balances.map((b) => ({
    merchant_id: b.merchant_id,
    merchant: b.merchant,
    mode: b.mode,
    currency: b.currency,
    pending: Number(b.pending),
    available: Number(b.available),
    reserved: Number(b.reserved),
    open_disputes: disputes.find((d) => d.merchant_id === b.merchant_id && d.mode === b.mode && d.currency === b.currency)?.n ?? 0,
  }));
  const eur = (merchant: string, mode: string) =>
    rows.find((r) => r.merchant_id === merchant && r.mode === mode && r.currency === 'EUR')?.available ?? 0;
  const next = schedules.map((s) => {
    const held = s.held_until && s.held_until.getTime() > now.getTime() ? new Date(s.held_until).toISOString() : null;
    return {
      merchant_id: s.merchant_id,
      merchant: s.merchant,
      every: s.every,
      time_zone: s.time_zone,
      period: nextPeriod(s.every, s.time_zone, s.periods, now) ?? null,
      held_until: held,
      minimum: Number(s.minimum),
      // what a run would take now: a positive balance of at least the minimum
      live: Math.max(0, eur(s.merchant_id, 'live')),
      test: Math.max(0, eur(s.merchant_id, 'test')),
    };
  });
  return {
    balances: rows,
    next_payouts: next,
    returned: returned.map((p) => ({
      id: p.id,
      merchant_id: p.merchant_id,
      merchant: p.merchant,
      mode: p.mode,
      currency: p.currency,
      amount: Number(p.amount),
      state: p.state,
      reason: p.return_reason,
      period: p.period,
      modified: new Date(p.modified).toISOString(),
    })),
    negative: rows.filter((r) => r.available < 0),
  };
}

export type Overview = Awaited<ReturnType<typeof payoutsOverview>>;
