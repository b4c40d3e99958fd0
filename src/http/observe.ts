import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Ctx } from '../services/platform/context.ts';
import { http as httpMetrics, statusClass } from '../telemetry/metrics.ts';
import { enterRequest } from '../telemetry/tracing.ts';
/** Path prefix of a surface whose base URL is on this host (as app.ts mounts it). */
const prefixOf = (url: string) => new URL(url).pathname.replace(/\/+$/, '');

/**
 * What an operator sees of each request: its id (the trace id) in the X-Request-Id header and in
 * every log line written for it, and the metrics tender_http_requests_total and
 * tender_http_request_duration_seconds by surface, route pattern (`/v1/orders/:order_id/`, never
 * the URL itself), method and status class.
 */
export function installObservation(app: FastifyInstance, ctx: Ctx) {
  const surfaceOf = surfaces(ctx);
  app.addHook('onRequest', (req, reply, done) => {
    enterRequest(req.id);
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    const labels = { surface: surfaceOf(req, route), route, method: methodOf(req.method), status_class: statusClass(reply.statusCode) };
    httpMetrics.requests.inc(labels);
    httpMetrics.duration.observe(labels, reply.elapsedTime / 1000);
    // scripts and styles of the hosted pages and the portal (/pay/assets/..., /portal/assets/:name)
    const asset = /(^|\/)assets\//.test(route) || undefined;
    req.log.info({ req, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime, asset }, 'request completed');
    done();
  });
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** A client may send any method name: the label keeps to the known ones. */
const methodOf = (m: string) => (METHODS.has(m) ? m : 'other');

/** The surface of a request from its route pattern (or path, when no route matched). */
function surfaces(ctx: Ctx) {
  const own = (
    [
      ['vault', ctx.config.vaultUrl],
      ['wallet-b-token', ctx.config.walletBTokenUrl],
      ['portal', ctx.config.portalUrl],
    ] as const
  )
    .map(([surface, url]) => [surface, prefixOf(url)] as const)
    .filter(([, prefix]) => prefix !== '');
  return (req: FastifyRequest, route: string): string => {
    const path = route === 'unmatched' ? req.url.split('?')[0] : route;
    for (const [surface, prefix] of own) if (path === prefix || path.startsWith(prefix + '/')) return surface;
    if (path.startsWith('/v1/')) return 'api';
    if (path === '/healthz' || path === '/readyz') return 'health';
    if (path === '/docs' || path.startsWith('/docs/') || path === '/openapi.json') return 'docs';
    return 'pay';
  };
}
