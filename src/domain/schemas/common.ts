import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { PAYABLE_CURRENCIES } from '../currency.ts';

/** A string limited to the given values, as a plain JSON Schema enum (one clear Ajv error). */
export const Enum = <const T extends string>(values: readonly T[], opts: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });

export const Uuid = (opts: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...opts });
/** The payable ISO 4217 codes, listed, so the schema refuses what validation refuses (no XAU, XTS...). */
export const Currency = Type.Unsafe<string>({ type: 'string', enum: PAYABLE_CURRENCIES, description: 'ISO 4217 code' });
export const Amount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'minor units' });
export const Duration = Type.String({ minLength: 2, maxLength: 64, description: 'ISO 8601 duration, positive' });
/** Absolute http(s) URI: other schemes (javascript:, data:) are never followed. */
export const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

const ErrorBody = Type.Object(
  {
    error: Type.Object({
      status: Type.Integer(),
      type: Type.String(),
      value: Type.String(),
      field: Type.Optional(Type.String()),
    }),
  },
  { $id: 'Error' },
);

export const OrderIdParams = Type.Object({ order_id: Uuid() });
export const TransactionParams = Type.Object({ order_id: Uuid(), transaction_id: Uuid() });

export type { Static, TSchema };

// ---- documented answers: a description for every status code, an example for every body ----

/** What each error status means across the API, with a typical body (docs/api.md "Errors"). */
const ERROR_ANSWERS: Record<number, { description: string; type: string; value: string; field?: string }> = {
  400: {
    description: 'The request breaks a rule of its schema or of the service; error.field names the field. Nothing was changed.',
    type: 'ValidationError',
    value: 'currency KLN is not an ISO 4217 currency',
    field: 'currency',
  },
  401: {
    description: 'No API key, or one that is not known (Basic auth: the key as user name, an empty password).',
    type: 'Unauthorized',
    value: 'a valid API key is required',
  },
  403: {
    description:
      'The project may not do this: a payment method that is not active in it, a test endpoint called by a live project, an expired page form.',
    type: 'Forbidden',
    value: 'payment method wallet-a-pay is not active in this project',
    field: 'transactions[0].payment_method',
  },
  404: { description: 'No such resource in the project of the API key.', type: 'NotFound', value: 'order not found' },
  409: {
    description:
      'The resource is not in a state that allows this (a transaction that already started, an order that is final, a token used before).',
    type: 'TransactionAlreadyStarted',
    value: 'this order already has a transaction',
  },
  413: {
    description: 'The body is larger than the service accepts (1 MiB).',
    type: 'ValidationError',
    value: 'the request body is too large',
  },
  415: {
    description: 'The body is not JSON (Content-Type application/json), or it is compressed.',
    type: 'ValidationError',
    value: 'the body must be application/json',
    field: 'Content-Type',
  },
  422: {
    description:
      'The request is well formed but cannot be carried out: information the transaction needs is missing, a refund exceeds what can be refunded, an idempotency key was used for another request.',
    type: 'MissingInformationToCreateTransaction',
    value: 'missing information to create the transaction: customer.first_name',
    field: 'customer.first_name',
  },
  429: {
    description: "Too many requests from this API key or client; try again after the Retry-After header's seconds.",
    type: 'RateLimitExceeded',
    value: 'too many requests: try again in 60 s',
  },
  500: {
    description:
      'The service failed unexpectedly; the answer carries no detail and the request may be retried with the same Idempotency-Key.',
    type: 'ServerError',
    value: 'internal server error',
  },
  502: {
    description: 'A service the request depends on (the wallet, the token service) answered with an error.',
    type: 'FailedToFetchTransactionInformation',
    value: 'the wallet refused the merchant validation',
  },
  503: {
    description: 'The service cannot handle the request now (a key or certificate it needs is not set up); try again later.',
    type: 'ServerError',
    value: 'the payment processing key is not set up',
  },
  504: {
    description: 'A service the request depends on did not answer in time.',
    type: 'FailedToFetchTransactionInformation',
    value: 'the wallet did not answer in time',
  },
};

/** The documented error answers of an operation, by status code. */
export function errorAnswers<const C extends number>(...codes: C[]): Record<C, TSchema> {
  const out = {} as Record<C, TSchema>;
  for (const code of codes) {
    const a = ERROR_ANSWERS[code] ?? { description: 'Error', type: 'ServerError', value: 'error' };
    const error: Record<string, unknown> = { status: code, type: a.type, value: a.value };
    if (a.field) error.field = a.field;
    out[code] = answer(a.description, ErrorBody, { error });
  }
  return out;
}

/** A documented answer: what it means, its body's schema and a realistic example of it. */
export const answer = <T extends TSchema>(description: string, schema: T, example: unknown): T =>
  ({ description, content: { 'application/json': { schema, example } } }) as unknown as T;
