/**
 * `tender payouts booked FILE` (docs/payouts.md "Bank files in"): the bank's statement
 * (camt.053.001.08) books payouts or shows them returned, its status report (pain.002.001.10)
 * rejects them. The file is read whole before anything changes (a broken or foreign one changes
 * nothing), then applied in one transaction. A returned or rejected payout gives its money back
 * to the available balance of each project it took it from, by a new journal. A line that
 * matches no payout, or contradicts what the store holds, is reported and changes nothing; a
 * file read again finds every payout already where it says.
 */
import type { Ctx } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import { payoutLegs } from '../../domain/ledger.ts';
import { readBankFile as parse, type Rejection, type StatementLine } from '../../domain/payouts/bankfiles.ts';
import { bankOutcome, givesMoneyBack, type BankEvent } from '../../domain/payouts/states.ts';
import * as store from '../../store/payouts/payouts.ts';

export type UnmatchedReason =
  | 'unknown_end_to_end_id'
  | 'unknown_message'
  | 'amount_mismatch'
  | 'currency_mismatch'
  | 'account_mismatch'
  | 'not_sent'
  | 'final_state'
  | 'reversal';

export interface Applied {
  payout_id: string;
  end_to_end_id: string;
  amount: number;
  currency: string;
  /** the payout's state after the file */
  state: string;
  reason?: string;
}

export interface Unmatched {
  end_to_end_id?: string;
  msg_id?: string;
  reason: UnmatchedReason;
  detail: string;
}

export interface BankFileResult {
  file: 'camt.053.001.08' | 'pain.002.001.10';
  message_id: string;
  booked: Applied[];
  returned: Applied[];
  rejected: Applied[];
  /** already in the state the file says: a file read again lands here */
  unchanged: Applied[];
  unmatched: Unmatched[];
  /** entries and statuses that say nothing of a payout (see domain/payouts/bankfiles.ts) */
  ignored: number;
}

const money = (cents: number, currency: string) => `${currency} ${(cents / 100).toFixed(2)}`;

/** Reads one bank file and applies what it says to the payouts it names. */
export async function readBankFile(ctx: Ctx, text: string, now = new Date()): Promise<BankFileResult> {
  const doc = parse(text);
  return ctx.db.tx(async (q) => {
    const result: BankFileResult = {
      file: doc.kind,
      message_id: doc.message_id,
      booked: [],
      returned: [],
      rejected: [],
      unchanged: [],
      unmatched: [],
      ignored: doc.ignored,
    };
    const apply = (p: store.SentPayoutRow, event: BankEvent, reason?: string) => applyEvent(ctx, q, result, p, event, reason, now);
    if (doc.kind === 'camt.053.001.08') {
      for (const line of doc.lines) {
        const p = await matchLine(q, result, line);
        if (p) await apply(p, line.event, line.reason);
      }
    } else {
      for (const r of doc.rejections) for (const p of await matchRejection(q, result, r)) await apply(p, 'rejected', r.reason);
    }
    return result;
  });
}

/** The payout a statement line is about, or undefined once the line is reported unmatched. */
async function matchLine(q: Queryable, result: BankFileResult, line: StatementLine): Promise<store.SentPayoutRow | undefined> {
  const id = line.end_to_end_id;
  const miss = (reason: UnmatchedReason, detail: string) => void result.unmatched.push({ end_to_end_id: id, reason, detail });
  if (line.reversal) return miss('reversal', 'the entry reverses an earlier one (RvslInd): Tender applies no reversal, check it by hand');
  const p = await store.lockPayoutByEndToEndId(q, id);
  if (!p) return miss('unknown_end_to_end_id', `no payout has the EndToEndId ${id}`);
  if (line.account && line.account !== p.debtor_iban)
    return miss('account_mismatch', `the statement is of ${line.account}, the payout was paid from ${p.debtor_iban}`);
  if (line.currency !== p.currency) return miss('currency_mismatch', `the entry is in ${line.currency}, the payout in ${p.currency}`);
  if (line.cents !== Number(p.amount))
    return miss('amount_mismatch', `the entry is ${money(line.cents, line.currency)}, the payout ${money(Number(p.amount), p.currency)}`);
  return p;
}

/** The payouts a rejection is about (all of the file's, of its block, or one), less those reported unmatched. */
async function matchRejection(q: Queryable, result: BankFileResult, r: Rejection): Promise<store.SentPayoutRow[]> {
  const miss = (reason: UnmatchedReason, detail: string) => {
    result.unmatched.push({ ...(r.end_to_end_id ? { end_to_end_id: r.end_to_end_id } : {}), msg_id: r.msg_id, reason, detail });
    return [];
  };
  if (r.scope !== 'transaction') {
    const payouts = await store.lockPayoutsOfMessage(q, r.msg_id);
    if (!payouts.length) return miss('unknown_message', `no payout file has the MsgId ${r.msg_id}`);
    if (r.scope === 'payment' && payouts[0]!.pmt_inf_id !== r.pmt_inf_id)
      return miss('unknown_message', `the file ${r.msg_id} has no payment information block ${r.pmt_inf_id}`);
    return payouts;
  }
  const id = r.end_to_end_id!;
  const p = await store.lockPayoutByEndToEndId(q, id);
  if (!p || p.msg_id !== r.msg_id) return miss('unknown_end_to_end_id', `the file ${r.msg_id} has no payout with the EndToEndId ${id}`);
  if (r.currency !== undefined && r.currency !== p.currency)
    return miss('currency_mismatch', `the report says ${r.currency}, the payout is in ${p.currency}`);
  if (r.cents !== undefined && r.cents !== Number(p.amount))
    return miss('amount_mismatch', `the report says ${money(r.cents, r.currency!)}, the payout is ${money(Number(p.amount), p.currency)}`);
  return [p];
}

async function applyEvent(
  ctx: Ctx,
  q: Queryable,
  result: BankFileResult,
  p: store.SentPayoutRow,
  event: BankEvent,
  reason: string | undefined,
  now: Date,
) {
  const view = (state: string, why?: string | null): Applied => ({
    payout_id: p.id,
    end_to_end_id: p.end_to_end_id,
    amount: Number(p.amount),
    currency: p.currency,
    state,
    ...(why ? { reason: why } : {}),
  });
  const outcome = bankOutcome(p.state, event);
  if (outcome.kind === 'already') return void result.unchanged.push(view(p.state, p.return_reason));
  if (outcome.kind === 'refused') {
    result.unmatched.push({
      end_to_end_id: p.end_to_end_id,
      reason: outcome.reason,
      detail:
        outcome.reason === 'not_sent'
          ? `the payout's file is not written yet (state scheduled): the bank cannot have it`
          : `the payout is ${p.state}: it cannot be ${event} now`,
    });
    return;
  }
  await store.setPayoutState(q, p.id, outcome.to, givesMoneyBack(outcome.to) ? (reason ?? null) : null, now);
  if (givesMoneyBack(outcome.to)) {
    // what the payout took from each project goes back to it: a new journal, the old one stays as it was
    const legs = (await store.payoutTakenByProject(q, p.id)).flatMap((t) =>
      payoutLegs(Number(t.amount), 'payout_return').map((l) => ({ ...l, project_id: t.project_id })),
    );
    if (legs.length) await store.insertPayoutJournal(q, p.id, p.currency, now, legs);
  }
  ctx.log.info({ payout: p.id, from: p.state, to: outcome.to, reason }, 'payout state from the bank');
  const list = outcome.to === 'booked' ? result.booked : outcome.to === 'returned' ? result.returned : result.rejected;
  list.push(view(outcome.to, givesMoneyBack(outcome.to) ? reason : undefined));
}
