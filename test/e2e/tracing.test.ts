// OpenTelemetry traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, a card payment's spans reach a
// local OTLP/HTTP receiver: the request span with its database and acquirer child spans, under
// one trace id that is also the X-Request-Id header and the id in the request's log lines. Then
// neither /metrics nor any exported span holds the card, the cardholder's name, a key or a secret.
// Both stores (PGlite by default, PostgreSQL with DATABASE_URL).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get as httpGet, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { LOCAL_RECEIVERS, basic, request, startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { createCardOrder, futureExpiry } from '../helpers/cards.ts';
import { payOrder } from '../helpers/pay.ts';
import { freePort } from '../helpers/cli.ts';
import { waitFor } from '../helpers/child-service.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}

const spans: OtlpSpan[] = [];
const bodies: string[] = [];
let receiver: Server;
let t: TestService;
let metricsPort: number;
const logs: Array<Record<string, unknown>> = [];

before(async () => {
  // a local OTLP/HTTP receiver (JSON encoding, the exporter's default)
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
        for (const rs of parsed.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  metricsPort = await freePort();
  const logStream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  t = await startTestService({ logStream, env: { ...LOCAL_RECEIVERS, METRICS_PORT: String(metricsPort) } });
});
after(async () => {
  await t?.close();
  receiver?.closeAllConnections();
  receiver?.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
});

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v && Object.values(v)[0];
};

test("a card payment's request span has database and acquirer child spans under the X-Request-Id trace id, also in its log lines", async () => {
  const { order, txn, setup_token } = await createCardOrder(t);
  const card = await request(
    `${t.config.vaultUrl}/v1/cards/`,
    'POST',
    { pan: '4111111111111111', expiry: futureExpiry(), name: 'Ada Lovelace', setup_token },
    { authorization: basic(t.project.api_key) },
  );
  assert.equal(card.status, 201, card.text);
  const auth = await t.api('POST', `/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, {
    vault_token: card.body.vault_token,
    cvc: '123',
  });
  assert.equal(auth.status, 200, auth.text);
  const traceId = auth.headers.get('x-request-id') ?? '';
  assert.match(traceId, /^[0-9a-f]{32}$/);

  const route = 'POST /v1/orders/:order_id/transactions/:transaction_id/authenticate/';
  const root = await waitFor('the request span', async () => spans.find((s) => s.traceId === traceId && s.name === route), 20_000);
  const mine = spans.filter((s) => s.traceId === traceId);
  const byId = new Map(mine.map((s) => [s.spanId, s]));
  /** whether s descends from the request span */
  const under = (s: OtlpSpan) => {
    for (let p = s.parentSpanId; p; p = byId.get(p)?.parentSpanId) if (p === root.spanId) return true;
    return false;
  };
  const db = mine.filter((s) => s.name.startsWith('db ') && under(s));
  const acquirer = mine.filter((s) => s.name.startsWith('acquirer ') && under(s));
  assert.ok(db.length > 0, `database spans under the request: ${mine.map((s) => s.name).join(', ')}`);
  assert.ok(acquirer.length > 0, `acquirer spans under the request: ${mine.map((s) => s.name).join(', ')}`);
  assert.equal(attr(acquirer[0], 'tender.acquirer'), 'simulator');
  assert.equal(attr(db[0], 'db.system.name'), t.db.kind === 'postgres' ? 'postgresql' : 'pglite');
  assert.equal(attr(root, 'http.route'), '/v1/orders/:order_id/transactions/:transaction_id/authenticate/');

  // the request's log line carries the same id
  const line = logs.find((l) => l.msg === 'request completed' && (l.req as { url?: string })?.url?.includes('/authenticate'));
  assert.ok(line, 'a log line for the request');
  assert.equal(line.reqId, traceId);
  assert.equal(line.trace_id, traceId);
});

test("an invitation link's token is not in its request span (issue 42, item 11)", async () => {
  const token = 'Zq9Xv2LmTr8Kp4WsNb6YcD1e';
  const res = await fetch(`${t.config.portalUrl}/invite/${token}`, { redirect: 'manual' });
  await res.text();
  const traceId = res.headers.get('x-request-id')!;
  const span = await waitFor('the invitation page span', async () => spans.find((s) => s.traceId === traceId && !s.parentSpanId), 20_000);
  assert.match(String(attr(span, 'url.path')), /\/invite\/\[masked\]$/);
  assert.ok(!bodies.join('').includes(token), 'the token is in an exported span');
});

test("a caller's traceparent is kept: its trace id becomes the request id", async () => {
  const caller = '4bf92f3577b34da6a3ce929d0e0e4736';
  // node:http, not fetch: in this process undici's instrumentation would put a traceparent of its own on a fetch
  const res = await new Promise<{ status?: number; id?: string | string[] }>((resolve, reject) =>
    httpGet(
      `${t.url}/v1/merchants/self/projects/self/`,
      { headers: { authorization: basic(t.project.api_key), traceparent: `00-${caller}-00f067aa0ba902b7-01` } },
      (r) => {
        r.resume();
        r.on('end', () => resolve({ status: r.statusCode, id: r.headers['x-request-id'] }));
      },
    ).on('error', reject),
  );
  assert.equal(res.status, 200);
  assert.equal(res.id, caller);
  const span = await waitFor(
    'the span',
    async () => spans.find((s) => s.traceId === caller && s.name === 'GET /v1/merchants/self/projects/self/'),
    20_000,
  );
  assert.equal(span.parentSpanId, '00f067aa0ba902b7');
});

test('a webhook delivery is a span, with the outgoing POST under it (query string left out)', async () => {
  const hook = `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/hook?token=secret-token-in-query`;
  const o = await t.api('POST', '/v1/orders/', validOrder({ webhook_url: hook }));
  assert.equal(o.status, 201, o.text);
  assert.equal((await t.api('DELETE', `/v1/orders/${o.body.id}/`)).status, 200);
  const delivery = await waitFor('the delivery span', async () => spans.find((s) => s.name === 'webhook delivery'), 20_000);
  const post = await waitFor(
    'the POST under it',
    async () => spans.find((s) => s.parentSpanId === delivery.spanId && s.traceId === delivery.traceId),
    20_000,
  );
  assert.equal(attr(post, 'http.request.method'), 'POST');
  assert.equal(attr(post, 'url.full'), `${process.env.OTEL_EXPORTER_OTLP_ENDPOINT}/hook`);
  assert.ok(!bodies.join('\n').includes('secret-token-in-query'), 'the query string is not exported');
});

test('after card payments, neither /metrics nor exported spans hold card data, names, keys or secrets', async () => {
  const pan = '5555555555554444';
  const paid = await payOrder(t, { amount: 1234 }, { pan });
  assert.equal(paid.status, 'completed');
  // a failing payment too (its error paths are traced and counted as well)
  await payOrder(t, {}, { pan: '4000000000000002' });
  const spansBefore = spans.length;
  await waitFor('the spans of the payments', async () => spans.length > spansBefore && bodies.length > 0, 20_000);
  await new Promise((r) => setTimeout(r, 1500)); // the exporter's next batch (it sends every second)
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  assert.match(metrics, /tender_authorizations_total/);
  const secrets = [pan, '4111111111111111', '4000000000000002', 'Ada Lovelace', 'Lovelace', t.project.api_key, t.config.masterKey!];
  for (const [where, text] of [
    ['/metrics', metrics],
    ['the exported spans', bodies.join('\n')],
  ] as const) {
    for (const s of secrets) assert.ok(!text.includes(s), `${where} holds ${s.slice(0, 4)}...`);
    assert.doesNotMatch(text, /whsec_/, where);
  }
});
