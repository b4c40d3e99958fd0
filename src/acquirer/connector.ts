import { createHash } from 'node:crypto';
import type { EmvResult, TransStatus } from '../domain/card.ts';
import type { OperationKind } from '../domain/attempts.ts';

/**
 * The boundary to an acquirer. The simulator implements it for test projects; a real acquirer
 * plugs in behind the same interface for live projects (docs/design.md "Who uses it"). 3-D Secure
 * is not the acquirer's: it has its own boundary beside this one (authenticator.ts).
 *
 * The contract, in short (docs/money.md "Acquirer attempts"):
 * - Every call is one OPERATION with Tender's own `operation_id` (the attempt's id, recorded and
 *   committed before the call) and an `idempotency_key` derived from it (idempotencyKeyOf). The
 *   same operation id sent again is the same operation: the acquirer moves money once and
 *   answers as it did the first time. A connector must honour this (the conformance kit,
 *   test/helpers/conformance.ts, checks it).
 * - Capture, void and refund name the original authorization by its acquirer `reference`, and
 *   carry their own `amount` (partial operations, where capabilities allow).
 * - A THROW means "no answer": the money may or may not have moved. Tender keeps the attempt
 *   `processing` and later asks with inquire() (or, for an authorization, reverse()). A definite
 *   refusal is an Outcome with status declined or error, never a throw.
 * - `processing` answers "accepted for later": the final answer comes from inquire() or an
 *   inbound notification (notification()).
 * - No call is made inside a database transaction or under a row lock; a connector may take
 *   its time (within TENDER_ACQUIRER_TIMEOUT_MS, after which Tender treats it as no answer).
 * - Capabilities are declared, and Tender refuses with a clear error, before any call, what
 *   the project's connector cannot do.
 */

/** Why a payment did not succeed, as transactions show it in `reason`. */
export type Reason = 'declined' | 'insufficient_funds' | 'expired_card' | 'incorrect_cvc' | 'processing_error' | 'authentication_failed';

export interface CardData {
  pan: string;
  /** MMYYYY */
  expiry: string;
  cvc?: string;
  name?: string;
  brand: string;
}

/** The kinds of acquirer operation Tender records as attempts. */
export type { OperationKind } from '../domain/attempts.ts';

/** What a connector can do; Tender refuses the rest before any call. */
export interface Capabilities {
  /** capture less than the authorized amount */
  partial_capture: boolean;
  /** more than one capture on one authorization */
  multiple_captures: boolean;
  /** refund less than what was captured (and more than once) */
  partial_refund: boolean;
  /** release (part of) an authorization before capture */
  void: boolean;
  /** 3-D Secure through this connector's own acquirer (not the project's authenticator, authenticator.ts) */
  three_ds: boolean;
  /** may answer `processing`, the final answer coming from inquire() or a notification */
  late_answers: boolean;
  /** sends its own later messages about operations (notification()) */
  notifications: boolean;
}

/** What every request names: the operation, the payment and its money. */
export interface OperationRef {
  /** Tender's id of this operation (the attempt's id): the same id twice is the same operation */
  operation_id: string;
  /** idempotencyKeyOf(operation_id): what the acquirer dedupes on */
  idempotency_key: string;
  project_id: string;
  transaction_id: string;
  /** minor units: this operation's own amount (a partial capture's, a partial refund's) */
  amount: number;
  currency: string;
  /** the project's clock */
  now: Date;
  /** the transaction's payment method (credit-card, wallet-a-pay...), for metrics; a connector need not read it */
  payment_method?: string;
}

/** An operation on an earlier authorization: capture, void, refund, reversal. */
export interface FollowUpRef extends OperationRef {
  /** the acquirer's reference of the original authorization */
  reference: string;
}

export interface ThreeDsResult {
  /** Y A N U R, or C when the customer must answer a challenge first */
  trans_status: TransStatus;
  eci?: string;
  liability_shift: boolean;
  /** EMV 3-D Secure (live projects): what the authorization carries and a challenge needs */
  emv?: EmvResult;
}

export interface Outcome {
  /**
   * accepted / declined / error: final. processing: the answer comes later (inquire, notification).
   * not_found: only from inquire(): the acquirer never received the operation (nothing moved).
   */
  status: 'accepted' | 'declined' | 'error' | 'processing' | 'not_found';
  reason?: Reason;
  response_code: string;
  response_code_description: string;
  /** the acquirer's id of the operation (an authorization's is what follow-ups name) */
  reference?: string;
  /**
   * Only on an authorization's answer that must not be applied as it came (a partial approval, an
   * answer that does not match its request): the status is declined or error, and Tender reverses
   * `amount` (what the acquirer may hold) at once, as an attempt of its own.
   */
  reverse?: { amount: number };
}

/** An acquirer's own later message about an operation (a webhook to Tender, a settlement file line). */
export interface InboundNotification {
  /** the operation it is about (the acquirer echoes the idempotency key or operation id) */
  operation_id: string;
  outcome: Outcome;
}

export interface Connector {
  readonly name: string;
  readonly capabilities: Capabilities;
  /**
   * True while the link to the acquirer is known to be down (it was lost, or never came up, and
   * has not signed on since): a call now would not reach it, so Tender does not make it and the
   * payment fails at once, nothing charged (services/payments/attempts/call.ts sendFirstCall). Absent:
   * the connector has no link of its own (the simulator, an HTTP acquirer).
   */
  linkDown?(): boolean;
  /** capture: false for a pre-authorization (capture_mode manual or delayed). */
  authorize(req: OperationRef & { card: CardData; three_ds: ThreeDsResult; capture: boolean }): Promise<Outcome>;
  capture(req: FollowUpRef): Promise<Outcome>;
  void(req: FollowUpRef): Promise<Outcome>;
  refund(req: FollowUpRef): Promise<Outcome>;
  /**
   * The acquirer's present answer about an earlier operation, named by its operation id (and its
   * reference when one came back): final, still processing, or not_found (never received).
   */
  inquire(req: {
    operation_id: string;
    idempotency_key: string;
    kind: OperationKind;
    project_id: string;
    reference?: string;
    now: Date;
  }): Promise<Outcome>;
  /**
   * Cancels an authorization whose answer never came (or came too late to use): `original` is
   * the authorization's operation id; `reference` may be empty when no answer ever came.
   */
  reverse(req: Omit<FollowUpRef, 'reference'> & { original_operation_id: string; reference?: string }): Promise<Outcome>;
  /**
   * Reads an acquirer's inbound message (the body and headers it sent to Tender). Only for
   * connectors with capabilities.notifications; undefined when the message is not theirs.
   */
  notification?(message: { headers: Record<string, string>; body: string }): InboundNotification[] | undefined;
}

/** The idempotency key of an operation: stable for its id, 32 hex digits (fits most acquirers' fields). */
export const idempotencyKeyOf = (operationId: string) =>
  createHash('sha256').update(`tender-operation:${operationId}`).digest('hex').slice(0, 32);

/** An operation the project's connector cannot do (see Capabilities): refused before any call. */
export const capabilityProblem = (
  caps: Capabilities,
  op: { kind: 'capture' | 'void' | 'refund' | 'three_ds'; amount?: number; of?: number; earlier?: number },
): string | undefined => {
  if (op.kind === 'void' && !caps.void) return 'the acquirer of this project cannot void an authorization; capture and refund it instead';
  if (op.kind === 'three_ds' && !caps.three_ds) return 'the acquirer of this project does not do 3-D Secure';
  const partial = op.amount !== undefined && op.of !== undefined && op.amount < op.of;
  if (op.kind === 'capture' && partial && !caps.partial_capture) return 'the acquirer of this project captures only the whole amount';
  if (op.kind === 'capture' && (op.earlier ?? 0) > 0 && !caps.multiple_captures)
    return 'the acquirer of this project captures an authorization only once';
  if (op.kind === 'refund' && (partial || (op.earlier ?? 0) > 0) && !caps.partial_refund)
    return 'the acquirer of this project refunds only the whole captured amount, once';
  return undefined;
};
