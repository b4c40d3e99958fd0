import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';

/**
 * Fixed one-minute windows per project, in this process's memory. Several nodes each
 * enforce the limit on their own share of traffic (see docs/decisions.md).
 */
export function rateLimiter(limitPerMinute: number) {
  const windows = new Map<string, { start: number; count: number }>();
  return async function limit(req: FastifyRequest, reply: FastifyReply) {
    if (!req.project || limitPerMinute <= 0) return;
    const now = Date.now();
    const start = now - (now % 60_000);
    let w = windows.get(req.project.id);
    if (!w || w.start !== start) {
      if (windows.size > 10_000) windows.clear();
      w = { start, count: 0 };
      windows.set(req.project.id, w);
    }
    w.count++;
    const remaining = Math.max(0, limitPerMinute - w.count);
    const reset = Math.ceil((start + 60_000 - now) / 1000);
    reply.header('RateLimit-Policy', `${limitPerMinute};w=60`);
    reply.header('RateLimit', `limit=${limitPerMinute}, remaining=${remaining}, reset=${reset}`);
    if (w.count > limitPerMinute) {
      reply.header('Retry-After', String(reset));
      throw new ApiError('RateLimitExceeded', `rate limit of ${limitPerMinute} requests a minute exceeded`);
    }
  };
}
