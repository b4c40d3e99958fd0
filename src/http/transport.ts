import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.ts';

/** One year, the usual HSTS lifetime; subdomains are the operator's to decide, so not included. */
const HSTS = 'max-age=31536000';

/** Whether the request reached Tender over TLS: its own socket, or X-Forwarded-Proto from a trusted proxy (TRUST_PROXY). */
const overTls = (req: FastifyRequest) => req.protocol === 'https';

/**
 * Rules of the transport, for every route: HTTP/1.1 requests name their Host (RFC 9112 3.2);
 * answers given over HTTPS tell browsers to stay on HTTPS (HSTS).
 */
export function installTransportRules(app: FastifyInstance) {
  app.addHook('onRequest', async (req, reply) => {
    if (overTls(req)) reply.header('Strict-Transport-Security', HSTS);
    if (!req.headers.host && req.raw.httpVersionMinor >= 1 && req.raw.httpVersionMajor === 1)
      throw new DomainError('ValidationError', 'the Host header is required', 'Host');
  });
}

/** Live projects move real money: their requests must not have crossed the network in clear. */
export function requireTlsForLive(req: FastifyRequest, mode: string, enforced: boolean) {
  if (enforced && mode === 'live' && !overTls(req))
    throw new DomainError('Forbidden', 'live projects are served over HTTPS only; send this request over TLS');
}
