import type { Ctx } from '../platform/context.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { ended, moneyOf, moneyTotals, succeeded, type MoneySummary, type MoneyTotals } from '../../domain/money-state.ts';
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

function group(rows: PaymentMoneyRow[], orderStatus = (r: PaymentMoneyRow) => r.order_status): PaymentMoney[] {
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
      money: moneyOf(orderStatus(rs[0]), txns),
    };
  });
}

/** The money of the given payment orders, by order id (orders that are not payments are left out). */
export async function moneyByOrder(ctx: Ctx, project: ProjectRow, orderIds: string[], primary = false) {
  const rows = await store.paymentMoney(primary ? ctx.db : ctx.replica, project.id, orderIds);
  return new Map(group(rows).map((p) => [p.order_id, p]));
}

export interface PeriodMoney {
  totals: MoneyTotals[];
  /** payments that ended, and of those, the ones whose money was authorized */
  ended: number;
  succeeded: number;
  payments: PaymentMoney[];
}

/** Payments created in [from, to), read from ctx.replica: totals per currency and the share that succeeded. */
export async function moneyBetween(ctx: Ctx, project: ProjectRow, from: Date, to: Date): Promise<PeriodMoney> {
  const payments = group(await store.paymentMoneyBetween(ctx.replica, project.id, from, to));
  const done = payments.filter((p) => ended(p.money.state));
  return {
    totals: moneyTotals(payments),
    ended: done.length,
    succeeded: done.filter((p) => succeeded(p.money.state)).length,
    payments,
  };
}
