/** Error types of the API (docs/design.md "Error types and status codes"). */
export const ERROR_STATUS = {
  ValidationError: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  TransactionAlreadyStarted: 409,
  CanNotCancelTransaction: 409,
  CanNotCaptureTransaction: 409,
  CanNotVoidTransaction: 409,
  RefundError: 422,
  MissingInformationToCreateTransaction: 422,
  IdempotencyError: 422,
  RateLimitExceeded: 429,
  FailedToFetchTransactionInformation: 502,
  ServerError: 500,
  /** the database is unreachable or dropped the connection: retry after Retry-After */
  ServiceUnavailable: 503,
} as const;

export type ErrorType = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  /** seconds for the Retry-After header (429, 503) */
  retryAfter?: number;
  /** refused by a limit on shared work (a rate, a share, a cost bound): counted by the refusal brake (http/refusal-brake.ts) */
  byLimit?: boolean;
  /** the answer is not final: an operation is still in flight at the acquirer (not kept for an Idempotency-Key) */
  inFlight?: boolean;
  constructor(
    readonly type: ErrorType,
    message: string,
    readonly field?: string,
    status?: number,
  ) {
    super(message);
    this.status = status ?? ERROR_STATUS[type];
  }
  /** as Fastify and the hosted pages' error handlers read it */
  get statusCode() {
    return this.status;
  }
  toBody() {
    const error: Record<string, unknown> = { status: this.status, type: this.type, value: this.message };
    if (this.field) error.field = this.field;
    return { error };
  }
}

/** An answer that an operation is still in flight at the acquirer: not final, so not kept for an Idempotency-Key. */
export function inFlightError(type: ErrorType, message: string): ApiError {
  const err = new ApiError(type, message);
  err.inFlight = true;
  return err;
}

export const invalid = (field: string, message: string) => new ApiError('ValidationError', message, field);
export const notFound = (what: string) => new ApiError('NotFound', `${what} not found`);

/** A 429 RateLimitExceeded telling the client when to try again. */
export function rateLimited(message: string, retryAfterSeconds: number): ApiError {
  const err = new ApiError('RateLimitExceeded', message);
  err.byLimit = true;
  err.retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
  return err;
}
