import http from 'node:http';
import https from 'node:https';

/** POSTs JSON and reads the answer's text; a throw is no answer (a timeout, a refused connection, a TLS failure). */
export function postJson(
  url: string,
  body: unknown,
  o: { timeoutMs: number; tls?: { cert?: string; key?: string; ca?: string } },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const lib = u.protocol === 'https:' ? https : http;
    const data = Buffer.from(JSON.stringify(body));
    const req = lib.request(
      u,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': data.length },
        timeout: o.timeoutMs,
        ...(u.protocol === 'https:' && o.tls ? { cert: o.tls.cert, key: o.tls.key, ca: o.tls.ca } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > 256 * 1024) req.destroy(new Error('answer too large'));
          else chunks.push(c);
        });
        res.on('end', () =>
          res.statusCode === 200 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`HTTP ${res.statusCode}`)),
        );
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    timer.unref();
    req.on('timeout', () => req.destroy(new Error(`no answer within ${o.timeoutMs} ms`)));
    req.on('error', (e) => (clearTimeout(timer), reject(e)));
    req.on('close', () => clearTimeout(timer));
    req.end(data);
  });
}
