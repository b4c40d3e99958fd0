import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Graceful close for the HTTP server. Node's server.close() ends idle keep-alive connections but
 * waits for a connection that never sent a request (a browser's preconnect, a client that gave
 * up) until its headers timeout, up to 90 s; and a response whose reader stopped reading never
 * ends at all. So: at close, connections with no request in flight go at once, and requests
 * still running after `graceMs` are cut.
 */
export function gracefulClose(server: Server, graceMs: number): (close: () => Promise<void>) => Promise<void> {
  const open = new Set<Socket>();
  const busy = new Set<Socket>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req, res) => {
    busy.add(req.socket);
    res.on('close', () => {
      busy.delete(req.socket);
      if (closing) req.socket.destroySoon(); // no next request on this connection
    });
  });

  return (close) => {
    closing = true;
    const done = close();
    for (const socket of open) if (!busy.has(socket)) socket.destroy();
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    return done.finally(() => clearTimeout(cut));
  };
}
