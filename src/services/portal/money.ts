import type { Ctx } from '../platform/context.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { moneyOf, type MoneySummary } from '../../domain/money-state.ts';
import { insightOf, type Insight } from '../../domain/insight.ts';
import * as store from '../../store/portal/money.ts';
import type { PaymentMoneyRow } from '../../store/portal/money.ts';

/**
 * The portal's money view of payments (domain/money-state.ts): a state and a net amount per
 * payment, and totals that count each payment's money once (captures, voids, refunds and
 * chargebacks are counted on their payment, never as payments of their own).
 */

export interface PaymentMoney {
  order_id: string;
  currency: string;
  created: Date;
  payment_method: string | null;
  brand: string | null;
  money: MoneySummary;
}

function group(rows: PaymentMoneyRow[]): PaymentMoney[] {
  const by = new Map<string, PaymentMoneyRow[]>();
  for (const r of rows) by.set(r.order_id, [...(by.get(r.order_id) ?? []), r]);
  return [...by.values()].map((rs) => {
    const txns = rs.filter((r) => r.txn_created !== null);
    const shown = txns.find((t) => t.authorized_amount > 0) ?? txns.at(-1);
    return {
      order_id: rs[0].order_id,
      currency: rs[0].currency,
      created: rs[0].order_created,
      payment_method: shown?.payment_method ?? null,
      brand: shown?.payment_method_brand ?? null,
      money: moneyOf(rs[0].order_status, txns),
    };
  });
}

/** The money of the given payment orders, by order id (orders that are not payments are left out). */
export async function moneyByOrder(ctx: Ctx, project: ProjectRow, orderIds: string[], primary = false) {
  const rows = await store.paymentMoney(primary ? ctx.db : ctx.replica, project.id, orderIds);
  return new Map(group(rows).map((p) => [p.order_id, p]));
}

export const MAX_PERIOD_DAYS = 92;
const DAY = 24 * 3600 * 1000;

/**
 * The payments created in `days` UTC days from `from`, read from ctx.replica, summed by
 * domain/insight.ts. The period is at most MAX_PERIOD_DAYS: its payments are read whole.
 */
export async function insightBetween(ctx: Ctx, project: ProjectRow, from: Date, days: number): Promise<Insight> {
  const n = Math.min(Math.max(1, days), MAX_PERIOD_DAYS);
  const rows = await store.paymentMoneyBetween(ctx.replica, project.id, from, new Date(from.getTime() + n * DAY));
  return insightOf(group(rows), from, n);
}
