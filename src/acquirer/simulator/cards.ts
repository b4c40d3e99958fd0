import type { TransStatus } from '../../domain/card.ts';
import type { Reason } from '../connector.ts';

/**
 * The simulator's test cards: docs/design.md "The simulated acquirer", as data. Any other
 * Luhn-valid PAN of a known brand approves with frictionless 3-D Secure (Y).
 * Served by GET /v1/test/cards/ and copied into the README.
 */
export interface TestCard {
  pan: string;
  brands: string[];
  /** 3-D Secure outcome: Y frictionless, C challenge, U not enrolled, R rejected */
  three_ds: Extract<TransStatus, 'Y' | 'C' | 'U' | 'R'>;
  /** what the authorization answers (after a passed challenge) */
  result: 'accepted' | 'declined' | 'error' | 'late_decline';
  reason?: Reason;
  /** a fault of the acquirer over a network (docs/reliability.md "The acquirer over a network") */
  fault?: 'slow' | 'lost_answer' | 'processing_follow_ups';
  description: string;
}

/** The code that passes a simulated challenge; anything else fails it. */
export const CHALLENGE_CODE = '1234';

export const TEST_CARDS: readonly TestCard[] = [
  { pan: '4111111111111111', brands: ['visa'], three_ds: 'Y', result: 'accepted', description: 'Visa, approved' },
  { pan: '4242424242424242', brands: ['visa'], three_ds: 'Y', result: 'accepted', description: 'Visa, approved' },
  { pan: '5555555555554444', brands: ['mastercard'], three_ds: 'Y', result: 'accepted', description: 'Mastercard, approved' },
  { pan: '2223003122003222', brands: ['mastercard'], three_ds: 'Y', result: 'accepted', description: 'Mastercard (2-series), approved' },
  { pan: '378282246310005', brands: ['amex'], three_ds: 'Y', result: 'accepted', description: 'American Express, approved' },
  {
    pan: '4000002500001001',
    brands: ['cartes_bancaires', 'visa'],
    three_ds: 'Y',
    result: 'accepted',
    description: 'Cartes Bancaires co-badged with Visa, approved',
  },
  {
    pan: '4000002760003184',
    brands: ['visa'],
    three_ds: 'C',
    result: 'accepted',
    description: `3-D Secure challenge: code ${CHALLENGE_CODE} passes and approves, any other code fails (declined, authentication_failed)`,
  },
  {
    pan: '4000000000003055',
    brands: ['visa'],
    three_ds: 'U',
    result: 'accepted',
    description: 'not enrolled in 3-D Secure (U): approved without liability shift',
  },
  {
    pan: '4000000000003063',
    brands: ['visa'],
    three_ds: 'R',
    result: 'declined',
    reason: 'authentication_failed',
    description: '3-D Secure rejected (R): declined before authorization',
  },
  {
    pan: '4000000000000002',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'declined',
    reason: 'declined',
    description: 'declined by the issuer',
  },
  {
    pan: '4000000000009995',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'declined',
    reason: 'insufficient_funds',
    description: 'declined: insufficient funds',
  },
  {
    pan: '4000000000000069',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'declined',
    reason: 'expired_card',
    description: 'declined: expired card',
  },
  {
    pan: '4000000000000127',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'declined',
    reason: 'incorrect_cvc',
    description: 'declined: incorrect CVC',
  },
  {
    pan: '4000000000000119',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'error',
    reason: 'processing_error',
    description: 'processing error at the acquirer',
  },
  {
    pan: '4000000000000341',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'late_decline',
    reason: 'declined',
    description: 'late decline: stays processing for a few seconds (LATE_DECLINE_MS), then declined; reported by webhook',
  },
  {
    pan: '4000008260003178',
    brands: ['visa'],
    three_ds: 'C',
    result: 'declined',
    reason: 'insufficient_funds',
    description: `3-D Secure challenge (code ${CHALLENGE_CODE}), then declined: insufficient funds`,
  },
  {
    pan: '4000000000001018',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'accepted',
    fault: 'slow',
    description: 'a slow acquirer: the authorization answers after 10 seconds (SIM_SLOW_MS), approved',
  },
  {
    pan: '4000000000001026',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'error',
    reason: 'processing_error',
    fault: 'lost_answer',
    description:
      "the authorization's answer is lost: the payment shows processing, then the authorization is reversed and declined (processing_error)",
  },
  {
    pan: '4000000000001034',
    brands: ['visa'],
    three_ds: 'Y',
    result: 'accepted',
    fault: 'processing_follow_ups',
    description: 'approved; its captures and refunds answer processing and settle a few seconds later (SIM_SETTLE_MS), by webhook',
  },
];

const BY_PAN = new Map(TEST_CARDS.map((c) => [c.pan, c]));
export const testCard = (pan: string) => BY_PAN.get(pan);
