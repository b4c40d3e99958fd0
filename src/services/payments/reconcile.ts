import { linkMessagesOfDays, type LinkMessageRow } from '../../store/payments/acquirer-link.ts';
import type { Ctx } from '../platform/context.ts';
import { isDispute, parseSettlementFile, type MoneyLine } from '../../domain/settlement-file.ts';

/**
 * `tender reconcile`: a host's settlement file against what Tender's link says was settled.
 * Both sides are netted per terminal and RRN: a sale, completion or refund counts its amount,
 * a reversal cancels the message whose RRN it names (docs/acquirer-iso8583.md "Reconciliation").
 */

export interface ReconcileRow {
  terminal: string;
  rrn: string;
  type: string;
  currency: string;
  host_amount: number;
  tender_amount: number;
}

export interface Reconciliation {
  ok: boolean;
  days: string[];
  matches: ReconcileRow[];
  host_only: ReconcileRow[];
  tender_only: ReconcileRow[];
  amount_differences: ReconcileRow[];
  /** settled and reversed on both sides: nothing moved */
  cancelled: number;
}

interface Side {
  amount: number;
  type: string;
  currency: string;
}

const keyOf = (terminal: string, rrn: string) => `${terminal}|${rrn}`;

/** Tender's side: approved sale, completion and refund messages, less those an approved reversal cancelled. */
function tenderSide(rows: LinkMessageRow[]): Map<string, Side> {
  const out = new Map<string, Side>();
  const cancelled = new Set<string>();
  for (const r of rows) {
    if (r.response_code !== '00') continue;
    if (r.kind === 'reversal') {
      if (r.original_rrn && r.original_kind && r.original_kind !== 'preauth') cancelled.add(keyOf(r.terminal_id, r.original_rrn));
      continue;
    }
    if (r.kind === 'preauth') continue; // a hold moves no money; its completion does
    out.set(keyOf(r.terminal_id, r.rrn), { amount: Number(r.amount), type: r.kind, currency: r.currency });
  }
  // a reversed message counts nothing, whether or not its own answer ever came
  for (const k of cancelled) out.set(k, { amount: 0, type: out.get(k)?.type ?? 'reversed', currency: out.get(k)?.currency ?? '' });
  return out;
}

function hostSide(lines: MoneyLine[]): Map<string, Side> {
  const out = new Map<string, Side>();
  for (const l of lines) {
    const k = keyOf(l.terminal, l.rrn);
    const s = out.get(k) ?? { amount: 0, type: l.type, currency: l.currency };
    s.amount += l.type === 'reversal' ? -l.amount : l.amount;
    if (l.type !== 'reversal') s.type = l.type;
    out.set(k, s);
  }
  return out;
}

export async function reconcile(ctx: Pick<Ctx, 'db'>, text: string, opts: { acquirer?: string } = {}): Promise<Reconciliation> {
  // dispute stages name a settled message again: `tender disputes import` applies them, they move no message's money
  const lines = parseSettlementFile(text).filter((l): l is MoneyLine => !isDispute(l));
  const days = [...new Set(lines.map((l) => l.date))].sort();
  const rows = (await linkMessagesOfDays(ctx.db, days)).filter((r) => !opts.acquirer || r.acquirer === opts.acquirer);
  const tender = tenderSide(rows);
  const host = hostSide(lines);
  const result: Reconciliation = { ok: true, days, matches: [], host_only: [], tender_only: [], amount_differences: [], cancelled: 0 };
  for (const k of new Set([...tender.keys(), ...host.keys()])) {
    const [terminal, rrn] = k.split('|');
    const t = tender.get(k);
    const h = host.get(k);
    const row: ReconcileRow = {
      terminal,
      rrn,
      type: h?.type ?? t?.type ?? '',
      currency: h?.currency || t?.currency || '',
      host_amount: h?.amount ?? 0,
      tender_amount: t?.amount ?? 0,
    };
    if (!row.host_amount && !row.tender_amount) result.cancelled++;
    else if (!row.tender_amount) result.host_only.push(row);
    else if (!row.host_amount) result.tender_only.push(row);
    else if (row.host_amount !== row.tender_amount || (h && t && h.currency !== t.currency)) result.amount_differences.push(row);
    else result.matches.push(row);
  }
  result.ok = !result.host_only.length && !result.tender_only.length && !result.amount_differences.length;
  return result;
}
