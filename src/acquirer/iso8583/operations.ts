import { eciFor, type TransStatus } from '../../domain/card.ts';
import type { CardData, Outcome, ThreeDsResult } from '../connector.ts';
import type { Message } from './codec.ts';
import { currencyField, ECOMMERCE_ENTRY, expiryField, originalData, PROCESSING, secureField, transmissionTime } from './fields.ts';
import type { JournalEntry, LinkJournal, MessageKind } from './journal.ts';
import { LinkUnknown, type Link } from './link.ts';
import { outcomeOf } from './responses.ts';
import { checkAnswer, type AnswerCheck } from './checks.ts';

/**
 * The ISO 8583 operations of one project's binding, shaped as the operation-id contract of the
 * money core (operation_id, idempotency, follow-ups with their own amount, reverse, inquire).
 * Every financial message is written to the journal before it goes out: the same operation id
 * is the same message (same STAN, RRN and field 7), sent again, and the host answers it as before.
 */

export interface Binding {
  /** iso8583://HOST:PORT */
  acquirer: string;
  terminal_id: string;
  card_acceptor_id: string;
  /** refuse payments that were not authenticated by 3-D Secure (every payment, until a 3-D Secure server is connected) */
  refuse_unauthenticated?: boolean;
}

export interface Operation {
  operation_id: string;
  project_id: string;
  transaction_id: string;
  amount: number;
  currency: string;
  now: Date;
}

/** What an authorization's reference holds: enough to name it in field 90 with no lookup. */
export interface AuthRef {
  kind: MessageKind;
  mti: string;
  stan: string;
  transmission: string;
  rrn: string;
}

const referenceOf = (e: Pick<JournalEntry, 'kind' | 'mti' | 'stan' | 'transmission' | 'rrn'>) =>
  `iso:${e.kind}:${e.mti}:${e.stan}:${e.transmission}:${e.rrn}`;

export function parseReference(ref: string | undefined): AuthRef | undefined {
  const m = /^iso:(preauth|sale|completion|refund):(\d{4}):(\d{6}):(\d{10}):([A-Za-z0-9]{12})$/.exec(ref ?? '');
  return m ? { kind: m[1] as MessageKind, mti: m[2], stan: m[3], transmission: m[4], rrn: m[5] } : undefined;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/** RRN: last digit of the year, day of the year, hour, STAN: unique per terminal and day (an12). */
function rrnOf(d: Date, stan: string): string {
  const start = Date.UTC(d.getUTCFullYear(), 0, 0);
  const ddd = String(Math.floor((d.getTime() - start) / 86_400_000)).padStart(3, '0');
  return String(d.getUTCFullYear() % 10) + ddd + String(d.getUTCHours()).padStart(2, '0') + stan;
}

/** How many times a reversal is sent (0400, then 0401 repeats) before its outcome is left unknown. */
const REVERSAL_TRIES = 4;

const refused = (code: string, description: string): Outcome => ({
  status: 'declined',
  reason: 'authentication_failed',
  response_code: code,
  response_code_description: description,
});

/** Field 48 of an authorization: the ECI, and what EMV 3-D Secure gave (AV for Y and A, DS, VR). */
function secureOf(card: Pick<CardData, 'brand'>, three: ThreeDsResult) {
  const emv = three.emv;
  const authenticated = three.trans_status === 'Y' || three.trans_status === 'A';
  return {
    eci: three.eci ?? eciFor(card.brand, 'U'),
    ...(authenticated && emv?.authentication_value ? { authenticationValue: emv.authentication_value } : {}),
    ...(emv?.ds_trans_id ? { dsTransactionId: emv.ds_trans_id } : {}),
    ...(emv ? { version: emv.version } : {}),
  };
}

export class IsoOperations {
  constructor(
    private link: Link,
    private journal: LinkJournal,
    private binding: Binding,
  ) {}

  async authorize(req: Operation & { card: CardData; three_ds: ThreeDsResult; capture: boolean }): Promise<Outcome> {
    const authenticated: TransStatus[] = ['Y', 'A'];
    if (this.binding.refuse_unauthenticated && !authenticated.includes(req.three_ds.trans_status))
      return refused('3DS-U', 'not authenticated by 3-D Secure: this live project refuses unauthenticated payments');
    const currency = currencyField(req.currency);
    if (!currency) return outcomeOf('12', undefined);
    const kind: MessageKind = req.capture ? 'sale' : 'preauth';
    return this.send(req, kind, null, (e) => ({
      mti: req.capture ? '0200' : '0100',
      fields: {
        2: req.card.pan,
        3: PROCESSING.purchase,
        4: String(req.amount),
        ...this.stamp(e),
        14: expiryField(req.card.expiry),
        22: ECOMMERCE_ENTRY,
        37: e.rrn,
        48: secureField(secureOf(req.card, req.three_ds)),
        49: currency,
      },
    }));
  }

  capture(req: Operation & { reference: string }) {
    return this.followUp(req, 'completion', '0220', PROCESSING.purchase);
  }

  refund(req: Operation & { reference: string }) {
    return this.followUp(req, 'refund', '0200', PROCESSING.refund);
  }

  /** A void of a pre-authorization is its reversal. */
  void(req: Operation & { reference: string }) {
    const orig = parseReference(req.reference);
    if (!orig) return Promise.resolve(outcomeOf('12'));
    return this.reversal(req, orig);
  }

  /** Cancels an operation whose answer was lost: the original is found by its operation id in the journal. */
  async reverse(req: Operation & { original_operation_id: string }): Promise<Outcome> {
    const orig = await this.journal.find(req.project_id, req.original_operation_id);
    // never sent: there is nothing at the host to cancel
    if (!orig) return { status: 'accepted', response_code: '00', response_code_description: 'Nothing to reverse: never sent' };
    return this.reversal(req, orig);
  }

  /** The answer of an earlier operation: from the journal (not_found: never sent), or by sending the unanswered message again. */
  async inquire(req: { operation_id: string; project_id: string; now: Date }): Promise<Outcome> {
    const e = await this.journal.find(req.project_id, req.operation_id);
    if (!e) return { status: 'not_found', response_code: '25', response_code_description: 'Never sent' };
    if (e.response_code) return outcomeOf(e.response_code, referenceOf(e));
    // an authorization cannot be sent again without the card: its recovery is reverse()
    if (e.kind === 'preauth' || e.kind === 'sale') throw new LinkUnknown('the authorization was never answered');
    return this.exchange(e, this.rebuild(e));
  }

  private stamp(e: Pick<JournalEntry, 'stan' | 'transmission'>): Record<number, string> {
    const t = e.transmission;
    return { 7: t, 11: e.stan, 12: t.slice(4), 13: t.slice(0, 4), 41: this.binding.terminal_id, 42: this.binding.card_acceptor_id };
  }

  private async followUp(req: Operation & { reference: string }, kind: MessageKind, mti: string, processing: string): Promise<Outcome> {
    const orig = parseReference(req.reference);
    const currency = currencyField(req.currency);
    if (!orig || !currency) return outcomeOf('12');
    return this.send(req, kind, orig, (e) => ({
      mti,
      fields: { 3: processing, 4: String(req.amount), ...this.stamp(e), 37: e.rrn, 49: currency, 90: originalData(orig) },
    }));
  }

  private async reversal(req: Operation, orig: AuthRef): Promise<Outcome> {
    const currency = currencyField(req.currency) ?? '000';
    return this.send(req, 'reversal', orig, (e) => ({
      mti: '0400',
      fields: { 4: String(req.amount), ...this.stamp(e), 37: e.rrn, 49: currency, 90: originalData(orig) },
    }));
  }

  /** A message as it was first sent, from its journal row (follow-ups and reversals). */
  private rebuild(e: JournalEntry): Message {
    const fields: Record<number, string> = { 4: String(e.amount), ...this.stamp(e), 37: e.rrn, 49: currencyField(e.currency) ?? '000' };
    if (e.original_data) fields[90] = e.original_data;
    if (e.kind !== 'reversal') fields[3] = e.kind === 'refund' ? PROCESSING.refund : PROCESSING.purchase;
    return { mti: e.mti, fields };
  }

  /**
   * Journal first, then the message, then its answer. The row is written with the next STAN at
   * once (one round trip); an operation journaled before keeps its own row, which the write
   * answers instead (its drawn STAN is left unused): answered, it is answered from it, else its
   * message is sent again as it was.
   */
  private async send(req: Operation, kind: MessageKind, orig: AuthRef | null, build: (e: JournalEntry) => Message): Promise<Outcome> {
    // field 7 and the STAN's day are wall time: the host's clock, not a test project's
    const sent = new Date();
    const day = dayOf(sent);
    const stan = String(await this.journal.nextStan(this.binding.terminal_id, day)).padStart(6, '0');
    const e = await this.journal.record(
      {
        operation_id: req.operation_id,
        project_id: req.project_id,
        transaction_id: req.transaction_id,
        acquirer: this.binding.acquirer,
        terminal_id: this.binding.terminal_id,
        day,
        stan,
        rrn: rrnOf(sent, stan),
        mti: kind === 'preauth' ? '0100' : kind === 'completion' ? '0220' : kind === 'reversal' ? '0400' : '0200',
        transmission: transmissionTime(sent),
        kind,
        amount: req.amount,
        currency: req.currency,
        original_rrn: orig?.rrn ?? null,
        original_kind: orig?.kind ?? null,
        original_data: orig ? originalData(orig) : null,
        response_code: null,
        authorization_code: null,
      },
      req.now,
    );
    if (e.response_code) return outcomeOf(e.response_code, referenceOf(e));
    return this.exchange(e, build(e));
  }

  /**
   * Sends the message and takes its answer once it is checked against the request (checks.ts).
   * An authorization's answer that does not match, or approves only part of the amount, is not
   * applied: the outcome asks Tender to reverse it (`reverse`), and the journal keeps no answer
   * (what Tender took from the host is what reconciles). Any other message's mismatched answer is
   * no answer: a reversal is sent again (0401), a follow-up is left to recovery's inquiry.
   */
  private async exchange(e: JournalEntry, m: Message): Promise<Outcome> {
    let answer: Message | undefined;
    let problems: string[] = [];
    if (e.kind === 'reversal') {
      // a reversal is sent until answered: 0400, then 0401 repeats of the same message
      for (let i = 0; i < REVERSAL_TRIES && !answer; i++) {
        try {
          const sent = i === 0 ? m : { ...m, mti: '0401' };
          answer = await this.link.request(sent);
          problems = checkAnswer(sent, answer).problems;
          if (problems.length) answer = undefined;
        } catch (err) {
          if (i === REVERSAL_TRIES - 1) throw err;
        }
      }
      if (!answer) throw new LinkUnknown(`the reversal's answers did not match it: ${problems.join('; ')}`);
    } else {
      answer = await this.link.request(m);
    }
    const code = answer.fields[39]?.trim() || '96';
    const check = checkAnswer(m, answer);
    if (e.kind === 'preauth' || e.kind === 'sale') {
      const refused = refusedAnswer(code, check, e.amount, referenceOf(e));
      if (refused) return refused;
    } else if (check.problems.length || code === '10')
      throw new LinkUnknown(`the acquirer's answer did not match the request: ${check.problems.join('; ') || 'a partial approval'}`);
    const approval = answer.fields[38]?.trim() || null;
    await this.journal.answered(e.project_id, e.operation_id, code, approval, new Date());
    return outcomeOf(code, referenceOf(e));
  }
}

/**
 * An authorization's answer Tender does not take: a mismatch (declined, processing_error, the
 * full amount reversed) or a partial approval (declined with its code 10, the approved amount
 * reversed: Tender's e-commerce requests never offer partial approval).
 */
function refusedAnswer(code: string, check: AnswerCheck, amount: number, reference: string): Outcome | undefined {
  if (check.problems.length)
    return {
      status: 'declined',
      reason: 'processing_error',
      response_code: code,
      response_code_description: `The acquirer's answer did not match the request (${check.problems.join('; ')}): reversed`,
      reference,
      reverse: { amount },
    };
  if (code !== '10') return undefined;
  const approved = check.partial ?? amount;
  return {
    status: 'declined',
    reason: 'declined',
    response_code: code,
    response_code_description: `Approved for partial amount (${approved} of ${amount}): Tender takes no partial approvals; reversed`,
    reference,
    reverse: { amount: approved },
  };
}
