import { createServer, type Server } from 'node:http';
import { gauges, registry } from './metrics.ts';

export interface MetricsServer {
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

/** A read-only page of the operator's beside /metrics (the payouts overview: http/operator/payouts.ts). */
interface OperatorPage {
  headers: Record<string, string>;
  render(): Promise<string>;
}

/**
 * /metrics in Prometheus's text format on a port of its own (METRICS_PORT), apart from the
 * API: a scrape needs no API key, so it must not be reachable where the API is. `collect` reads
 * the gauges that come from the database (backlog, jobs, pool) just before each scrape; when it
 * fails the scrape still answers, with tender_metrics_collect_errors_total counting it.
 */
export async function startMetricsServer(
  port: number,
  host: string,
  collect: () => Promise<void>,
  pages: Record<string, OperatorPage> = {},
): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const page = req.method === 'GET' && Object.hasOwn(pages, path) ? pages[path] : undefined;
    if (page) {
      page.render().then(
        (html) => res.writeHead(200, page.headers).end(html),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('page unavailable\n'),
      );
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    collect()
      .catch(() => gauges.scrapeErrors.inc())
      .then(() => registry.metrics())
      .then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
