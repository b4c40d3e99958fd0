import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../domain/errors.ts';

/** Ajv's instancePath and params to the dotted field name: /customer/postal_code -> customer.postal_code. */
export function fieldOf(v: { instancePath?: string; params?: Record<string, any> }, part?: string): string {
  const path = (v.instancePath ?? '')
    .split('/')
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
    .join('')
    .replace(/^\./, '');
  const leaf = v.params?.missingProperty ?? v.params?.additionalProperty;
  const field = leaf ? (path ? `${path}.${leaf}` : leaf) : path;
  return field || part || 'body';
}

function validationMessage(v: { keyword: string; message?: string; params?: Record<string, any> }, field: string): string {
  switch (v.keyword) {
    case 'required':
      return `${field} is required`;
    case 'additionalProperties':
      return `${field} is not a known field`;
    case 'enum':
      return `${field} must be one of: ${(v.params?.allowedValues ?? []).join(', ')}`;
    case 'format':
      return `${field} must be a valid ${v.params?.format}`;
    default:
      return `${field} ${v.message ?? 'is invalid'}`;
  }
}

/** Maps any error to the error body (docs/design.md "Errors"); 5xx never carries internals. */
export function toApiError(err: FastifyError | Error): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as FastifyError & { validation?: any[]; validationContext?: string };
  if (e.validation?.length) {
    const v = e.validation[0];
    const field = fieldOf(v, e.validationContext);
    return new ApiError('ValidationError', validationMessage(v, field), field);
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('ValidationError', 'request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('ValidationError', 'request body must be JSON (Content-Type: application/json)');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('ValidationError', 'request body is too large', undefined, 413);
  }
  if (err instanceof SyntaxError && e.statusCode === 400) return new ApiError('ValidationError', 'request body is not valid JSON');
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) return new ApiError('ValidationError', e.message, undefined, e.statusCode);
  return new ApiError('ServerError', 'internal server error');
}

/** Seconds to wait before retrying a 503 (a lost database connection: the pool reconnects at once). */
export const RETRY_AFTER_UNAVAILABLE = 1;

/**
 * Status of a failed hosted page: a client error as the framework says, 503 with Retry-After
 * while the database is unavailable, else 500.
 */
export function pageErrorStatus(err: Error & { statusCode?: number }, reply: FastifyReply): number {
  if (err instanceof ApiError && err.status === 503) {
    reply.header('Retry-After', String(RETRY_AFTER_UNAVAILABLE));
    return 503;
  }
  if (err instanceof ApiError && err.status < 500) {
    if (err.retryAfter) reply.header('Retry-After', String(err.retryAfter));
    return err.status;
  }
  return err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
}

export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err, req, reply) => {
    const api = toApiError(err as FastifyError);
    if (api.retryAfter) reply.header('Retry-After', String(api.retryAfter));
    if (api.status === 503) {
      reply.header('Retry-After', String(RETRY_AFTER_UNAVAILABLE));
      req.log.warn({ err: (err as Error).message }, 'database unavailable');
    } else if (api.status >= 500) req.log.error({ err }, 'request failed');
    reply.code(api.status).type('application/json').send(JSON.stringify(api.toBody()));
  });
  app.setNotFoundHandler((req, reply) => {
    const api = new ApiError('NotFound', `no route ${req.method} ${req.url.split('?')[0]}`);
    reply.code(404).type('application/json').send(JSON.stringify(api.toBody()));
  });
}
