/*
 * Errors the domain and the services raise: the spec's error type, and its kind (what went wrong,
 * in the service's terms). Only http/ maps a kind to an HTTP status and the error body
 * (http/errors.ts; docs/design.md "Error types and status codes").
 */

/** What went wrong, whatever surface (API, hosted page, portal, CLI) reports it. */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  /** the request is at odds with the state it found (a transaction started, a name taken, a form in progress) */
  | 'conflict'
  /** understood and refused by a rule of the operation (a refund above what is left, a key reused) */
  | 'refused'
  | 'rate_limited'
  /** a party Tender depends on (the acquirer, a 3-D Secure server, a wallet's service) gave no usable answer */
  | 'upstream'
  | 'upstream_timeout'
  | 'internal'
  /** the database is unreachable or dropped the connection: retry */
  | 'unavailable';

/** The spec's error types, each with the kind it is by default. */
export const ERROR_KINDS = {
  ValidationError: 'invalid',
  Unauthorized: 'unauthenticated',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  TransactionAlreadyStarted: 'conflict',
  CanNotCancelTransaction: 'conflict',
  CanNotCaptureTransaction: 'conflict',
  CanNotVoidTransaction: 'conflict',
  RefundError: 'refused',
  MissingInformationToCreateTransaction: 'refused',
  IdempotencyError: 'refused',
  RateLimitExceeded: 'rate_limited',
  FailedToFetchTransactionInformation: 'upstream',
  ServerError: 'internal',
  ServiceUnavailable: 'unavailable',
} as const satisfies Record<string, ErrorKind>;

export type ErrorType = keyof typeof ERROR_KINDS;

export class DomainError extends Error {
  readonly kind: ErrorKind;
  /** seconds after which the client may try again (a rate limit, the database back) */
  retryAfter?: number;
  /** refused by a limit on shared work (a rate, a share, a cost bound): counted by the refusal brake (http/refusal-brake.ts) */
  byLimit?: boolean;
  /** the answer is not final: an operation is still in flight at the acquirer (not kept for an Idempotency-Key) */
  inFlight?: boolean;
  /** fields the error body carries beside the spec's (a wallet token's check `code`) */
  extra?: Record<string, unknown>;
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly field?: string,
    kind?: ErrorKind,
  ) {
    super(message);
    this.kind = kind ?? ERROR_KINDS[type];
  }
}

/** An answer that an operation is still in flight at the acquirer: not final, so not kept for an Idempotency-Key. */
export function inFlightError(type: ErrorType, message: string): DomainError {
  const err = new DomainError(type, message);
  err.inFlight = true;
  return err;
}

export const invalid = (field: string, message: string) => new DomainError('ValidationError', message, field);
export const notFound = (what: string) => new DomainError('NotFound', `${what} not found`);

/** A RateLimitExceeded telling the client when to try again. */
export function rateLimited(message: string, retryAfterSeconds: number): DomainError {
  const err = new DomainError('RateLimitExceeded', message);
  err.byLimit = true;
  err.retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  return err;
}
