import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../services/context.ts';
import { nowFor } from '../services/context.ts';
import { ApiError } from '../domain/errors.ts';
import { findProject } from '../store/projects.ts';
import { claimKey, cleanupKeys, releaseKey, storeResponse } from '../store/idempotency.ts';
import { schedule } from '../jobs/queue.ts';

/** Response headers a replay repeats; the rest (date, rate limit) describe the moment, not the result. */
const REPLAYED_HEADERS = ['content-type', 'location'];

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey: { key: string; done: boolean } | null;
  }
}

/**
 * JSON with object keys sorted, so the same body written in another key order is the same request.
 * Without recursion (a stack of pieces still to write), so no nesting can overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  type Piece = { text: string } | { value: unknown };
  const out: string[] = [];
  const todo: Piece[] = [{ value }];
  while (todo.length) {
    const piece = todo.pop()!;
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
    for (let i = next.length - 1; i >= 0; i--) todo.push(next[i]);
  }
  return out.join('');
}

/** The header as sent, or as an RFC 8941 string ("..."), which the IETF draft uses. */
function keyOf(req: FastifyRequest): string | undefined {
  const raw = req.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw.join(',') : raw).trim();
  const key = /^".*"$/.test(text) ? text.slice(1, -1) : text;
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw new ApiError('ValidationError', 'Idempotency-Key must be 1 to 255 visible ASCII characters', 'Idempotency-Key');
  return key;
}

/**
 * Idempotency-Key on every POST of this scope (docs/design.md "Idempotency"), per project:
 * - the first request with a key runs and its response (status, body, content-type, location)
 *   is stored before the client sees it;
 * - the same key with the same method, path and body answers the stored response byte for byte;
 * - with a different request: 422 IdempotencyError; while the first is still running: 409.
 * Responses not worth keeping (5xx, 429, streams) free the key again. Keys last 24 h.
 */
export function idempotency(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('idempotencyKey', null);

  app.addHook('preValidation', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.method !== 'POST' || !req.project) return;
    const key = keyOf(req);
    if (key === undefined) return;
    const [path, query] = req.url.split('?');
    const target = `${path.replace(/\/+$/, '')}${query ? `?${query}` : ''}`;
    const request_hash = createHash('sha256').update(`POST ${target}\n${canonicalJson(req.body ?? null)}`).digest('hex');
    const claim = await claimKey(ctx.db, { project_id: req.project.id, key, method: 'POST', path: target, request_hash, now: nowFor(req.project) });
    if (claim === true) {
      req.idempotencyKey = { key, done: false };
      return;
    }
    if (claim.request_hash !== request_hash)
      throw new ApiError('IdempotencyError', 'this Idempotency-Key was already used with a different request', 'Idempotency-Key', 422);
    if (claim.response_status === null)
      throw new ApiError('IdempotencyError', 'a request with this Idempotency-Key is still being processed; retry later', 'Idempotency-Key', 409);
    reply.code(claim.response_status);
    for (const [name, value] of Object.entries(claim.response_headers ?? {})) reply.header(name, value);
    reply.header('idempotent-replayed', 'true');
    return reply.send(claim.response_body ?? '');
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const held = req.idempotencyKey;
    if (!held || held.done) return payload;
    held.done = true;
    const status = reply.statusCode;
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    try {
      if (status >= 500 || status === 429 || text === undefined) {
        await releaseKey(ctx.db, req.project.id, held.key);
      } else {
        const headers: Record<string, string> = {};
        for (const name of REPLAYED_HEADERS) {
          const v = reply.getHeader(name);
          if (v !== undefined) headers[name] = String(v);
        }
        await storeResponse(ctx.db, req.project.id, held.key, status, headers, text);
      }
    } catch (err) {
      req.log.error({ err }, 'idempotency key not stored');
    }
    return payload;
  });

  // A response that never reached onSend frees its key. An aborted client keeps it in flight:
  // the handler may still move money, so a retry must not run it a second time.
  app.addHook('onResponse', async (req) => {
    const held = req.idempotencyKey;
    if (!held || held.done) return;
    held.done = true;
    await releaseKey(ctx.db, req.project.id, held.key).catch(() => {});
  });
}

/** Job `idempotency_cleanup` (one per project): forgets keys older than 24 h, and comes back when the next one expires. */
export async function runIdempotencyCleanup(ctx: Ctx, projectId: string) {
  await ctx.db.tx(async (q) => {
    const project = await findProject(q, projectId);
    if (!project) return;
    const next = await cleanupKeys(q, projectId, nowFor(project));
    if (next) await schedule(q, { project_id: projectId, kind: 'idempotency_cleanup', ref_id: projectId, run_at: next });
  });
}
