// Operations: health and readiness, the OpenAPI document and docs page, log redaction, and
// graceful shutdown (in-flight requests finish). The shutdown test closes the service: it runs last.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Writable } from 'node:stream';
import { startTestService, validOrder, basic, cardOrder, type TestService } from '../helpers/service.ts';
import { createLogger } from '../../src/log.ts';
import { prefixOf } from '../../src/http/app.ts';
import type { Json } from '../helpers/json.ts';

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});

let t: TestService;
before(async () => {
  t = await startTestService({ logStream });
});
after(async () => t?.close());

test('/healthz and /readyz answer without a key', async () => {
  const h = await t.api('GET', '/healthz', undefined, { key: null });
  assert.equal(h.status, 200);
  assert.deepEqual(h.body, { status: 'ok' });
  const r = await t.api('GET', '/readyz/', undefined, { key: null });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { status: 'ready' });
});

test('/docs serves a readable HTML page', async () => {
  for (const path of ['/docs', '/docs/']) {
    const res = await fetch(`${t.url}${path}`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const html = await res.text();
    assert.match(html, /<html/i);
    assert.match(html, /Tender payment API/);
  }
});

// ---- OpenAPI --------------------------------------------------------------------------------

/** Every route of the running app, from Fastify's route tree: full path -> methods. */
function routesOf(tree: string): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>();
  const parents: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    const path = (depth ? parents[depth - 1] : '') + m[2];
    parents[depth] = path;
    if (m[3]) routes.set(path, new Set(m[3].split(', ').filter((x) => x !== 'HEAD')));
  }
  return routes;
}

const asOpenApi = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\/$/, '');

test('/openapi.json is OpenAPI 3.1 with the servers and Basic auth', async () => {
  const res = await t.api('GET', '/openapi.json', undefined, { key: null });
  assert.equal(res.status, 200);
  const doc = res.body;
  assert.equal(doc.openapi, '3.1.0');
  assert.ok(doc.info.title && doc.info.version);
  assert.deepEqual(doc.servers, [{ url: t.url }]);
  assert.deepEqual(doc.components.securitySchemes.basicAuth, {
    type: 'http',
    scheme: 'basic',
    description: 'API key as username, empty password',
  });
});

test('/openapi.json documents every API route of the running service, with its methods', async () => {
  const doc = (await t.api('GET', '/openapi.json', undefined, { key: null })).body;
  const documented = new Map(Object.entries(doc.paths as Record<string, Record<string, unknown>>).map(([p, ops]) => [asOpenApi(p), ops]));
  const surfaces = ['/v1/', `${prefixOf(t.config.vaultUrl)}/v1/`, `${prefixOf(t.config.walletBTokenUrl)}/`];
  const routes = routesOf(t.svc.app.printRoutes({ commonPrefix: false }));
  assert.ok(routes.has('/v1/orders'), 'the route tree was read');
  let checked = 0;
  for (const [path, methods] of routes) {
    if (!surfaces.some((s) => `${path}/`.startsWith(s))) continue;
    const ops = documented.get(asOpenApi(path));
    assert.ok(ops, `${path} is in /openapi.json`);
    for (const method of methods) {
      assert.ok(ops[method.toLowerCase()], `${method} ${path} is in /openapi.json`);
      checked++;
    }
  }
  assert.ok(checked >= 8, `checked ${checked} operations`);
});

test('/openapi.json: every operation declares its path parameters and its request body schema', async () => {
  const doc = (await t.api('GET', '/openapi.json', undefined, { key: null })).body;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      for (const name of names) {
        const p = (op.parameters ?? []).find((x: Json) => x.in === 'path' && x.name === name);
        assert.ok(p, `${method} ${path} declares ${name}`);
        assert.equal(p.required, true);
      }
      if (op.requestBody) assert.ok(op.requestBody.content['application/json'].schema, `${method} ${path} has a JSON schema`);
      assert.ok(op.responses && Object.keys(op.responses).length, `${method} ${path} has responses`);
    }
  }
});

test('/openapi.json: the orders operations carry the same schemas as validation', async () => {
  const doc = (await t.api('GET', '/openapi.json', undefined, { key: null })).body;
  const resolve = (s: Json): Json => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
  const create = doc.paths['/v1/orders/'].post;
  assert.deepEqual(create.security, [{ basicAuth: [] }]);
  const body = resolve(create.requestBody.content['application/json'].schema);
  assert.deepEqual(body.required, ['currency', 'amount']);
  assert.equal(body.additionalProperties, false);
  for (const f of [
    'merchant_order_id',
    'currency',
    'amount',
    'expiration_period',
    'payment_methods',
    'transactions',
    'return_url',
    'failure_url',
    'webhook_url',
    'customer',
    'client',
    'extra',
    'order_lines',
  ]) {
    assert.ok(body.properties[f], `POST /v1/orders/ documents ${f}`);
  }
  assert.equal(body.properties.amount.minimum, 0);
  assert.equal(body.properties.amount.maximum, Number.MAX_SAFE_INTEGER);
  assert.equal(body.properties.transactions.maxItems, 1);
  const customer = resolve(body.properties.customer);
  assert.equal(customer.properties.postal_code.pattern, '^[A-Z0-9]+( [A-Z0-9]*)?$');
  assert.equal(customer.properties.first_name.maxLength, 120);
  assert.ok(create.responses['201'] && create.responses['400'] && create.responses['401']);
  const txn = resolve(body.properties.transactions.items);
  assert.deepEqual(txn.required, ['payment_method']);
  assert.deepEqual(txn.properties.capture_mode.enum, ['manual', 'delayed']);

  const get = doc.paths['/v1/orders/{order_id}/'].get;
  assert.equal(get.parameters[0].schema.format, 'uuid');
  const put = resolve(doc.paths['/v1/orders/{order_id}/'].put.requestBody.content['application/json'].schema);
  // PUT takes the order as GET returns it: the merchant's fields, and the read-only ones documented as such
  const editable = ['customer', 'description', 'extra', 'failure_url', 'merchant_order_id', 'order_lines', 'return_url', 'webhook_url'];
  for (const f of editable)
    assert.ok(put.properties[f] && !/read-only/.test(put.properties[f].description ?? ''), `PUT documents ${f} as editable`);
  for (const f of ['id', 'amount', 'currency', 'status', 'transactions', 'client', 'created', 'modified', 'refunded_amount'])
    assert.match(put.properties[f]?.description ?? '', /read-only/, `PUT documents ${f} as read-only`);
  assert.equal(put.additionalProperties, false);
  assert.ok(doc.paths['/v1/orders/{order_id}/'].delete);
  const start = resolve(doc.paths['/v1/orders/{order_id}/transactions/'].post.requestBody.content['application/json'].schema);
  assert.deepEqual(start.required, ['payment_method']);
  assert.ok(doc.paths['/v1/merchants/self/projects/self/'].get);
  assert.ok(doc.paths['/v1/merchants/self/projects/self/currencies/'].get);
  assert.equal(doc.paths['/healthz'], undefined, 'operational routes are not part of the API document');
});

// ---- logs ----------------------------------------------------------------------------------

test('logs never carry the API key or the Authorization header', async () => {
  const key = t.project.api_key;
  const order = await t.api('POST', '/v1/orders/', cardOrder());
  assert.equal(order.status, 201);
  await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: `${key}x` });
  await t.api('GET', '/v1/nothing/', undefined, { headers: { 'x-api-key': key } });
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(lines.length > 0, 'request logs were written');
  const all = lines.join('');
  assert.ok(all.includes('"url":"/v1/orders/"'), 'the request was logged');
  assert.ok(!all.includes(key), 'the API key is not in the logs');
  assert.ok(!all.includes(basic(key).slice(6)), 'the Authorization value is not in the logs');
});

test('the logger redacts PAN, CVC, API keys and Authorization wherever they sit', () => {
  const out: string[] = [];
  const log = createLogger('info', new Writable({ write: (c, _e, d) => (out.push(String(c)), d()) }));
  log.info(
    {
      pan: '4111111111111111',
      cvc: '737',
      api_key: 'test_secretkey',
      card: { pan: '5555555555554444', cvc: '123' },
      project: { api_key: 'live_secretkey' },
      req: { headers: { authorization: 'Basic dGVzdF9zZWNyZXQ6' } },
      headers: { authorization: 'Basic bGl2ZV9zZWNyZXQ6' },
      authorization: 'Basic c2VjcmV0Og==',
    },
    'card stored',
  );
  const line = out.join('');
  // CVCs are matched as JSON strings: three bare digits also turn up inside the time and pid
  for (const secret of [
    '4111111111111111',
    '5555555555554444',
    '"737"',
    '"123"',
    'test_secretkey',
    'live_secretkey',
    'dGVzdF9zZWNyZXQ6',
    'bGl2ZV9zZWNyZXQ6',
    'c2VjcmV0Og',
  ]) {
    assert.ok(!line.includes(secret), `${secret} is redacted: ${line}`);
  }
  assert.ok(line.includes('[redacted]'));
  assert.ok(line.includes('card stored'));
});

// ---- graceful shutdown (last: it closes the service) --------------------------------------

test('graceful shutdown: a request in flight completes, then new connections are refused', async () => {
  const body = JSON.stringify(validOrder({ description: 'sent while closing' }));
  const url = new URL(`${t.url}/v1/orders/`);
  const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
  const req = http.request({
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'POST',
    headers: { authorization: basic(t.project.api_key), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const response = new Promise<{ status: number; connection?: string; body: Json }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  // half the body now, the rest once the server is closing
  await new Promise<void>((r) => req.write(body.slice(0, 20), () => r()));
  await new Promise((r) => setTimeout(r, 100)); // the server has the request in hand
  const closing = t.svc.close();
  await new Promise((r) => setTimeout(r, 100));
  req.end(body.slice(20));
  const res = await response;
  await closing;
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.description, 'sent while closing');
  assert.equal(res.connection, 'close', 'the answer closes its keep-alive connection so shutdown does not wait for it');
  const afterRows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders');
  assert.equal(afterRows[0].n, before[0].n + 1);
  await assert.rejects(fetch(`${t.url}/healthz`), 'the closed server takes no new connections');
});
