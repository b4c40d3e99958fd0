import type { Book, DisputeStage, SettledLine } from './book.ts';

/**
 * The simulated host's disputes, raised by its admin lines (server.ts): `chargeback TERMINAL RRN
 * [AMOUNT] [REASON]` opens one on a settled sale or completion, `second-presentment ID` (the
 * acquirer's defence won: the money goes back to the merchant) and `pre-arbitration ID` (the
 * issuer tries again: taken once more) follow it, each once and in that order. Each stage is a
 * line of the day's settlement file naming the original's terminal, RRN, STAN and approval code.
 */

export interface DisputeEntry {
  at: string;
  dispute: { id: string; stage: DisputeStage };
  settled: SettledLine[];
}

interface Open {
  line: SettledLine;
  stages: Set<DisputeStage>;
}

const REASON = /^[A-Za-z0-9.]{1,8}$/;
const NEXT: Record<string, { stage: DisputeStage; after: DisputeStage }> = {
  'second-presentment': { stage: 'second_presentment', after: 'chargeback' },
  'pre-arbitration': { stage: 'pre_arbitration', after: 'second_presentment' },
};

/** The admin words this module answers. */
export const DISPUTE_WORDS = new Set(['chargeback', ...Object.keys(NEXT)]);

export class HostDisputes {
  private open = new Map<string, Open>();
  /** money of each original already disputed, by terminal + RRN */
  private disputed = new Map<string, number>();

  constructor(
    private book: Book,
    private write: (e: DisputeEntry) => void,
    private now: () => Date = () => new Date(),
  ) {}

  /** Puts back a dispute stage read from the journal at start (nothing is written). */
  replay(e: DisputeEntry) {
    const line = e.settled[0];
    if (!line) return;
    const o = this.open.get(e.dispute.id) ?? { line, stages: new Set<DisputeStage>() };
    o.stages.add(e.dispute.stage);
    this.open.set(e.dispute.id, o);
    if (e.dispute.stage === 'chargeback') this.add(line.terminal, line.rrn, line.amount);
  }

  private add(terminal: string, rrn: string, amount: number) {
    const k = `${terminal}|${rrn}`;
    this.disputed.set(k, (this.disputed.get(k) ?? 0) + amount);
  }

  /** One admin line (its first word in DISPUTE_WORDS): `ok ID` or `error ...`. */
  apply(line: string): string {
    const [word, ...args] = line.trim().split(/\s+/);
    if (word === 'chargeback') return this.chargeback(args);
    const next = NEXT[word]!;
    const o = args.length === 1 ? this.open.get(args[0]) : undefined;
    if (!o) return `error ${word} takes the id of a dispute the host raised`;
    if (o.stages.has(next.stage)) return `error dispute ${args[0]} already had its ${word}`;
    if (!o.stages.has(next.after)) return `error dispute ${args[0]} has no ${next.after.replace('_', '-')} yet`;
    return this.stage(args[0], next.stage, o);
  }

  private chargeback(args: string[]): string {
    const [terminal, rrn, amount, reason = '4837'] = args;
    if (!terminal || !rrn || args.length > 4) return 'error chargeback takes TERMINAL RRN [AMOUNT] [REASON]';
    const h = this.book.settled(terminal, rrn);
    if (!h) return `error no settled sale or completion with RRN ${rrn} on terminal ${terminal}`;
    const left = h.open - (this.disputed.get(`${terminal}|${rrn}`) ?? 0);
    const n = amount === undefined ? left : Number(amount);
    if (!Number.isSafeInteger(n) || n <= 0 || n > left) return `error the amount must be a whole number of minor units, 1..${left}`;
    if (!REASON.test(reason)) return 'error the reason code is 1 to 8 letters, digits or dots';
    const id = `DSP${String(this.open.size + 1).padStart(9, '0')}`;
    const o: Open = {
      line: {
        date: '',
        terminal,
        rrn,
        stan: h.stan,
        type: 'chargeback',
        amount: n,
        currency: h.currency,
        authorization_code: h.authCode,
        dispute_id: id,
        reason_code: reason,
      },
      stages: new Set(),
    };
    this.open.set(id, o);
    this.add(terminal, rrn, n);
    return this.stage(id, 'chargeback', o);
  }

  private stage(id: string, stage: DisputeStage, o: Open): string {
    o.stages.add(stage);
    const at = this.now();
    const line: SettledLine = { ...o.line, date: at.toISOString().slice(0, 10), type: stage };
    this.write({ at: at.toISOString(), dispute: { id, stage }, settled: [line] });
    return `ok ${id}`;
  }
}
