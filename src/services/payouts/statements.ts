import { stringify } from 'csv-stringify/sync';
import type { Ctx } from '../platform/context.ts';
import { invalid, notFound } from '../../domain/errors.ts';
import { isUuid } from '../../domain/ids.ts';
import { formatMinor } from '../../domain/currency.ts';
import { linesOf, type LineType } from '../../domain/payouts/statement.ts';
import { localIso, localMidnight } from '../../domain/payouts/schedule.ts';
import * as store from '../../store/payouts/statements.ts';
import { findPayout, type PayoutRow } from '../../store/payouts/payouts.ts';
import { neutralised } from '../../store/reporting/search.ts';

/** One line of a statement (docs/payouts.md, "Statements"): amounts in minor units, positive owed to the merchant. */
export interface Line {
  created: string;
  type: LineType;
  project_id: string;
  project_name: string;
  order_id: string | null;
  /** the merchant's order reference (merchant_order_id): the order's own, else its payment's */
  reference: string | null;
  transaction_id: string | null;
  /** a payout line's payout, or the payout that came back */
  payout_id: string | null;
  currency: string;
  amount: number;
  /** a monthly statement's running available balance after the line */
  balance?: number;
}

function toLines(rows: store.EntryRow[]): Line[] {
  return rows.flatMap((r) =>
    linesOf(r).map((l) => ({
      created: new Date(r.created).toISOString(),
      type: l.type,
      project_id: r.project_id,
      project_name: r.project_name,
      order_id: r.order_id,
      reference: r.reference,
      transaction_id: r.transaction_id,
      payout_id: r.payout_id,
      currency: r.currency,
      amount: l.amount,
    })),
  );
}

/** A merchant's payout with what it contains, of all its projects or of one (the API key's). */
export async function payoutStatement(
  ctx: Ctx,
  who: { merchant_id: string; mode: string; project_id?: string },
  id: string,
): Promise<{ payout: PayoutRow; lines: Line[] }> {
  const payout = isUuid(id) ? await findPayout(ctx.db, who.merchant_id, who.mode, id) : undefined;
  if (!payout) throw notFound('payout');
  return { payout, lines: toLines(await store.entriesOfPayout(ctx.db, payout.id, who.project_id)) };
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/**
 * A merchant's monthly statement of one mode: every movement of its available balance in the
 * calendar month of the zone, per currency, each with the running balance after it, and the
 * balances the month opened and closed with.
 */
export async function monthlyStatement(ctx: Ctx, who: { merchant_id: string; mode: string }, month: string, zone: string) {
  const m = MONTH.exec(month);
  if (!m) throw invalid('month', 'month must be YYYY-MM');
  const from = localMidnight(Number(m[1]), Number(m[2]), 1, zone);
  const to = localMidnight(Number(m[1]), Number(m[2]) + 1, 1, zone);
  const [opening, rows] = await Promise.all([
    store.availableBefore(ctx.db, who.merchant_id, who.mode, from),
    store.entriesBetween(ctx.db, who.merchant_id, who.mode, from, to),
  ]);
  const running = new Map(opening.map((o) => [o.currency, Number(o.available)]));
  const opened = new Map(running);
  const lines = toLines(rows).map((l) => {
    const balance = (running.get(l.currency) ?? 0) + l.amount;
    running.set(l.currency, balance);
    return { ...l, balance };
  });
  const balances = [...running.keys()].sort().map((currency) => ({
    currency,
    opening: opened.get(currency) ?? 0,
    closing: running.get(currency) ?? 0,
  }));
  return { month, time_zone: zone, from: from.toISOString(), to: to.toISOString(), balances, lines };
}

const COLUMNS = ['date', 'type', 'reference', 'order_id', 'transaction_id', 'payout_id', 'project', 'currency', 'amount'];

/**
 * Lines as CSV: times in the zone with its offset, amounts as decimals in the currency's
 * exponent. Text someone typed (the order's reference, the project's name) is neutralised as
 * the reports' cells are (a leading =, +, -, @, tab or CR gets a quote); ids, times and amounts
 * are Tender's own, so a negative amount stays a number.
 */
export function statementCsv(lines: Line[], zone: string, withBalance = false): string {
  const rows = lines.map((l) => [
    localIso(new Date(l.created), zone),
    l.type,
    neutralised(l.reference ?? ''),
    l.order_id ?? '',
    l.transaction_id ?? '',
    l.payout_id ?? '',
    neutralised(l.project_name),
    l.currency,
    formatMinor(l.amount, l.currency),
    ...(withBalance ? [formatMinor(l.balance ?? 0, l.currency)] : []),
  ]);
  return stringify([withBalance ? [...COLUMNS, 'balance'] : COLUMNS, ...rows], { record_delimiter: '\r\n' });
}
