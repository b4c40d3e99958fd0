import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client goes away before its answer is sent: the work it asked for (a search's
 * statements) is cancelled instead of running on for nobody (docs/security.md "Fair shares").
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}
