import { randomInt } from 'node:crypto';
import { decideAuthorization } from '../../simulator/index.ts';
import { answerMti, type Message } from '../codec.ts';
import { expiryFromField, NETWORK, parseOriginalData, PROCESSING, currencyFromField } from '../fields.ts';

/**
 * The simulated acquiring host's book: what each request decides, the authorizations it holds
 * until captured, voided or expired, and the settled lines it hands to the settlement file.
 * Pure of sockets (server.ts carries the bytes); one instance per host process.
 */

export type SettledType = 'sale' | 'completion' | 'refund' | 'reversal' | DisputeStage;

/** The dispute stages the host reports (disputes.ts): the issuer's chargeback, the acquirer's defence that won it back, the issuer's second try. */
export type DisputeStage = 'chargeback' | 'second_presentment' | 'pre_arbitration';

/**
 * One line of the settlement file. RRN is the settled message's; a reversal names the RRN it
 * cancels; a dispute stage names the original's terminal, RRN, STAN and approval, with its own id and reason.
 */
export interface SettledLine {
  date: string;
  terminal: string;
  rrn: string;
  stan: string;
  type: SettledType;
  amount: number;
  currency: string;
  authorization_code: string;
  dispute_id?: string;
  reason_code?: string;
}

/** What became of a financial request: decided, answered as before, or refused on a used STAN. */
export type HostResult = 'decided' | 'retransmission' | 'collision';

/** One request with its answer, as the host's journal (journal.ts) keeps it. */
export interface HostEntry {
  at: string;
  result: HostResult;
  request: Message;
  answer: Message;
  settled: SettledLine[];
}

/** A financial request the host approved, findable by what field 90 of a later message names. */
export interface Held {
  kind: 'preauth' | 'sale' | 'completion' | 'refund';
  terminal: string;
  rrn: string;
  stan: string;
  amount: number;
  /** preauth: still capturable; sale/completion: money settled less refunds */
  open: number;
  currency: string;
  authCode: string;
  state: 'held' | 'captured' | 'settled' | 'reversed' | 'expired';
  expires: number;
  /** a captured pre-authorization's completion (what a refund naming the pre-authorization refunds) */
  completion?: Held;
}

export interface BookOptions {
  /** how long an authorization is held before it lapses */
  holdMs: number;
  /** receives every settled line as it happens */
  settle: (line: SettledLine) => void;
  /** hears of each financial request with its answer before its settlement lines are written (the host's journal) */
  record?: (e: HostEntry) => void;
  now?: () => Date;
}

const code39 = (m: Message, code: string, extra: Record<number, string> = {}): Message => {
  const keep = [3, 4, 7, 11, 37, 41, 42, 49, 70, 90].filter((n) => m.fields[n] !== undefined);
  return { mti: answerMti(m.mti), fields: { ...Object.fromEntries(keep.map((n) => [n, m.fields[n]])), ...extra, 39: code } };
};

const AUTH_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
const authCode = () => Array.from({ length: 6 }, () => AUTH_CHARS[randomInt(AUTH_CHARS.length)]).join('');

export class Book {
  /** the originals, by terminal + STAN + field 7 (what field 90 names) */
  private originals = new Map<string, Held>();
  /** answers already given, by terminal + STAN + field 7 + what the request asked: a retransmission gets the same answer */
  private answers = new Map<string, Message>();
  /** STANs in use per terminal and day (MMDD): a second request with a used STAN is a collision */
  private used = new Set<string>();
  /** settled sales and completions by terminal + RRN */
  private byRrn = new Map<string, Held>();
  readonly stats = { requests: 0, retransmissions: 0, collisions: 0, settled: 0 };
  /** the settlement lines of the request being decided, handed out after it is journaled */
  private lines: SettledLine[] = [];
  /** the journal entry being replayed at start: its time, approval code and decision stand */
  private replaying?: HostEntry;

  constructor(private opts: BookOptions) {}

  private now() {
    if (this.replaying) return new Date(this.replaying.at);
    return this.opts.now?.() ?? new Date();
  }

  private authCode() {
    return this.replaying?.answer.fields[38]?.trim() || authCode();
  }

  /** Replays one journal entry at start: the book holds and remembers what it did before, and writes nothing. */
  replay(e: HostEntry) {
    this.replaying = e;
    try {
      this.answer(e.request);
    } finally {
      this.replaying = undefined;
    }
  }

  /** The journal first, then the settlement lines: a kill between the two is repaired at start. */
  private done(m: Message, answer: Message, result: HostResult): Message {
    const settled = this.lines.splice(0);
    if (this.replaying) return answer;
    this.opts.record?.({ at: this.now().toISOString(), result, request: m, answer, settled });
    for (const l of settled) this.opts.settle(l);
    return answer;
  }

  /**
   * The answer to one request. Network messages are answered by the server (sign-on state).
   * `partial`: an approval of a sale or pre-authorization is for half its amount (code 10, a fault).
   */
  answer(m: Message, opts: { partial?: boolean } = {}): Message {
    this.stats.requests++;
    const terminal = (m.fields[41] ?? '').trimEnd();
    const stan = m.fields[11] ?? '';
    const sent = m.fields[7] ?? '';
    if (!terminal || !/^\d{6}$/.test(stan) || !/^\d{10}$/.test(sent)) return code39(m, '30');
    // 0400 and its repeats 0401 are one message class; a retransmission repeats every field that matters
    const kind = m.mti === '0401' ? '0400' : m.mti;
    const fingerprint = `${kind}|${m.fields[3] ?? ''}|${m.fields[4] ?? ''}|${m.fields[37] ?? ''}|${m.fields[90] ?? ''}`;
    const before = this.answers.get(`${terminal}|${stan}|${sent}|${fingerprint}`);
    if (before) {
      this.stats.retransmissions++;
      return this.done(m, before, 'retransmission');
    }
    const day = `${terminal}|${stan}|${sent.slice(0, 4)}`;
    if (this.used.has(day)) {
      // another request already used this STAN today on this terminal: never decide twice on one STAN
      this.stats.collisions++;
      return this.done(m, code39(m, '94'), 'collision');
    }
    this.used.add(day);
    const out = this.decide(m, terminal, stan, sent, opts.partial ?? false);
    this.answers.set(`${terminal}|${stan}|${sent}|${fingerprint}`, out);
    return this.done(m, out, 'decided');
  }

  private decide(m: Message, terminal: string, stan: string, sent: string, partial: boolean): Message {
    let amount = Number(m.fields[4] ?? 'NaN');
    const currency = currencyFromField(m.fields[49] ?? '') ?? '';
    const rrn = (m.fields[37] ?? '').trim();
    const processing = m.fields[3] ?? PROCESSING.purchase;
    if (m.mti === '0400' || m.mti === '0401') return this.reverse(m, terminal);
    if (!Number.isSafeInteger(amount) || !currency || !rrn) return code39(m, '30');
    const base = { terminal, rrn, stan, currency };
    if (m.mti === '0220') {
      const orig = this.original(terminal, m.fields[90]);
      if (!orig || orig.kind !== 'preauth') return code39(m, '25');
      if (orig.state === 'held' && orig.expires <= this.now().getTime()) orig.state = 'expired';
      if (orig.state !== 'held') return code39(m, orig.state === 'captured' && orig.open === amount ? '00' : '12');
      if (amount <= 0 || amount > orig.amount) return code39(m, '13');
      orig.state = 'captured';
      orig.open = amount;
      const done: Held = { ...base, kind: 'completion', amount, open: amount, authCode: orig.authCode, state: 'settled', expires: 0 };
      orig.completion = done;
      this.keep(terminal, stan, sent, done);
      this.line(done, 'completion');
      return code39(m, '00', { 38: orig.authCode });
    }
    if (processing.startsWith('20')) {
      // a refund names the sale or completion it gives money back from (or the pre-authorization completed)
      const named = this.original(terminal, m.fields[90]);
      const orig = named?.kind === 'preauth' ? named.completion : named;
      if (!orig || (orig.kind !== 'sale' && orig.kind !== 'completion') || orig.state !== 'settled') return code39(m, '25');
      if (amount <= 0 || amount > orig.open) return code39(m, '13');
      orig.open -= amount;
      const done: Held = { ...base, kind: 'refund', amount, open: amount, authCode: this.authCode(), state: 'settled', expires: 0 };
      this.keep(terminal, stan, sent, done);
      this.line(done, 'refund');
      return code39(m, '00', { 38: done.authCode });
    }
    if (m.mti !== '0100' && m.mti !== '0200') return code39(m, '12');
    const pan = m.fields[2] ?? '';
    const expiry = m.fields[14] ? expiryFromField(m.fields[14]) : '';
    if (!pan || !expiry) return code39(m, '30');
    // replayed: the decision made then (the journal keeps no full PAN to decide again)
    const decision = this.replaying ? undefined : decideAuthorization({ pan, expiry }, this.now());
    // the late-decline card has no later answer on a host: it declines at once
    let code = !decision ? this.replaying!.answer.fields[39] : decision.status === 'processing' ? '05' : decision.response_code;
    if (code === '00' && partial && amount >= 2) code = '10';
    if (code !== '00' && code !== '10') return code39(m, code);
    // approved for partial amount: half of it is held or settled, and field 4 answers that part
    if (code === '10') amount = this.replaying ? Number(this.replaying.answer.fields[4]) : Math.floor(amount / 2);
    const approval = this.authCode();
    const held: Held =
      m.mti === '0100'
        ? {
            ...base,
            kind: 'preauth',
            amount,
            open: amount,
            authCode: approval,
            state: 'held',
            expires: this.now().getTime() + this.opts.holdMs,
          }
        : { ...base, kind: 'sale', amount, open: amount, authCode: approval, state: 'settled', expires: 0 };
    this.keep(terminal, stan, sent, held);
    if (held.kind === 'sale') this.line(held, 'sale');
    return code39(m, code, code === '10' ? { 4: String(amount), 38: approval } : { 38: approval });
  }

  /**
   * A void or reversal: a held authorization is released, settled money is taken back. An
   * original the host never saw is answered 00 too: nothing was done, so nothing stays done.
   */
  private reverse(m: Message, terminal: string): Message {
    const orig = this.original(terminal, m.fields[90]);
    if (!orig || orig.state === 'reversed' || orig.state === 'expired') return code39(m, '00');
    if (orig.kind === 'preauth' && orig.state === 'captured') return code39(m, '12');
    const release = Number(m.fields[4] ?? orig.open);
    if (orig.kind === 'preauth' && Number.isSafeInteger(release) && release > 0 && release < orig.open) {
      // a partial void: the rest stays held and capturable
      orig.open -= release;
      orig.amount -= release;
      return code39(m, '00', { 38: orig.authCode });
    }
    if (orig.kind !== 'preauth') this.line({ ...orig, amount: orig.open }, 'reversal');
    orig.state = 'reversed';
    return code39(m, '00', { 38: orig.authCode });
  }

  private original(terminal: string, f90: string | undefined): Held | undefined {
    if (!f90 || !/^\d{42}$/.test(f90)) return undefined;
    const o = parseOriginalData(f90);
    return this.originals.get(`${terminal}|${o.stan}|${o.transmission}`);
  }

  private keep(terminal: string, stan: string, sent: string, h: Held) {
    this.originals.set(`${terminal}|${stan}|${sent}`, h);
    if (h.kind === 'sale' || h.kind === 'completion') this.byRrn.set(`${terminal}|${h.rrn}`, h);
  }

  /** A settled sale or completion by its terminal and RRN (what a dispute names), unless reversed. */
  settled(terminal: string, rrn: string): Held | undefined {
    const h = this.byRrn.get(`${terminal}|${rrn}`);
    return h?.state === 'settled' ? h : undefined;
  }

  private line(h: Pick<Held, 'terminal' | 'rrn' | 'stan' | 'amount' | 'currency' | 'authCode'>, type: SettledType) {
    if (h.amount <= 0) return;
    this.stats.settled++;
    this.lines.push({
      date: this.now().toISOString().slice(0, 10),
      terminal: h.terminal,
      rrn: h.rrn,
      stan: h.stan,
      type,
      amount: h.amount,
      currency: h.currency,
      authorization_code: h.authCode,
    });
  }

  /** The answer to a sign-on or echo; `refuse` answers a sign-on 91. */
  network(m: Message, refuse: boolean): Message {
    const info = m.fields[70];
    if (info === NETWORK.signOn && refuse) return code39(m, '91');
    return code39(m, info === NETWORK.signOn || info === NETWORK.echo || info === NETWORK.signOff ? '00' : '12');
  }
}
