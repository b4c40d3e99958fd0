import type { CardData, OperationRef, ThreeDsResult } from './connector.ts';
import { eciFor } from '../domain/card.ts';
import type { CardRange } from '../domain/card-ranges.ts';

/**
 * The boundary to 3-D Secure, beside the acquirer's (connector.ts): 3-D Secure is a party of its
 * own (Tender as 3DS Server, the scheme's directory server, the issuer's ACS), not the acquirer.
 * The sandbox's simulated ACS implements it for test projects; a live project's authenticator is
 * the EMV 3DS server bound to its directory servers, or, with none bound, `unauthenticated`
 * (docs/three-d-secure.md).
 *
 * The contract is the connector's for money calls (docs/money.md "Acquirer attempts"): every call
 * is an attempt (kind `three_ds`) recorded and committed before it is made, made through
 * callAcquirer (no database transaction open, no row lock held, bounded by
 * TENDER_ACQUIRER_TIMEOUT_MS), and a THROW is no answer. 3-D Secure moves no money: a lookup
 * whose answer was lost is never taken as authenticated.
 */
export interface Authenticator {
  readonly name: string;
  /**
   * The lookup (EMV: the AReq). `challenge`: the velocity limits mandate a challenge (docs/risk.md),
   * sent as the requestor's challenge indicator "challenge mandated" (04); the simulator answers C.
   */
  authenticate3ds(req: OperationRef & { card: CardData; challenge?: boolean; purchase?: Purchase }): Promise<ThreeDsResult>;
  /** The customer's answer to a challenge (the simulator's ACS asks for a code). */
  completeChallenge(req: OperationRef & { card: CardData; answer: string }): Promise<ThreeDsResult>;
  /** EMV: the directory server of a brand, whose card ranges decide whether an AReq is sent (absent: every PAN is asked) */
  directoryFor?(brand: string): DirectoryServer | undefined;
  /** EMV: every directory server bound (the daily refresh of their card ranges) */
  directories?(): DirectoryServer[];
}

/** A directory server as the card ranges' refresh sees it (services/threeds/ranges.ts). */
export interface DirectoryServer {
  /** its URL, which names its ranges in the store */
  url: string;
  /**
   * The PReq: with `serialNum` (the PRes last kept) the DS answers only what changed since
   * (`full` false), without it every range. A throw is no (good) answer: the ranges kept stay.
   */
  preq(serialNum: string | undefined, operationId: string): Promise<PreqAnswer>;
}

export interface PreqAnswer {
  serialNum: string;
  /** the ranges are the DS's whole list: the kept ones are replaced (else they are changes: A add, M modify, D delete) */
  full: boolean;
  ranges: Array<CardRange & { action: 'A' | 'M' | 'D' }>;
  /** ranges of the PRes that could not be read (left out) */
  skipped: number;
}

/**
 * What an EMV AReq carries beyond the card and the money (the sandbox's ACS reads none of it):
 * the order's merchant and customer, the customer's browser, and Tender's own URLs.
 */
export interface Purchase {
  merchant_name: string;
  /** where the customer's browser brings the CRes (Tender's 3-D Secure page) */
  notification_url: string;
  /** where the directory server sends the RReq */
  server_url: string;
  requestor_url?: string;
  /** threeDSCompInd: Y the 3DS Method ran, N it did not finish in time, U the range has none */
  method_done?: 'Y' | 'N' | 'U';
  /** threeDSRequestorChallengeInd when no challenge is mandated: 01 no preference, 05 TRA exemption */
  challenge_ind?: string;
  customer?: { email?: string; phone?: string; address?: string; city?: string; postal_code?: string; country?: string };
  browser?: Browser;
}

/** The customer's browser as the 3-D Secure page's script measured it, or as its request headers tell (fallbacks). */
export interface Browser {
  accept?: string;
  ip?: string;
  user_agent?: string;
  language?: string;
  javascript?: boolean;
  java?: boolean;
  color_depth?: number;
  screen_height?: number;
  screen_width?: number;
  /** minutes from UTC, as Date.getTimezoneOffset */
  tz?: number;
}

/** The authenticator calls that reach a 3-D Secure server (callAcquirer guards them). */
export const AUTHENTICATOR_CALLS = ['authenticate3ds', 'completeChallenge'] as const;

/**
 * A live project with no directory server bound: no 3-D Secure server is asked, and every
 * payment is non-authenticated e-commerce (U, ECI 07 Visa-like or 00 Mastercard-like, no
 * liability shift), which the binding sends to the acquirer or refuses (--refuse-unauthenticated).
 */
export const unauthenticated: Authenticator = {
  name: 'none',
  authenticate3ds: async (req) => notAuthenticated(req.card),
  completeChallenge: async (req) => notAuthenticated(req.card),
};

const notAuthenticated = (card: Pick<CardData, 'brand'>): ThreeDsResult => ({
  trans_status: 'U',
  eci: eciFor(card.brand, 'U'),
  liability_shift: false,
});
