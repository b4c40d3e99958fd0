import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
// Error mapping (src/http/errors.ts): every failure becomes the error body of docs/design.md "Errors"; a 500 never
// carries internals such as the message or stack of the underlying error.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { DomainError, ERROR_KINDS, invalid, notFound } from '../../src/domain/errors.ts';
import { bodyOf, fieldOf, statusOf, asDomainError } from '../../src/http/errors.ts';
import { buildApp } from '../../src/http/app.ts';
import { orderRoutes } from '../../src/http/api/orders.ts';
import { loadConfig } from '../../src/config.ts';
import { buildContext } from '../../src/main.ts';
import { createLogger } from '../../src/log.ts';
import type { Db } from '../../src/store/db/db.ts';
import type { Json } from '../helpers/json.ts';

test('a DomainError carries a kind, never a status; http/ maps the kind to the status and renders the error body', () => {
  const e = new DomainError('TransactionAlreadyStarted', 'already started');
  assert.equal(e.kind, 'conflict');
  assert.equal('status' in e, false, 'no HTTP status in the domain');
  assert.equal(statusOf(e), 409);
  assert.deepEqual(bodyOf(e), { error: { status: 409, type: 'TransactionAlreadyStarted', value: 'already started' } });
  const v = invalid('customer.postal_code', 'bad postal code');
  assert.deepEqual(bodyOf(v), {
    error: { status: 400, type: 'ValidationError', value: 'bad postal code', field: 'customer.postal_code' },
  });
  assert.deepEqual(bodyOf(notFound('order')), { error: { status: 404, type: 'NotFound', value: 'order not found' } });
  assert.equal(
    statusOf(new DomainError('IdempotencyError', 'in flight', undefined, 'conflict')),
    409,
    "a kind other than its type's default",
  );
  const extra = Object.assign(new DomainError('ValidationError', 'bad token', 'walletBPayMessage'), { extra: { code: 'expired' } });
  assert.deepEqual(bodyOf(extra), {
    error: { status: 400, type: 'ValidationError', value: 'bad token', field: 'walletBPayMessage', code: 'expired' },
  });
});

test("every error type answers the status of docs/design.md's error table", () => {
  // The project's own design document is the source of truth: its table lists every type once,
  // the type's own status first, then any other status the type answers in a special case.
  const design = readFileSync(new URL('../../docs/design.md', import.meta.url), 'utf8');
  const section = design.split(/^### Error types and status codes$/m)[1]?.split(/^#/m)[0] ?? '';
  const rows = [...section.matchAll(/^\| (\w+) \| ([\d /]+) \|/gm)].map((m) => [m[1], m[2].trim().split(' / ').map(Number)] as const);
  assert.deepEqual(rows.map(([type]) => type).sort(), Object.keys(ERROR_KINDS).sort(), 'the table lists every error type once');
  for (const [type, statuses] of rows) {
    assert.equal(statuses[0], statusOf(new DomainError(type as keyof typeof ERROR_KINDS, 'x')), `${type} answers ${statuses[0]} first`);
    assert.ok(
      statuses.every((s) => s >= 400 && s <= 599),
      `${type}: ${statuses} are error statuses`,
    );
  }
});

test('asDomainError: an unexpected error is a ServerError without its message or stack', () => {
  const err = new Error('connection to db at 10.0.0.5 refused with password hunter2');
  const api = asDomainError(err);
  assert.equal(statusOf(api), 500);
  assert.equal(api.type, 'ServerError');
  const text = JSON.stringify(bodyOf(api));
  assert.ok(!text.includes('hunter2') && !text.includes('10.0.0.5'), text);
  assert.ok(!/at .*\.ts:\d+/.test(text) && !text.includes('stack'), text);
  assert.deepEqual(Object.keys(bodyOf(api).error).sort(), ['status', 'type', 'value']);
  const typeErr = asDomainError(new TypeError("Cannot read properties of undefined (reading 'id')"));
  assert.equal(statusOf(typeErr), 500);
  assert.ok(!JSON.stringify(bodyOf(typeErr)).includes('reading'));
});

test('asDomainError: an DomainError passes unchanged', () => {
  const e = new DomainError('RefundError', 'too much', 'amount');
  assert.equal(asDomainError(e), e);
});

test('asDomainError: Ajv validation errors name the dotted field', () => {
  const cases: Array<[Json, string]> = [
    [{ keyword: 'required', instancePath: '', params: { missingProperty: 'currency' } }, 'currency'],
    [{ keyword: 'pattern', instancePath: '/customer/postal_code', params: {} }, 'customer.postal_code'],
    [
      { keyword: 'enum', instancePath: '/transactions/0/capture_mode', params: { allowedValues: ['manual', 'delayed'] } },
      'transactions[0].capture_mode',
    ],
    [{ keyword: 'additionalProperties', instancePath: '/customer', params: { additionalProperty: 'colour' } }, 'customer.colour'],
    [
      { keyword: 'required', instancePath: '/transactions/0', params: { missingProperty: 'payment_method' } },
      'transactions[0].payment_method',
    ],
    [{ keyword: 'type', instancePath: '/customer/phone_numbers/1', params: { type: 'string' } }, 'customer.phone_numbers[1]'],
  ];
  for (const [v, field] of cases) {
    const api = asDomainError(Object.assign(new Error('x'), { validation: [v], validationContext: 'body' }) as Json);
    assert.equal(statusOf(api), 400);
    assert.equal(api.type, 'ValidationError');
    assert.equal(api.field, field);
    assert.ok(api.message.startsWith(field), api.message);
  }
  assert.equal(fieldOf({ instancePath: '/order_id' }, 'params'), 'order_id');
  assert.equal(fieldOf({ instancePath: '' }, 'body'), 'body');
  const en = asDomainError(Object.assign(new Error('x'), { validation: [cases[2][0]], validationContext: 'body' }) as Json);
  assert.match(en.message, /manual, delayed/);
});

test('asDomainError: body parser errors are ValidationErrors', () => {
  for (const code of ['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY']) {
    const api = asDomainError(Object.assign(new Error('parser said'), { code, statusCode: 400 }) as Json);
    assert.equal(api.type, 'ValidationError', code);
    assert.equal(statusOf(api), 400, code);
  }
  const media = asDomainError(Object.assign(new Error('parser said'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }) as Json);
  assert.equal(media.type, 'ValidationError');
  assert.equal(statusOf(media), 415);
  assert.equal(media.field, 'Content-Type');
  const large = asDomainError(Object.assign(new Error('too large'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }) as Json);
  assert.equal(statusOf(large), 413);
  assert.equal(large.type, 'ValidationError');
});

// ---- the error handler on a live app ------------------------------------------------------

const lines: string[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});
const stubDb = {
  kind: 'postgres',
  query: async () => {
    throw new Error('no database in this test');
  },
  exec: async () => {},
  tx: async () => {
    throw new Error('no database in this test');
  },
  close: async () => {},
} as unknown as Db;

const config = loadConfig({ LOG_LEVEL: 'error' }, { port: 0, masterKey: randomBytes(32).toString('hex') });
const app = await buildApp(buildContext({ db: stubDb, config, log: createLogger('error', logStream) }), {
  authenticated: [orderRoutes],
  test: [],
  public: [],
  vault: [],
  'wallet-b-token': [],
  portal: [],
});
app.get('/boom', async () => {
  throw new Error('secret internals at /srv/tender/src/x.ts:12');
});
app.get('/boom-sync', () => {
  throw Object.assign(new RangeError('weird'), { statusCode: 500 });
});
app.post('/echo', async (req) => req.body);
await app.ready();
after(() => app.close());

test('a route that throws answers 500 with the error body and no stack; the log has the error', async () => {
  for (const url of ['/boom', '/boom-sync']) {
    const res = await app.inject({ method: 'GET', url });
    assert.equal(res.statusCode, 500);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json();
    assert.deepEqual(body, { error: { status: 500, type: 'ServerError', value: 'internal server error' } });
    assert.ok(!res.body.includes('secret') && !res.body.includes('.ts:') && !res.body.includes('weird'), res.body);
  }
  assert.ok(
    lines.some((l) => l.includes('secret internals')),
    'the error is logged for the operator',
  );
});

test('readyz answers 503 with the error body when the database is down; healthz stays up', async () => {
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 503);
  assert.equal(ready.json().error.status, 503);
  const health = await app.inject({ method: 'GET', url: '/healthz' });
  assert.equal(health.statusCode, 200);
});

test('an unknown route is a 404 with the error body, for every method', async () => {
  for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const) {
    const res = await app.inject({ method, url: '/v1/nothing/here' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error.type, 'NotFound');
    assert.equal(res.json().error.status, 404);
  }
});

test('a method the route does not have is a 405 with Allow and the error body', async () => {
  const res = await app.inject({ method: 'PATCH', url: '/v1/orders/' });
  assert.equal(res.statusCode, 405);
  assert.equal(res.headers.allow, 'POST');
  assert.equal(res.json().error.status, 405);
});

test('a body above the limit is refused with the error body', async () => {
  const res = await app.inject({
    method: 'POST',
    url: '/echo',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ description: 'x'.repeat(1024 * 1024 + 10) }),
  });
  assert.equal(res.statusCode, 413);
  assert.deepEqual(res.json().error, { status: 413, type: 'ValidationError', value: 'request body is too large' });
  const ok = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":1}' });
  assert.deepEqual(ok.json(), { a: 1 });
});
