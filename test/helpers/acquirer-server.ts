import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Connector } from '../../src/acquirer/connector.ts';

const METHODS = ['authenticate3ds', 'completeChallenge', 'authorize', 'capture', 'void', 'refund', 'inquire', 'reverse'] as const;

/**
 * Serves a connector on loopback for a service in another process (TENDER_TEST_ACQUIRER_URL,
 * src/acquirer/remote.ts): POST /{method} with the request as JSON, 200 with the answer; a throw
 * of the connector (an injected fault) drops the connection, as a network would.
 */
export async function serveConnector(c: Connector): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', async () => {
      const method = (req.url ?? '').replace(/^\//, '') as (typeof METHODS)[number];
      if (req.method !== 'POST' || !METHODS.includes(method)) return void res.writeHead(404).end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        if (body.now) body.now = new Date(body.now);
        const call = c[method] as (r: unknown) => Promise<unknown>;
        const answer = await call.call(c, body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
