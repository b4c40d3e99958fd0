import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import type { Ctx } from '../services/platform/context.ts';
import { projectRequestCounter, throttleOf } from '../services/platform/throttle.ts';

/**
 * Per-project (per API key) limit with RateLimit / RateLimit-Policy headers and Retry-After on
 * 429, counted per surface (`scope`: the API, the vault). Counted in memory per node unless
 * REDIS_URL is set: this limit shares capacity between keyed merchants, it is not a defence
 * against anonymous clients (those limits are in the database: limitAnonymous), so N nodes
 * allowing N times the limit is acceptable. When Redis is unreachable the request is let
 * through: payments matter more than limits.
 */
export function installRateLimit(app: FastifyInstance, limitPerMinute: number, redisUrl?: string, scope?: string) {
  if (limitPerMinute <= 0) return;
  const counter = projectRequestCounter(redisUrl);
  app.addHook('onClose', async () => counter.close());
  // onRequest, after authentication: a request counts before its body is read or validated
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!req.project) return;
    const now = Date.now();
    const start = now - (now % 60_000);
    let count: number;
    try {
      count = await counter.hit(scope ? `${scope}:${req.project.id}` : req.project.id, start);
    } catch (err) {
      req.log.warn({ err: (err as Error).message }, 'rate limit store unavailable');
      return;
    }
    const reset = Math.ceil((start + 60_000 - now) / 1000);
    reply.header('RateLimit-Policy', `${limitPerMinute};w=60`);
    reply.header('RateLimit', `limit=${limitPerMinute}, remaining=${Math.max(0, limitPerMinute - count)}, reset=${reset}`);
    if (count > limitPerMinute) {
      reply.header('Retry-After', String(reset));
      throw new DomainError('RateLimitExceeded', `rate limit of ${limitPerMinute} requests a minute exceeded`);
    }
  });
}

/**
 * Limits anonymous requests of this scope (hosted-page form posts, the token service): per
 * client address and per resource the request names (`subjectsOf`), PUBLIC_RATE_LIMIT_PER_MINUTE
 * each, counted in the database so every node enforces one count. 429 with Retry-After.
 */
export function limitAnonymous(
  app: FastifyInstance,
  ctx: Ctx,
  name: string,
  opts: { methods?: string[]; subjectsOf?: (req: FastifyRequest) => Array<string | undefined> } = {},
) {
  const methods = new Set(opts.methods ?? ['POST']);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (!methods.has(req.method)) return;
    const subjects = [`address:${req.ip}`, ...(opts.subjectsOf?.(req) ?? []).filter((s): s is string => Boolean(s))];
    await throttleOf(ctx).limit(name, subjects, ctx.config.publicRateLimitPerMinute);
  });
}

/** The order, link or transaction a hosted-page path is about: /pay/{id}/..., /pay/links/{id}/, /pay/3ds/{id}/. */
export function payResourceOf(url: string): string | undefined {
  const m = /^\/pay\/(?:([a-z0-9-]{1,20})\/)?([0-9a-fA-F-]{36})(?:\/|$|\?)/.exec(url);
  return m ? `${m[1] ?? 'order'}:${m[2].toLowerCase()}` : undefined;
}
