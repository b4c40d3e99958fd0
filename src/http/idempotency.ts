import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../services/platform/context.ts';
import { nowFor } from '../services/platform/context.ts';
import { DomainError } from '../domain/errors.ts';
import { abandonRequest, claimCall, claimRequest, finishCall, finishRequest } from '../services/platform/idempotency.ts';
import { withOperationKey } from '../services/payments/operation-key.ts';
import type { OpenTx } from '../services/platform/idempotency.ts';
import { RETRY_AFTER_UNAVAILABLE, statusOf, bodyOf } from './errors.ts';

/** Response headers a replay repeats; the rest (date, rate limit) describe the moment, not the result. */
const REPLAYED_HEADERS = ['content-type', 'location'];

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * the claimed key, and the transaction the request's work runs in; `open` null for a route
     * that calls the acquirer (claimed and committed at once: claimCall). `final` false: the
     * answer says an operation is still in flight, so it is not kept for the key.
     */
    idempotencyKey: { key: string; open: OpenTx | null; done: boolean; final: boolean } | null;
  }
  interface FastifyContextConfig {
    /** the route calls the acquirer: its Idempotency-Key is claimed apart from its work (claimCall) */
    callsAcquirer?: boolean;
    /**
     * the route runs due jobs, which may call the acquirer: claimed apart as callsAcquirer, but its
     * work is not under the key (each job's attempt is its own; a job done is no longer due)
     */
    runsJobs?: boolean;
  }
}

/**
 * JSON with object keys sorted, so the same body written in another key order is the same request.
 * Without recursion (a stack of pieces still to write), so no nesting can overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  type Piece = { text: string } | { value: unknown };
  const out: string[] = [];
  const stack: Piece[] = [{ value }];
  while (stack.length) {
    const piece = stack.pop()!;
    if ('text' in piece) {
      out.push(piece.text);
      continue;
    }
    const v = piece.value;
    const next: Piece[] = [];
    if (Array.isArray(v)) {
      next.push({ text: '[' });
      v.forEach((item, i) => next.push(...(i ? [{ text: ',' }] : []), { value: item }));
      next.push({ text: ']' });
    } else if (v && typeof v === 'object') {
      next.push({ text: '{' });
      Object.keys(v)
        .sort()
        .forEach((k, i) => next.push({ text: `${i ? ',' : ''}${JSON.stringify(k)}:` }, { value: (v as Record<string, unknown>)[k] }));
      next.push({ text: '}' });
    } else {
      out.push(JSON.stringify(v) ?? '');
    }
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
  }
  return out.join('');
}

/** The header as sent, or as an RFC 8941 string ("..."), which the IETF draft uses. */
function keyOf(req: FastifyRequest): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  const key = /^".*"$/.test(text) ? text.slice(1, -1) : text;
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw new DomainError('ValidationError', 'Idempotency-Key must be 1 to 255 visible ASCII characters', 'Idempotency-Key');
  return key;
}

/**
 * Idempotency-Key on every POST of this scope (docs/design.md "Idempotency"), per project:
 * - the first request with a key runs and its response (status, body, content-type, location)
 *   is stored before the client sees it;
 * - the same key with the same method, path and body answers the stored response byte for byte;
 * - with a different request: 422 IdempotencyError; while the first is still running: 409.
 * The request's work runs in one transaction with its key and response (services/platform/idempotency.ts):
 * a crash leaves nothing in flight, a retry runs it once. Responses not worth keeping (5xx, 429,
 * streams) roll the work back and free the key. Keys last 24 h.
 * Routes that call the acquirer (config.callsAcquirer) cannot hold a transaction across the call:
 * their key is claimed and committed first, their work commits step by step, and the attempt
 * they record takes its id from the key, so a retry answers that attempt's result (claimCall).
 */
export function idempotency(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('idempotencyKey', null);

  // Handlers of a claimed request run inside its transaction (every query and tx of ctx.db).
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
      const held = req.idempotencyKey;
      if (!held) return handler.call(this, req, reply);
      if (!held.open && route.config?.runsJobs) return handler.call(this, req, reply);
      if (!held.open) return withOperationKey(req.project.id, held.key, () => handler.call(this, req, reply));
      return ctx.db.within(held.open, () => handler.call(this, req, reply));
    };
  });

  app.addHook('preValidation', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'POST' || !req.project) return;
    const key = keyOf(req);
    if (key === undefined) return;
    const [path, query] = req.url.split('?');
    const target = `${path.replace(/\/+$/, '')}${query ? `?${query}` : ''}`;
    const request_hash = createHash('sha256')
      .update(`POST ${target}\n${canonicalJson(req.body ?? null)}`)
      .digest('hex');
    const c = { project_id: req.project.id, key, method: 'POST', path: target, request_hash, now: nowFor(req.project) };
    const { callsAcquirer, runsJobs } = req.routeOptions.config;
    const claim = callsAcquirer || runsJobs ? await claimCall(ctx, c) : await claimRequest(ctx, c);
    if (claim.kind === 'run' || claim.kind === 'call') {
      req.idempotencyKey = { key, open: claim.kind === 'run' ? claim.open : null, done: false, final: true };
      return;
    }
    if (claim.kind === 'busy')
      throw new DomainError(
        'IdempotencyError',
        'a request with this Idempotency-Key is still being processed; retry later',
        'Idempotency-Key',
        'conflict',
      );
    const row = claim.row;
    if (row.request_hash !== request_hash)
      throw new DomainError('IdempotencyError', 'this Idempotency-Key was already used with a different request', 'Idempotency-Key');
    reply.code(row.response_status!);
    for (const [name, value] of Object.entries(row.response_headers ?? {})) reply.header(name, value);
    reply.header('idempotent-replayed', 'true');
    return reply.send(row.response_body ?? '');
  });

  // an answer that an operation is still in flight is not the request's result: not kept for the key
  app.addHook('onError', async (req, _reply, err) => {
    if (req.idempotencyKey && err instanceof DomainError && err.inFlight) req.idempotencyKey.final = false;
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const held = req.idempotencyKey;
    if (!held || held.done) return payload;
    held.done = true;
    const status = reply.statusCode;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    const keep = status < 500 && status !== 429 && text !== undefined && held.final;
    if (!held.open) {
      // the work is committed already: only the answer is kept (or the key freed); a failure to
      // keep it leaves the key running until its time is over, and the retry answers from the attempt
      await finishCall(ctx, req.project.id, held.key, keep ? { status, headers: replayed(reply), body: text! } : undefined).catch((err) =>
        req.log.warn({ err }, 'idempotent answer not kept'),
      );
      return payload;
    }
    if (!keep) {
      await finishRequest(held.open, req.project.id, held.key);
      return payload;
    }
    try {
      await finishRequest(held.open, req.project.id, held.key, { status, headers: replayed(reply), body: text! });
      return payload;
    } catch (err) {
      // Not committed (or not known to be): the client must not take this answer as done.
      const api = err instanceof DomainError ? err : new DomainError('ServerError', 'internal server error');
      if (statusOf(api) >= 500 && statusOf(api) !== 503) req.log.error({ err }, 'idempotent request not committed');
      if (statusOf(api) === 503) reply.header('Retry-After', String(RETRY_AFTER_UNAVAILABLE));
      reply.removeHeader('location');
      reply.code(statusOf(api)).type('application/json');
      return JSON.stringify(bodyOf(api));
    }
  });

  // A request that ended without reaching onSend (a hijacked reply) keeps nothing of its work.
  app.addHook('onResponse', async (req) => {
    const held = req.idempotencyKey;
    if (!held || held.done) return;
    held.done = true;
    if (held.open) await abandonRequest(held.open);
    else await finishCall(ctx, req.project.id, held.key).catch(() => {});
  });
}

function replayed(reply: FastifyReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const v = reply.getHeader(name);
    if (v !== undefined) headers[name] = String(v);
  }
  return headers;
}
