import type { TransStatus } from '../domain/card.ts';
import { ApiError } from '../domain/errors.ts';
import type { ProjectRow } from '../store/projects.ts';
import { simulator } from './simulator/index.ts';

/**
 * The boundary to an acquirer. The simulator implements it for test projects; a real acquirer
 * plugs in behind the same interface for live projects (docs/design.md "Who uses it").
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

/** What every request names: the payment and its money. */
export interface PaymentRef {
  project_id: string;
  transaction_id: string;
  amount: number;
  currency: string;
  /** the project's clock */
  now: Date;
}

export interface ThreeDsResult {
  /** Y A N U R, or C when the customer must answer a challenge first */
  trans_status: TransStatus;
  eci?: string;
  liability_shift: boolean;
}

export interface Outcome {
  /** processing: the answer comes later; ask again with inquire() */
  status: 'accepted' | 'declined' | 'error' | 'processing';
  reason?: Reason;
  response_code: string;
  response_code_description: string;
  /** the acquirer's id of the operation */
  reference?: string;
}

export interface Connector {
  readonly name: string;
  authenticate3ds(req: PaymentRef & { card: CardData }): Promise<ThreeDsResult>;
  /** The customer's answer to a challenge (the simulator's ACS asks for a code). */
  completeChallenge(req: PaymentRef & { card: CardData; answer: string }): Promise<ThreeDsResult>;
  /** capture: false for a pre-authorization (capture_mode manual or delayed). */
  authorize(req: PaymentRef & { card: CardData; three_ds: ThreeDsResult; capture: boolean }): Promise<Outcome>;
  /** The final answer of an authorization that answered `processing`. */
  inquire(req: PaymentRef & { reference: string }): Promise<Outcome>;
  capture(req: PaymentRef & { reference?: string }): Promise<Outcome>;
  void(req: PaymentRef & { reference?: string }): Promise<Outcome>;
  refund(req: PaymentRef & { reference?: string }): Promise<Outcome>;
}

/** Connectors of live projects, by project. None is built in: a live payment without one is refused. */
export const liveConnectors: { forProject?: (project: ProjectRow) => Connector | undefined } = {};

export function connectorFor(project: ProjectRow): Connector {
  if (project.mode === 'test') return simulator;
  const live = liveConnectors.forProject?.(project);
  if (!live) throw new ApiError('Forbidden', 'no acquirer connector is configured for this live project');
  return live;
}

/** The outcome of a transaction that 3-D Secure refused: no authorization was sent. */
export function authenticationFailed(s: TransStatus): Outcome {
  return {
    status: 'declined',
    reason: 'authentication_failed',
    response_code: `3DS-${s}`,
    response_code_description: s === 'R' ? '3-D Secure authentication rejected by the issuer' : '3-D Secure authentication failed',
  };
}
