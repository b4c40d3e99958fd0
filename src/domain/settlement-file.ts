import { parse } from 'csv-parse/sync';
import { DomainError } from './errors.ts';

/**
 * An acquiring host's daily settlement file (docs/acquirer-iso8583.md "Settlement file"): money
 * lines (sale, completion, refund, reversal) that `tender reconcile` matches, and dispute stages
 * (chargeback, second_presentment, pre_arbitration) that `tender disputes import` applies. Files
 * written before the dispute columns have 8 columns; a line may leave the last two out.
 */

export type MoneyType = 'sale' | 'completion' | 'refund' | 'reversal';
export type DisputeStage = 'chargeback' | 'second_presentment' | 'pre_arbitration';

export interface SettlementLine {
  /** its line number in the file (the header is 1) */
  line: number;
  date: string;
  terminal: string;
  rrn: string;
  stan: string;
  type: MoneyType | DisputeStage;
  amount: number;
  currency: string;
  authorization_code: string;
  dispute_id: string;
  reason_code: string;
}

export type MoneyLine = SettlementLine & { type: MoneyType };
export type DisputeLine = SettlementLine & { type: DisputeStage };

const COLUMNS = ['date', 'terminal', 'rrn', 'stan', 'type', 'amount', 'currency', 'authorization_code', 'dispute_id', 'reason_code'];
const MONEY = new Set<string>(['sale', 'completion', 'refund', 'reversal']);
const STAGES = new Set<string>(['chargeback', 'second_presentment', 'pre_arbitration']);
/** a host's file of a day is far below this (about 100 000 lines); anything larger is not one, nor fits the admin endpoint (http/admin.ts) */
export const MAX_SETTLEMENT_FILE_BYTES = 8 * 1024 * 1024;

export const isDispute = (l: SettlementLine): l is DisputeLine => STAGES.has(l.type);

const bad = (where: string, what: string) => new DomainError('ValidationError', `${where}: ${what}`);

/** Every line of the file, checked; the first bad one refuses the whole file (nothing is applied from it). */
export function parseSettlementFile(text: string): SettlementLine[] {
  let rows: string[][];
  try {
    rows = parse(text, { relax_column_count: true, skip_empty_lines: true, trim: true, bom: true }) as string[][];
  } catch (err) {
    throw new DomainError('ValidationError', `not a settlement file: ${(err as Error).message}`);
  }
  const head = rows[0]?.join(',');
  if (head !== COLUMNS.join(',') && head !== COLUMNS.slice(0, 8).join(','))
    throw new DomainError('ValidationError', `not a settlement file: the first line must be ${COLUMNS.join(',')}`);
  return rows.slice(1).map((cells, i) => {
    const where = `settlement file line ${i + 2}`;
    if (cells.length !== 8 && cells.length !== 10) throw bad(where, 'expected 8 or 10 columns');
    const [date, terminal, rrn, stan, type, amount, currency, authorization_code, dispute_id = '', reason_code = ''] = cells;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw bad(where, `date ${JSON.stringify(date)} is not YYYY-MM-DD`);
    if (!MONEY.has(type) && !STAGES.has(type)) throw bad(where, `unknown type ${JSON.stringify(type)}`);
    if (!/^\d+$/.test(amount) || !Number.isSafeInteger(Number(amount))) throw bad(where, 'amount must be minor units');
    if (!/^[A-Z]{3}$/.test(currency)) throw bad(where, `currency ${JSON.stringify(currency)}`);
    if (!terminal || !rrn) throw bad(where, 'terminal and rrn are required');
    if (STAGES.has(type)) {
      if (!/^[A-Za-z0-9_-]{1,40}$/.test(dispute_id))
        throw bad(where, `a ${type} needs the host's dispute_id (1 to 40 letters, digits, - or _)`);
      if (!/^[A-Za-z0-9.]{1,8}$/.test(reason_code)) throw bad(where, `a ${type} needs a reason_code (1 to 8 letters, digits or dots)`);
      if (Number(amount) <= 0) throw bad(where, `a ${type} moves more than 0`);
    }
    return {
      line: i + 2,
      date,
      terminal,
      rrn,
      stan,
      type: type as SettlementLine['type'],
      amount: Number(amount),
      currency,
      authorization_code,
      dispute_id,
      reason_code,
    };
  });
}
