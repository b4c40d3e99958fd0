import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Authenticator } from '../../src/acquirer/authenticator.ts';
import type { Connector } from '../../src/acquirer/connector.ts';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';

const isAcs = (c: Connector): c is Connector & Authenticator => typeof (c as Partial<Authenticator>).authenticate3ds === 'function';

const METHODS = ['authenticate3ds', 'completeChallenge', 'authorize', 'capture', 'void', 'refund', 'inquire', 'reverse'] as const;

/**
 * Serves a connector on loopback for a service in another process (TENDER_TEST_ACQUIRER_URL,
 * src/acquirer/remote.ts), with its simulated ACS (`acs`; the connector's own when it answers
 * 3-D Secure, else a simulator's): POST /{method} with the request as JSON, 200 with the answer; a throw
 * of the connector (an injected fault) drops the connection, as a network would.
 */
export async function serveConnector(
  c: Connector,
  acs: Authenticator = isAcs(c) ? c : createSimulator(),
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', async () => {
      const method = (req.url ?? '').replace(/^\//, '') as (typeof METHODS)[number];
      if (req.method !== 'POST' || !METHODS.includes(method)) return void res.writeHead(404).end();
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        if (body.now) body.now = new Date(body.now);
        const to = (method === 'authenticate3ds' || method === 'completeChallenge' ? acs : c) as unknown as Record<
          string,
          (r: unknown) => Promise<unknown>
        >;
        const answer = await to[method].call(to, body);
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
