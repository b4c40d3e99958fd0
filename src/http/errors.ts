import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorKind, type ErrorType } from '../domain/errors.ts';

/** The HTTP status of each kind of error: the one place a kind becomes a status (docs/design.md "Error types and status codes"). */
const KIND_STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  refused: 422,
  rate_limited: 429,
  internal: 500,
  upstream: 502,
  unavailable: 503,
  upstream_timeout: 504,
};

/** An error of the HTTP layer itself, with its own status (413, 415, 431, a framework's 4xx). */
export class HttpError extends DomainError {
  constructor(
    type: ErrorType,
    message: string,
    field: string | undefined,
    readonly status: number,
  ) {
    super(type, message, field, status >= 500 ? 'internal' : 'invalid');
  }
}

/** The status an error answers with. */
export const statusOf = (err: DomainError): number => (err instanceof HttpError ? err.status : KIND_STATUS[err.kind]);

/** The spec's error body of an error: status, type, value, the field, and any extra fields. */
export function bodyOf(err: DomainError) {
  const error: Record<string, unknown> = { status: statusOf(err), type: err.type, value: err.message };
  if (err.field) error.field = err.field;
  return { error: { ...error, ...err.extra } };
}

/** What Tender reads of an Ajv validation error (the params of the keywords it words itself). */
interface AjvIssue {
  keyword: string;
  instancePath?: string;
  message?: string;
  params?: { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[]; format?: string };
}

/** Ajv's instancePath and params to the dotted field name: /customer/postal_code -> customer.postal_code. */
export function fieldOf(v: Pick<AjvIssue, 'instancePath' | 'params'>, part?: string): string {
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

function validationMessage(v: AjvIssue, field: string): string {
  switch (v.keyword) {
    case 'required':
      return `${field} is required`;
    case 'additionalProperties':
      return `${field} is not a known field`;
    case 'enum': {
      const allowed: unknown[] = v.params?.allowedValues ?? [];
      // a long list (currencies) is named by the OpenAPI document, not repeated in every error
      return allowed.length > 20
        ? `${field} is not one of the ${allowed.length} allowed values (see /openapi.json)`
        : `${field} must be one of: ${allowed.join(', ')}`;
    }
    case 'format':
      return `${field} must be a valid ${v.params?.format}`;
    default:
      return `${field} ${v.message ?? 'is invalid'}`;
  }
}

/** Maps any error to the error body (docs/design.md "Errors"); 5xx never carries internals. */
export function asDomainError(err: FastifyError | Error): DomainError {
  if (err instanceof DomainError) return err;
  const e = err as Omit<FastifyError, 'validation'> & { validation?: AjvIssue[]; validationContext?: string };
  if (e.validation?.length) {
    const v = e.validation[0];
    const field = fieldOf(v, e.validationContext);
    return new DomainError('ValidationError', validationMessage(v, field), field);
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError('ValidationError', 'request body is not valid JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError('ValidationError', 'request body must be JSON (Content-Type: application/json)', 'Content-Type', 415);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpError('ValidationError', 'request body is too large', undefined, 413);
    case 'FST_ERR_BAD_URL':
      return new DomainError('ValidationError', 'the URL is not valid (bad percent-encoding)');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new DomainError('ValidationError', 'a path parameter is too long');
  }
  if (err instanceof SyntaxError && e.statusCode === 400) return new DomainError('ValidationError', 'request body is not valid JSON');
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
    return new HttpError('ValidationError', e.message, undefined, e.statusCode);
  return new DomainError('ServerError', 'internal server error');
}

/** The realm of the Basic authentication challenge on every 401 (RFC 7617). */
const CHALLENGE = 'Basic realm="Tender"';

function sendError(reply: FastifyReply, api: DomainError) {
  const status = statusOf(api);
  if (status === 401) reply.header('WWW-Authenticate', CHALLENGE);
  reply
    .code(status)
    .type('application/json')
    .send(JSON.stringify(bodyOf(api)));
}

/** Framework errors met before routing (bad percent-encoding) get the error body too. */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  void req;
  sendError(reply, asDomainError(err));
}

/**
 * Requests Node's parser refuses (malformed HTTP, headers over the limit) never reach Fastify:
 * the answer is written on the socket, with the error body, and the connection closed.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request was not received in time']
        : [400, 'the request is not valid HTTP'];
  const body = JSON.stringify(bodyOf(new HttpError('ValidationError', message, undefined, status)));
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy();
}

/** A route's path pattern as a regular expression for a concrete path (`:id` one segment, `*` the rest). */
function patternOf(url: string): RegExp {
  const body = url
    .replace(/\/+$/, '')
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${body}/?$`);
}

/** Seconds to wait before retrying a 503 (a lost database connection: the pool reconnects at once). */
export const RETRY_AFTER_UNAVAILABLE = 1;

/**
 * Status of a failed hosted page: a client error as the framework says, 503 with Retry-After
 * while the database is unavailable, else 500.
 */
export function pageErrorStatus(err: Error & { statusCode?: number }, reply: FastifyReply): number {
  if (err instanceof DomainError && statusOf(err) === 503) {
    reply.header('Retry-After', String(RETRY_AFTER_UNAVAILABLE));
    return 503;
  }
  if (err instanceof DomainError && statusOf(err) < 500) {
    if (err.retryAfter) reply.header('Retry-After', String(err.retryAfter));
    return statusOf(err);
  }
  return err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
}

export function installErrorHandling(app: FastifyInstance) {
  // every route's methods by path pattern, so a known path with another method is a 405 with Allow
  const routes: Array<{ pattern: RegExp; methods: string[] }> = [];
  app.addHook('onRoute', (r) => {
    const methods = ([] as string[]).concat(r.method);
    routes.push({ pattern: patternOf(r.url), methods });
  });
  app.setErrorHandler((err, req, reply) => {
    const api = asDomainError(err as FastifyError);
    if (api.byLimit) req.refusedByLimit = true;
    if (api.retryAfter) reply.header('Retry-After', String(api.retryAfter));
    if (statusOf(api) === 503) {
      reply.header('Retry-After', String(RETRY_AFTER_UNAVAILABLE));
      req.log.warn({ err: (err as Error).message }, 'database unavailable');
    } else if (statusOf(api) >= 500) req.log.error({ err }, 'request failed');
    sendError(reply, api);
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0].replace(/\/{2,}/g, '/');
    const allow = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
    if (allow.size) {
      reply.header('Allow', [...allow].sort().join(', '));
      return sendError(
        reply,
        new HttpError(
          'ValidationError',
          `method ${req.method} is not allowed here; allowed: ${[...allow].sort().join(', ')}`,
          undefined,
          405,
        ),
      );
    }
    sendError(reply, new DomainError('NotFound', `no route ${req.method} ${path}`));
  });
}
