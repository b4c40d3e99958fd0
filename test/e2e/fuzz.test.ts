// Property-based fuzzing of every operation of /openapi.json (issue 22): fast-check generates
// requests (bodies valid by the schema, broken in one place, any JSON, not JSON at all; path ids
// that exist, do not, or are no ids; with the key, without, with a wrong one) and for each answer
// checks: never a 5xx, every status documented for the operation, the error body on every 4xx,
// and nothing stored by a 4xx. Each operation runs a bounded number of cases (RUNS).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { basic, request, startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { createCardOrder } from '../helpers/cards.ts';
import { body, type Schema } from '../helpers/fuzz.ts';
import type { Json } from '../helpers/json.ts';

/** Cases per operation: bounded by count, not time, so a loaded machine slows the test but never skips a case. */
const RUNS = 8;

let t: TestService;
let doc: Json;
let countAll: string;
/** Values for each path parameter: ids that exist in this project, ids of nothing, no ids. */
const ids: Record<string, string[]> = {};

before(async () => {
  // no worker: jobs and webhook deliveries would change the store between two counts
  t = await startTestService({ env: { TENDER_WORKER: 'off', WALLET_A_TIMEOUT_MS: '500' } });
  doc = (await t.api('GET', '/openapi.json')).body;
  const paid = await payOrder(t);
  const open = await createCardOrder(t);
  const link = await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'fuzz', amount: 100, currency: 'EUR' });
  const nothing = ['00000000-0000-4000-8000-000000000000', 'not-an-id', '%00', '1'];
  ids.order_id = [paid.id, open.order.id, ...nothing];
  ids.transaction_id = [paid.transactions[0].id, open.txn.id, ...nothing];
  ids.payment_link_id = [link.body.id, ...nothing];
  // the throttles' counters are bookkeeping of the request itself (a failed authentication counts), not stored data
  const tables = await t.db.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT IN ('schema_migrations', 'throttle_hits', 'card_attempts')",
  );
  countAll = `SELECT ${tables.map((r) => `(SELECT count(*) FROM "${r.name}")`).join(' + ')} AS n`;
});
after(async () => t?.close());

const rows = async () => Number((await t.db.query<{ n: number | string }>(countAll))[0].n);
const resolve = (ref: string): Schema =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((node: Json, part) => node[part], doc);

/** Operations whose upstream (a wallet provider's server) may fail: 502/504 are theirs, and documented. */
const UPSTREAM = new Set([502, 504]);

test('fuzzing every operation of /openapi.json: no 5xx, documented statuses, the error body on 4xx, nothing stored by a 4xx', async () => {
  const operations = Object.entries<Json>(doc.paths).flatMap(([path, ops]) =>
    Object.entries<Json>(ops).map(([method, op]) => ({ path, method: method.toUpperCase(), op })),
  );
  assert.ok(operations.length >= 30, `the document lists ${operations.length} operations`);
  const seen = new Map<string, Set<number>>();
  for (const { path, method, op } of operations) {
    const name = `${method} ${path}`;
    seen.set(name, new Set());
    const params: Array<{ name: string; in: string; schema?: Schema }> = op.parameters ?? [];
    const pathArb = fc.record(
      Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, fc.constantFrom(...(ids[p.name] ?? ['x']))])),
    );
    const queryArb = fc.record(
      Object.fromEntries(
        params
          .filter((p) => p.in === 'query')
          .map((p) => [p.name, fc.option(fc.oneof(fc.constantFrom('csv', ''), fc.string()), { nil: undefined })]),
      ),
    );
    const schema = op.requestBody?.content?.['application/json']?.schema as Schema | undefined;
    const bodyArb: fc.Arbitrary<{ raw?: string; contentType?: string }> =
      method === 'GET' || method === 'DELETE' ? fc.constant({}) : body(schema, resolve);
    const authArb = fc.constantFrom('key', 'key', 'key', 'none', 'wrong');
    await fc.assert(
      fc.asyncProperty(pathArb, queryArb, bodyArb, authArb, async (pathValues, query, b, auth) => {
        let url = path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(String(pathValues[n])).replace(/%2525/g, '%25'));
        const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][]).toString();
        if (qs) url += `?${qs}`;
        const headers: Record<string, string> = {};
        if (auth === 'key') headers.authorization = basic(t.project.api_key);
        if (auth === 'wrong') headers.authorization = basic('test_wrong');
        if (b.contentType) headers['content-type'] = b.contentType;
        const before = await rows();
        const res = await request(`${t.url}${url}`, method, undefined, headers, b.raw);
        const what = `${name} ${url} ${auth} ${(b.raw ?? '').slice(0, 300)} -> ${res.status} ${res.text.slice(0, 300)}`;
        seen.get(name)!.add(res.status);
        assert.ok(res.status < 500 || (UPSTREAM.has(res.status) && op.responses[res.status]), `a 5xx: ${what}`);
        assert.ok(op.responses[String(res.status)] || op.responses.default, `status not documented: ${what}`);
        if (res.status >= 400 && res.status < 500) {
          assert.equal(res.headers.get('content-type')?.split(';')[0], 'application/json', what);
          assert.equal(res.body?.error?.status, res.status, what);
          assert.equal(typeof res.body.error.type, 'string', what);
          assert.ok(typeof res.body.error.value === 'string' && res.body.error.value.length > 0, what);
          assert.equal(await rows(), before, `a 4xx stored something: ${what}`);
        }
      }),
      { numRuns: RUNS },
    );
  }
  // the generators reach past validation: some operations answered 2xx
  const succeeded = [...seen.values()].filter((s) => [...s].some((x) => x < 300)).length;
  assert.ok(succeeded >= 5, `only ${succeeded} operations ever answered 2xx`);
});
