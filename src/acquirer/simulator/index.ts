import { randomUUID } from 'node:crypto';
import { detectBrands, eciFor, isExpired, liabilityShift, luhnValid, type TransStatus } from '../../domain/card.ts';
import type { CardData, Connector, Outcome, Reason, ThreeDsResult } from '../connector.ts';
import { CHALLENGE_CODE, testCard } from './cards.ts';

/**
 * The simulated acquirer and 3-D Secure ACS of test projects. Deterministic: the outcome
 * depends only on the card (see cards.ts) and the project's clock.
 */

/** ISO 8583 response codes of each outcome. */
const RESPONSES: Record<
  'approved' | 'in_progress' | 'invalid_card' | Exclude<Reason, 'authentication_failed'>,
  { code: string; description: string }
> = {
  approved: { code: '00', description: 'Approved' },
  in_progress: { code: '09', description: 'Request in progress' },
  invalid_card: { code: '14', description: 'Invalid card number' },
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

/** The authorization decision: expiry, then the test card table, else approve any valid card. */
export function decideAuthorization(card: Pick<CardData, 'pan' | 'expiry'>, now: Date): Outcome {
  if (!luhnValid(card.pan) || !detectBrands(card.pan)) return answer('declined', 'invalid_card', 'declined');
  if (isExpired(card.expiry, now)) return answer('declined', 'expired_card', 'expired_card');
  const t = testCard(card.pan);
  if (!t || t.result === 'accepted') return answer('accepted', 'approved', undefined, `sim-auth-${randomUUID()}`);
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

const done = (op: string): Outcome => answer('accepted', 'approved', undefined, `sim-${op}-${randomUUID()}`);

export const simulator: Connector = {
  name: 'simulator',
  authenticate3ds: async (req) => decideAuthentication(req.card),
  completeChallenge: async (req) => decideChallenge(req.card, req.answer),
  authorize: async (req) => decideAuthorization(req.card, req.now),
  inquire: async (req) => decideInquiry(req.reference),
  capture: async () => done('capture'),
  void: async () => done('void'),
  refund: async () => done('refund'),
};
