import type { Outcome, Reason } from '../connector.ts';

/**
 * Field 39 to Tender's outcome. Codes missing here answer `declined` (a refusal Tender cannot
 * explain better) with the code kept in response_code; docs/acquirer-iso8583.md has the table.
 */
interface Meaning {
  status: Outcome['status'];
  reason?: Reason;
  description: string;
}

const RESPONSE_CODES: Record<string, Meaning> = {
  '00': { status: 'accepted', description: 'Approved' },
  '08': { status: 'accepted', description: 'Honor with identification' },
  '01': { status: 'declined', reason: 'declined', description: 'Refer to card issuer' },
  '03': { status: 'declined', reason: 'declined', description: 'Invalid merchant' },
  '04': { status: 'declined', reason: 'declined', description: 'Pick up card' },
  '05': { status: 'declined', reason: 'declined', description: 'Do not honor' },
  // never taken as an approval: the connector reverses what the host approved (operations.ts)
  '10': { status: 'declined', reason: 'declined', description: 'Approved for partial amount: not taken, reversed' },
  '12': { status: 'declined', reason: 'declined', description: 'Invalid transaction' },
  '13': { status: 'declined', reason: 'declined', description: 'Invalid amount' },
  '14': { status: 'declined', reason: 'declined', description: 'Invalid card number' },
  '25': { status: 'error', reason: 'processing_error', description: 'Unable to locate record' },
  '30': { status: 'error', reason: 'processing_error', description: 'Format error' },
  '41': { status: 'declined', reason: 'declined', description: 'Lost card, pick up' },
  '43': { status: 'declined', reason: 'declined', description: 'Stolen card, pick up' },
  '51': { status: 'declined', reason: 'insufficient_funds', description: 'Insufficient funds' },
  '54': { status: 'declined', reason: 'expired_card', description: 'Expired card' },
  '57': { status: 'declined', reason: 'declined', description: 'Transaction not permitted to cardholder' },
  '58': { status: 'declined', reason: 'declined', description: 'Transaction not permitted to terminal' },
  '61': { status: 'declined', reason: 'insufficient_funds', description: 'Exceeds withdrawal amount limit' },
  '62': { status: 'declined', reason: 'declined', description: 'Restricted card' },
  '65': { status: 'declined', reason: 'declined', description: 'Exceeds withdrawal frequency limit' },
  '82': { status: 'declined', reason: 'incorrect_cvc', description: 'Negative CVV result' },
  '91': { status: 'error', reason: 'processing_error', description: 'Issuer or switch inoperative' },
  '94': { status: 'error', reason: 'processing_error', description: 'Duplicate transmission' },
  '96': { status: 'error', reason: 'processing_error', description: 'System malfunction' },
  N7: { status: 'declined', reason: 'incorrect_cvc', description: 'Decline for CVV2 failure' },
};

export function outcomeOf(code: string, reference?: string): Outcome {
  const m = RESPONSE_CODES[code] ?? {
    status: 'declined' as const,
    reason: 'declined' as const,
    description: 'Declined (unlisted response code)',
  };
  return {
    status: m.status,
    ...(m.reason ? { reason: m.reason } : {}),
    response_code: code,
    response_code_description: m.description,
    ...(reference ? { reference } : {}),
  };
}
