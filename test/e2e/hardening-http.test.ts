// Every answer Tender or its framework gives carries the error body (issue 22): bad URLs,
// malformed HTTP, oversized headers and bodies, a missing Host, a method a path does not take;
// and Basic authentication answers 401 with its challenge and parses credentials strictly.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request, basic, validOrder, type TestService } from '../helpers/service.ts';
import { expectRejectedIn, ordersService, type Expect } from '../helpers/rejects.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => ({ t } = await ordersService()));
after(async () => t?.close());

/** Sends raw bytes on a new connection and reads the whole answer: status, headers and parsed body. */
function raw(bytes: string): Promise<{ status: number; headers: string; body: Json }> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    // no half-close: Node would drop a connection whose client ended before the answer was ready
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
      let body: Json = rest.join('\r\n\r\n');
      try {
        body = JSON.parse(body);
      } catch {
        /* asserted below */
      }
      resolve({ status, headers: head.toLowerCase(), body });
    });
  });
}

const errorBody = (res: { status: number; headers: string; body: Json }, status: number) => {
  assert.equal(res.status, status, JSON.stringify(res));
  assert.match(res.headers, /content-type: application\/json/);
  assert.equal(res.body?.error?.status, status, JSON.stringify(res.body));
  assert.equal(typeof res.body.error.type, 'string');
  assert.ok(res.body.error.value.length > 0);
};

const rejected = (call: Parameters<typeof expectRejectedIn>[1], e: Expect) => expectRejectedIn(t.db, call, e);
const auth = () => `Authorization: ${basic(t.project.api_key)}\r\n`;

test('bad percent-encoding in the path is a 400 with the error body', async () => {
  await rejected(() => t.api('GET', '/v1/orders/%E0%A4%A/'), { field: null });
  await rejected(() => t.api('GET', '/v1/orders/%zz/'), { field: null });
});

test('headers over the limit are a 431 with the error body', async () => {
  const big = 'x'.repeat(20_000);
  errorBody(await raw(`GET /v1/orders/x/ HTTP/1.1\r\nHost: a\r\n${auth()}X-Big: ${big}\r\n\r\n`), 431);
});

test('malformed HTTP is a 400 with the error body', async () => {
  errorBody(await raw('GARBAGE\r\n\r\n'), 400);
  errorBody(await raw('GET /v1/orders/ HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n'), 400);
  errorBody(await raw('GET /v1/orders/ HTTP/1.1\r\nBad Header\r\n\r\n'), 400);
});

test('an HTTP/1.1 request without Host is a 400 with the error body; HTTP/1.0 needs none', async () => {
  const res = await raw(`GET /v1/orders/00000000-0000-4000-8000-000000000000/ HTTP/1.1\r\n${auth()}Connection: close\r\n\r\n`);
  errorBody(res, 400);
  assert.equal(res.body.error.field, 'Host');
  const old = await raw(`GET /v1/orders/00000000-0000-4000-8000-000000000000/ HTTP/1.0\r\n${auth()}\r\n`);
  errorBody(old, 404);
});

test('a method a known path does not take is a 405 with Allow and the error body; an unknown path stays 404', async () => {
  const order = await t.api('POST', '/v1/orders/', validOrder());
  const res = await rejected(() => t.api('PATCH', `/v1/orders/${order.body.id}/`, {}), { status: 405, field: null });
  assert.deepEqual(res.headers.get('allow')?.split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'PUT']);
  const post = await rejected(() => t.api('GET', '/v1/orders/'), { status: 405, field: null });
  assert.equal(post.headers.get('allow'), 'POST');
  const vault = await rejected(() => request(`${t.config.vaultUrl}/v1/cards/`, 'PUT', {}), { status: 405, field: null });
  assert.equal(vault.headers.get('allow'), 'POST');
  await rejected(() => t.api('GET', '/v1/nothing-here/'), { status: 404, type: 'NotFound', field: null });
});

test('a body over 1 MiB is a 413 with the error body', async () => {
  const big = JSON.stringify(validOrder({ description: 'x'.repeat(1024 * 1024) }));
  await rejected(() => t.api('POST', '/v1/orders/', undefined, { raw: big }), { status: 413, field: null });
});

test('a 401 carries WWW-Authenticate: Basic realm="Tender", with or without credentials', async () => {
  for (const key of [null, 'test_wrong']) {
    const res = await rejected(() => t.api('GET', '/v1/orders/00000000-0000-4000-8000-000000000000/', undefined, { key }), {
      status: 401,
      type: 'Unauthorized',
      field: null,
    });
    assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Tender"');
  }
});

test('credentials are parsed strictly: anything but `Basic base64(key:)` is refused', async () => {
  const key = t.project.api_key;
  const b64 = Buffer.from(`${key}:`).toString('base64');
  const path = '/v1/orders/00000000-0000-4000-8000-000000000000/';
  const refused = [
    `Basic ${b64}AAAA`, // junk after the credentials
    `Basic ${b64}=`,
    `Basic ${b64} AAAA`,
    `Basic  ${b64}`, // two spaces
    `Basic ${b64.replace(/=+$/, '')}`, // padding missing
    `Basic ${Buffer.from(`${key}:secret`).toString('base64')}`, // a password
    `Basic ${Buffer.from(`${key}\u0000:`).toString('base64')}`,
    `Bearer ${key}`,
    key,
  ];
  for (const authorization of refused) {
    const res = await request(`${t.url}${path}`, 'GET', undefined, { authorization });
    assert.equal(res.status, 401, authorization);
    assert.equal(res.body.error.type, 'Unauthorized');
  }
  for (const authorization of [`Basic ${b64}`, `basic ${b64}`]) {
    const res = await request(`${t.url}${path}`, 'GET', undefined, { authorization });
    assert.equal(res.status, 404, authorization); // authenticated: the order does not exist
  }
});
