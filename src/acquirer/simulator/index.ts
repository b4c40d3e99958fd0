import { randomUUID } from 'node:crypto';
import { detectBrands, eciFor, isExpired, liabilityShift, luhnValid, type TransStatus } from '../../domain/card.ts';
import type { Authenticator } from '../authenticator.ts';
import type { Capabilities, CardData, Connector, OperationKind, Outcome, Reason, ThreeDsResult } from '../connector.ts';
import { CHALLENGE_CODE, testCard } from './cards.ts';

/**
 * The simulated acquirer and 3-D Secure ACS of test projects. Deterministic: the outcome
 * depends only on the card (see cards.ts) and the project's clock. It keeps what it did per
 * operation id (in memory, the latest MEMORY operations), so the same operation sent twice
 * moves money once and answers the same; after a restart of the process it has forgotten them
 * (an inquiry then answers not_found for anything but an authorization reference it made).
 *
 * An operation it is asked about (inquire) or told to reverse before it arrived is closed: if
 * the call comes after all (a network that held it back), it is refused and moves nothing. So
 * "not found" stays true once said, whatever the network does with the call that was late, as a
 * real host's refusal of a message it already answered for by inquiry or reversal.
 */

/** ISO 8583 response codes of each outcome. */
const RESPONSES: Record<
  'approved' | 'in_progress' | 'invalid_card' | 'not_found' | 'closed' | Exclude<Reason, 'authentication_failed'>,
  { code: string; description: string }
> = {
  approved: { code: '00', description: 'Approved' },
  in_progress: { code: '09', description: 'Request in progress' },
  invalid_card: { code: '14', description: 'Invalid card number' },
  not_found: { code: '25', description: 'Unable to locate record' },
  closed: { code: '12', description: 'Invalid transaction: already asked about or reversed before it arrived' },
  declined: { code: '05', description: 'Do not honor' },
  insufficient_funds: { code: '51', description: 'Insufficient funds' },
  expired_card: { code: '54', description: 'Expired card' },
  incorrect_cvc: { code: 'N7', description: 'Decline for CVV2 failure' },
  processing_error: { code: '96', description: 'System malfunction' },
};

const answer = (status: Outcome['status'], key: keyof typeof RESPONSES, reason?: Reason, reference?: string): Outcome => ({
  status,
  ...(reason ? { reason } : {}),
  response_code: RESPONSES[key].code,
  response_code_description: RESPONSES[key].description,
  ...(reference ? { reference } : {}),
});

function threeDs(brand: string, s: TransStatus): ThreeDsResult {
  if (s === 'C') return { trans_status: 'C', liability_shift: false };
  return { trans_status: s, eci: eciFor(brand, s), liability_shift: liabilityShift(s) };
}

/** 3-D Secure of a card: the table's behaviour, else frictionless Y. */
export function decideAuthentication(card: Pick<CardData, 'pan' | 'brand'>): ThreeDsResult {
  return threeDs(card.brand, testCard(card.pan)?.three_ds ?? 'Y');
}

/** The challenge passes with the one code, whatever the card; anything else is N. */
export function decideChallenge(card: Pick<CardData, 'brand'>, code: string): ThreeDsResult {
  return threeDs(card.brand, code === CHALLENGE_CODE ? 'Y' : 'N');
}

const LATE = 'sim-late-';
/** an authorization whose captures and refunds answer processing (the processing_follow_ups card) */
const SLOW_FOLLOW_UPS = 'sim-auth-pf-';

/** The authorization decision: expiry, then the test card table, else approve any valid card. */
export function decideAuthorization(card: Pick<CardData, 'pan' | 'expiry'>, now: Date): Outcome {
  if (!luhnValid(card.pan) || !detectBrands(card.pan)) return answer('declined', 'invalid_card', 'declined');
  if (isExpired(card.expiry, now)) return answer('declined', 'expired_card', 'expired_card');
  const t = testCard(card.pan);
  if (t?.fault === 'processing_follow_ups') return answer('accepted', 'approved', undefined, `${SLOW_FOLLOW_UPS}${randomUUID()}`);
  if (!t || t.result === 'accepted' || t.fault === 'lost_answer')
    return answer('accepted', 'approved', undefined, `sim-auth-${randomUUID()}`);
  if (t.result === 'late_decline') return answer('processing', 'in_progress', undefined, `${LATE}${randomUUID()}`);
  const reason = t.reason ?? 'declined';
  return answer(t.result, reason === 'authentication_failed' ? 'declined' : reason, reason);
}

/** The later answer of an authorization that was in progress: the late-decline card declines. */
export function decideInquiry(reference: string): Outcome {
  return reference.startsWith(LATE)
    ? answer('declined', 'declined', 'declined', reference)
    : answer('accepted', 'approved', undefined, reference);
}

// several captures: a pre-authorization captured per order line, as the BNPL providers do (docs/money.md)
export const SIMULATOR_CAPABILITIES: Capabilities = {
  partial_capture: true,
  multiple_captures: true,
  partial_refund: true,
  void: true,
  three_ds: true,
  late_answers: true,
  notifications: false,
};

/** One operation as the simulated acquirer did it: what a test compares with Tender's records. */
export interface SimulatedOperation {
  operation_id: string;
  kind: OperationKind;
  amount: number;
  outcome: Outcome;
  /** when a processing operation settles (ms since the epoch, wall clock) */
  settles?: number;
}

/** No answer: the simulated network lost it (the lost-answer test card). */
class LostAnswer extends Error {
  constructor() {
    super('the acquirer did not answer');
  }
}

const MEMORY = 200_000;

export interface SimulatorOptions {
  /** the slow card's delay (config acquirer.simSlowMs) */
  slowMs?: number;
  /** how long processing captures and refunds take to settle (config acquirer.simSettleMs) */
  settleMs?: number;
}

/** The sandbox's acquirer and its simulated ACS (the 3-D Secure boundary, authenticator.ts): one object, two boundaries. */
export type Simulator = Connector & Authenticator & { readonly operations: ReadonlyMap<string, SimulatedOperation> };

export function createSimulator(opts: SimulatorOptions = {}): Simulator {
  const slowMs = opts.slowMs ?? 10_000;
  const settleMs = opts.settleMs ?? 3000;
  const done = new Map<string, SimulatedOperation>();
  /** operation ids asked about or reversed before they arrived: refused if they come later */
  const closed = new Set<string>();
  const close = (id: string) => {
    if (done.has(id)) return;
    if (closed.size >= MEMORY) closed.delete(closed.values().next().value!);
    closed.add(id);
  };
  const CLOSED = answer('error', 'closed', 'processing_error');
  const remember = (op: SimulatedOperation) => {
    if (done.size >= MEMORY) done.delete(done.keys().next().value!);
    done.set(op.operation_id, op);
    return op.outcome;
  };
  /** Once per operation id: the same id again answers what it answered the first time. */
  const once = (id: string, kind: OperationKind, amount: number, decide: () => SimulatedOperation['outcome'], settles?: number) => {
    const seen = done.get(id);
    if (seen) return current(seen);
    if (closed.has(id)) return CLOSED;
    return remember({ operation_id: id, kind, amount, outcome: decide(), ...(settles ? { settles } : {}) });
  };
  const current = (op: SimulatedOperation): Outcome => {
    if (op.outcome.status !== 'processing' || op.kind === 'authorization') return op.outcome;
    if (op.settles && Date.now() >= op.settles) {
      op.outcome = answer('accepted', 'approved', undefined, op.outcome.reference);
      delete op.settles;
    }
    return op.outcome;
  };
  const followUp = (kind: 'capture' | 'void' | 'refund') => async (req: { operation_id: string; amount: number; reference: string }) => {
    const slow = kind !== 'void' && req.reference.startsWith(SLOW_FOLLOW_UPS);
    const reference = `sim-${kind}-${randomUUID()}`;
    return once(
      req.operation_id,
      kind,
      req.amount,
      () => (slow ? answer('processing', 'in_progress', undefined, reference) : answer('accepted', 'approved', undefined, reference)),
      slow ? Date.now() + settleMs : undefined,
    );
  };
  return {
    name: 'simulator',
    capabilities: SIMULATOR_CAPABILITIES,
    operations: done,
    authenticate3ds: async (req) => (req.challenge ? threeDs(req.card.brand, 'C') : decideAuthentication(req.card)),
    completeChallenge: async (req) => decideChallenge(req.card, req.answer),
    async authorize(req) {
      const fault = testCard(req.card.pan)?.fault;
      if (fault === 'slow') await new Promise((r) => setTimeout(r, slowMs));
      const outcome = once(req.operation_id, 'authorization', req.amount, () => decideAuthorization(req.card, req.now));
      if (fault === 'lost_answer') throw new LostAnswer();
      return outcome;
    },
    capture: followUp('capture'),
    void: followUp('void'),
    refund: followUp('refund'),
    async inquire(req) {
      const seen = done.get(req.operation_id);
      if (seen) {
        const now = current(seen);
        // a late-decline authorization has its final answer when asked again
        if (seen.kind === 'authorization' && now.status === 'processing' && now.reference)
          return (seen.outcome = decideInquiry(now.reference));
        return now;
      }
      if (req.kind === 'authorization' && req.reference) return decideInquiry(req.reference);
      close(req.operation_id);
      return answer('not_found', 'not_found');
    },
    async reverse(req) {
      return once(req.operation_id, 'reversal', req.amount, () => {
        close(req.original_operation_id);
        const original = done.get(req.original_operation_id);
        // a reversal undoes the authorization: it no longer counts as money that moved
        if (original?.outcome.status === 'accepted') original.outcome = answer('declined', 'processing_error', 'processing_error');
        return answer('accepted', 'approved', undefined, `sim-reversal-${randomUUID()}`);
      });
    },
  };
}

/** The simulator of tests and one-off commands (the service builds its own from config). */
export const simulator = createSimulator();
