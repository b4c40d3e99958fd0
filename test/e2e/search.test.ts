// POST /v1/search/orders/ and its CSV report, black-box through the API: every construct of the
// query language on orders made through the real card and money flows, every error, the paging
// rules, a walk over 25,000 seeded orders, and the CSV parsed back against the JSON API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { seedOrders, type SeedResult } from '../../src/services/seed.ts';
import { checkLedger } from '../../src/services/ledger-check.ts';
import { COLUMN_NAMES, orderReport } from '../../src/services/reports.ts';
import { findProject } from '../../src/store/projects.ts';
import type { SearchInput } from '../../src/services/search.ts';

let t: TestService;
/** project A: a dozen orders made through the API; project B: 25,000+ seeded orders */
let B: { project_id: string; api_key: string };
let seeded: SeedResult;
const o: Record<string, any> = {};

const customer = (email: string | undefined, id: string) => {
  const c: Record<string, unknown> = { ...validOrder().customer, merchant_customer_id: id, email_address: email };
  if (email === undefined) delete c.email_address;
  return c;
};

before(async () => {
  t = await startTestService();
  const txnPath = (x: any) => `/v1/orders/${x.id}/transactions/${x.transactions[0].id}`;
  const ok = (res: { status: number; text: string }, status = 201) => assert.equal(res.status, status, res.text);
  o.a1 = await payOrder(t, { merchant_order_id: 'ORD-A-1', description: 'Gift card for Ada', currency: 'EUR', amount: 1234, customer: customer('ada@example.com', 'c-1') });
  o.a2 = await payOrder(t, { merchant_order_id: 'ORD-A-2', description: 'Tea set', currency: 'JPY', amount: 1234, customer: customer('Grace@Example.COM', 'c-2') }, { pan: '5555555555554444' });
  o.a3 = await payOrder(t, { merchant_order_id: 'ORD-B-3', description: 'Two mugs', currency: 'KWD', amount: 1234, customer: customer('alan@example.com', 'c-3') }, { capture_mode: 'manual' });
  o.a4 = await payOrder(t, { merchant_order_id: 'ORD-B-4', description: 'Desk lamp', currency: 'EUR', amount: 5000, customer: customer('ada@example.com', 'c-1') }, { capture_mode: 'manual' });
  o.a5 = await payOrder(t, { merchant_order_id: 'ORD-C-5', description: 'Concert tickets', currency: 'USD', amount: 999, customer: customer('ken@example.com', 'c-5') }, { pan: '4000000000000002' });
  const a6 = await t.api('POST', '/v1/orders/', validOrder({ merchant_order_id: 'X 4', description: 'Say "hi" now', currency: 'EUR', amount: 250, customer: customer(undefined, 'c-6') }));
  ok(a6);
  const a7 = await t.api('POST', '/v1/orders/', validOrder({ merchant_order_id: undefined, description: undefined, currency: 'GBP', amount: 100, customer: customer('zed@example.com', 'c-7') }));
  ok(a7);
  ok(await t.api('DELETE', `/v1/orders/${a7.body.id}/`), 200);
  o.a8 = await payOrder(t, { merchant_order_id: 'ORD-C-8', description: 'Running shoes', currency: 'EUR', amount: 2000, customer: customer('ada@example.com', 'c-8') }, { pan: '378282246310005' });
  o.a9 = await payOrder(t, { merchant_order_id: 'ORD-C-9', description: 'Coffee', currency: 'EUR', amount: 1500, customer: customer('bob@example.com', 'c-9') });
  const r1 = await t.api('POST', `/v1/orders/${o.a1.id}/refunds/`, { amount: 400, description: 'returned' });
  ok(r1);
  const c3 = await t.api('POST', `${txnPath(o.a3)}/captures/`);
  ok(c3);
  const v4 = await t.api('POST', `${txnPath(o.a4)}/voids/amount/`, { amount: 1500, description: 'partial release' });
  ok(v4);
  const cb8 = await t.api('POST', `/v1/test/orders/${o.a8.id}/chargeback/`, {});
  ok(cb8);
  ok(await t.api('POST', `/v1/test/orders/${o.a9.id}/settle/`, {}), 200);
  o.link = randomUUID();
  await t.db.query('UPDATE orders SET payment_link_id = $1 WHERE id = $2', [o.link, a6.body.id]);
  Object.assign(o, { a6: { id: a6.body.id }, a7: { id: a7.body.id }, r1: r1.body, c3: c3.body, v4: v4.body, cb8: cb8.body });
  for (const k of Object.keys(o)) if (k !== 'link') o[k] = (await t.api('GET', `/v1/orders/${o[k].id}/`)).body;

  const b = await t.newProject('test');
  B = { project_id: b.project_id, api_key: b.api_key };
  // 21,000 payment orders and their capture, void, refund and chargeback orders: over 25,000
  seeded = await seedOrders(t.svc.ctx, { projectId: B.project_id, orders: 21_000, batch: 7000 });
});
after(async () => t?.close());

const ALL_A = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'r1', 'c3', 'v4', 'cb8'];
const search = (body: Record<string, unknown>, key?: string, qs = '') => t.api('POST', `/v1/search/orders/${qs}`, body, { key });
/** the names (a1, r1, ...) of the project A orders a query finds, sorted */
async function found(query: string): Promise<string[]> {
  const res = await search({ query, size: 1000 });
  assert.equal(res.status, 200, `${query}: ${res.text}`);
  const names = new Map(Object.entries(o).filter(([k]) => k !== 'link').map(([k, v]) => [v.id, k]));
  assert.equal(res.body.total, res.body.orders.length, query);
  return res.body.orders.map((x: any) => names.get(x.id) ?? `?${x.id}`).sort();
}
const sorted = (xs: string[]) => [...xs].sort();

function expectError(res: { status: number; body: any; text: string }, field: string, value: RegExp) {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.type, 'ValidationError', res.text);
  assert.equal(res.body.error.status, 400);
  assert.equal(res.body.error.field, field, res.text);
  assert.match(res.body.error.value, value);
}

// ---------- The query language, end to end ----------

test('the example orders are what the grammar tests assume', () => {
  assert.equal(o.a1.status, 'completed');
  assert.equal(o.a5.status, 'error');
  assert.equal(o.a5.transactions[0].status, 'declined');
  assert.equal(o.a6.status, 'new');
  assert.equal(o.a7.status, 'cancelled');
  assert.equal(o.a9.transactions[0].status, 'completed');
  assert.equal(o.c3.capture_of_order_id, o.a3.id);
  assert.equal(o.r1.refund_of_order_id, o.a1.id);
  assert.ok(o.a1.flags.includes('has-refunds'));
});

test('* and field:value on every field', async () => {
  const cases: Array<[string, string[]]> = [
    ['*', ALL_A],
    ['status:completed', ['a1', 'a2', 'a3', 'a4', 'a8', 'a9', 'r1', 'c3', 'v4', 'cb8']],
    ['status:ERROR', ['a5']],
    ['currency:jpy', ['a2']],
    ['currency:KWD', ['a3', 'c3']],
    ['amount:1234', ['a1', 'a2', 'a3', 'c3']],
    [`id:${o.a2.id}`, ['a2']],
    [`id:${o.a2.id.toUpperCase()}`, ['a2']],
    ['merchant_order_id:ORD-A-1', ['a1', 'r1']],
    ['merchant_order_id:ord-a-1', []],
    ['customer.email_address:GRACE@example.com', ['a2']],
    ['customer.merchant_customer_id:c-1', ['a1', 'a4', 'r1', 'v4']],
    ['flags:has-refunds', ['a1']],
    ['flags:is-refund', ['r1']],
    ['flags:is-test', ALL_A],
    ['description:MUG', ['a3', 'c3']],
    [`related_payment_link_id:${o.link}`, ['a6']],
    ['transactions.payment_method:credit-card', ['a1', 'a2', 'a3', 'a4', 'a5', 'a8', 'a9', 'r1', 'c3', 'v4', 'cb8']],
    ['transactions.status:declined', ['a5']],
    ['transactions.status:completed', ['a3', 'a9', 'r1', 'v4', 'cb8']],
    ['transactions.payment_method_brand:MASTERCARD', ['a2']],
    ['transactions.payment_method_brand:amex', ['a8', 'cb8']],
    [`transactions.id:${o.a5.transactions[0].id}`, ['a5']],
    [`created:${o.a2.created.slice(0, 10)}`, ALL_A],
    [`created:${o.a2.created}`, ['a2']],
    [`modified:${o.a2.modified.slice(0, 10)}`, ALL_A],
    [`completed:${o.a2.completed.slice(0, 10)}`, ALL_A.filter((x) => x !== 'a6')],
  ];
  for (const [q, want] of cases) assert.deepEqual(await found(q), sorted(want), q);
});

test('quoted values, escapes, wildcards and field:*', async () => {
  const cases: Array<[string, string[]]> = [
    ['description:"gift card"', ['a1']],
    ['merchant_order_id:"X 4"', ['a6']],
    ['merchant_order_id:X\\ 4', ['a6']],
    ['description:"say \\"hi\\""', ['a6']],
    ['merchant_order_id:ORD-B-*', ['a3', 'a4', 'c3', 'v4']],
    ['merchant_order_id:"ORD-B-*"', []],
    ['customer.email_address:ada*', ['a1', 'a4', 'a8', 'r1', 'v4', 'cb8']],
    ['flags:has-*', ['a1', 'a3', 'a4', 'a8']],
    ['completed:*', ALL_A.filter((x) => x !== 'a6')],
    ['NOT customer.email_address:*', ['a6']],
    ['merchant_order_id:*', ALL_A.filter((x) => x !== 'a7')],
  ];
  for (const [q, want] of cases) assert.deepEqual(await found(q), sorted(want), q);
});

test('ranges: inclusive, exclusive, mixed, open ends, dates and date-times', async () => {
  const after2 = ALL_A.filter((k) => o[k].created > o.a2.created);
  const cases: Array<[string, string[]]> = [
    ['amount:[1000 TO 2000]', ['a1', 'a2', 'a3', 'c3', 'a8', 'cb8', 'a9', 'v4']],
    ['amount:{1234 TO 2000}', ['a9', 'v4']],
    ['amount:{1234 TO 2000]', ['a9', 'v4', 'a8', 'cb8']],
    ['amount:[1500 TO 2000}', ['a9', 'v4']],
    ['amount:[2001 TO *]', ['a4']],
    ['amount:[* TO 400]', ['r1', 'a6', 'a7']],
    ['amount:[* TO *]', ALL_A],
    [`created:[${o.a2.created.slice(0, 10)} TO ${o.a2.created.slice(0, 10)}]`, ALL_A],
    ['created:[* TO 2000-01-01]', []],
    [`created:{${o.a2.created} TO *]`, after2],
    [`created:[${o.a2.created} TO *]`, ['a2', ...after2]],
    ['NOT completed:[2000-01-01 TO *]', ['a6']],
  ];
  for (const [q, want] of cases) assert.deepEqual(await found(q), sorted(want), q);
});

test('AND, OR, NOT, parentheses, field groups and precedence', async () => {
  const cases: Array<[string, string[]]> = [
    ['currency:EUR AND amount:[2000 TO *]', ['a4', 'a8', 'cb8']],
    ['currency:EUR && amount:[2000 TO *]', ['a4', 'a8', 'cb8']],
    ['currency:EUR amount:[2000 TO *]', ['a4', 'a8', 'cb8']],
    ['currency:JPY OR currency:KWD', ['a2', 'a3', 'c3']],
    ['currency:JPY || currency:KWD', ['a2', 'a3', 'c3']],
    ['NOT status:completed', ['a5', 'a6', 'a7']],
    ['-status:completed', ['a5', 'a6', 'a7']],
    ['!status:completed', ['a5', 'a6', 'a7']],
    ['+status:error', ['a5']],
    ['(currency:JPY OR currency:KWD) AND status:completed', ['a2', 'a3', 'c3']],
    ['currency:JPY OR currency:KWD AND flags:is-refund', ['a2']],
    ['(currency:JPY OR currency:KWD) AND flags:is-refund', []],
    ['status:new OR status:cancelled AND NOT currency:GBP', ['a6']],
    ['status:(error OR cancelled)', ['a5', 'a7']],
    ['NOT (currency:EUR OR currency:JPY)', ['a3', 'c3', 'a5', 'a7']],
    ['NOT NOT status:error', ['a5']],
    ['NOT transactions.status:declined', ALL_A.filter((x) => x !== 'a5')],
    ['transactions.status:declined OR transactions.payment_method_brand:amex', ['a5', 'a8', 'cb8']],
    ['* AND currency:KWD', ['a3', 'c3']],
    ['* OR currency:KWD', ALL_A],
  ];
  for (const [q, want] of cases) assert.deepEqual(await found(q), sorted(want), q);
});

test('bare words search merchant_order_id, customer e-mail and description', async () => {
  const cases: Array<[string, string[]]> = [
    ['ORD-A-1', ['a1', 'r1']],
    ['ADA@example.com', ['a1', 'a4', 'a8', 'r1', 'v4', 'cb8']],
    ['lamp', ['a4']],
    ['"Tea set"', ['a2']],
    ['tea set', ['a2']],
    ['ORD-C*', ['a5', 'a8', 'cb8', 'a9']],
    ['and', []],
    ['returned OR lamp', ['r1', 'a4']],
  ];
  for (const [q, want] of cases) assert.deepEqual(await found(q), sorted(want), q);
});

test('orders come as GET /v1/orders/{id}/ shows them', async () => {
  const res = await search({ query: '*', size: 100 });
  assert.equal(res.status, 200);
  assert.equal(res.body.orders.length, ALL_A.length);
  for (const x of res.body.orders) assert.deepEqual(x, (await t.api('GET', `/v1/orders/${x.id}/`)).body);
});

test('a key sees only its own project', async () => {
  const res = await search({ query: `id:${o.a1.id}` }, B.api_key);
  assert.equal(res.status, 200);
  assert.equal(res.body.total, 0);
  assert.deepEqual(res.body.orders, []);
  assert.equal(res.body.search_after, null);
  assert.equal((await search({ query: '*' }, 'test_wrong')).status, 401);
});

// ---------- Errors ----------

test('syntax errors give the position', async () => {
  expectError(await search({ query: 'status:completed AND' }), 'query', /at position 20\b/);
  expectError(await search({ query: '(status:new' }), 'query', /Missing '\)' at position 11/);
  expectError(await search({ query: 'amount:[1 TO 2' }), 'query', /Expected '\]' or '\}' to close the range at position 14/);
  expectError(await search({ query: 'description:"open' }), 'query', /Missing closing '"' .* position 12/);
  expectError(await search({ query: '*ORD' }), 'query', /Only a trailing \* wildcard .* at position 0/);
  expectError(await search({ query: 'ab?c' }), 'query', /position 2/);
  expectError(await search({ query: '' }), 'query', /Empty query .* position 0/);
  expectError(await search({ query: 'status:new OR' }), 'query', /position 13/);
});

test('an unknown field or a bad value names the field', async () => {
  const res = await search({ query: 'status:new AND customer.emial:x' });
  expectError(res, 'query', /Unknown field "customer\.emial" at position 15/);
  expectError(await search({ query: 'id:123' }), 'query', /field "id" at position 3: expected a UUID/);
  expectError(await search({ query: 'amount:9.95' }), 'query', /field "amount" at position 7/);
  expectError(await search({ query: 'created:2024-02-30' }), 'query', /field "created" at position 8/);
  expectError(await search({ query: 'status:compleeted' }), 'query', /field "status" at position 7: expected one of/);
  expectError(await search({ query: 'status:[a TO b]' }), 'query', /Field "status" does not support ranges/);
  expectError(await search({ query: 'id:abc*' }), 'query', /Field "id" does not support wildcards/);
});

test('bad sort, search_after, size and unknown members are ValidationErrors naming the member', async () => {
  expectError(await search({ query: '*', sort: 'status asc' }), 'sort', /Invalid sort "status asc"/);
  expectError(await search({ query: '*', search_after: 'not a cursor!' }), 'search_after', /Invalid search_after/);
  expectError(await search({ query: '*', search_after: 7 }), 'search_after', /"-1"/);
  const first = await search({ query: '*', size: 2, sort: 'amount asc', search_after: '-1' });
  assert.equal(first.status, 200);
  expectError(await search({ query: '*', size: 2, sort: 'created desc', search_after: first.body.search_after }), 'search_after', /sort "amount asc"/);
  expectError(await search({ query: '*', size: 0 }), 'size', /size/);
  expectError(await search({ query: '*', size: 1001 }), 'size', /size/);
  expectError(await search({ query: '*', start: -1 }), 'start', /start/);
  expectError(await search({ size: 10 }), 'query', /query is required/);
  expectError(await search({ query: 5 }), 'query', /string/);
  expectError(await search({ query: '*', from: 0 }), 'from', /not a known field/);
  expectError(await search({ query: '*' }, undefined, '?format=xml'), 'format', /csv/);
});

// ---------- Paging ----------

test('start + size is capped at 10,000: beyond, a ValidationError that points to search_after', async () => {
  const edge = await search({ query: '*', start: 9990, size: 10 }, B.api_key);
  assert.equal(edge.status, 200, edge.text);
  assert.equal(edge.body.orders.length, 10);
  expectError(await search({ query: '*', start: 9991, size: 10 }, B.api_key), 'start', /10000.*search_after/);
  expectError(await search({ query: '*', start: 10_000 }, B.api_key), 'start', /search_after/);
  expectError(await search({ query: '*', start: 0, size: 10, search_after: '-1' }), 'start', /either start or search_after/);
});

test('start and size page through the sort order; totals count up to 10,000', async () => {
  const all = await search({ query: '*', size: 100, sort: 'amount asc' });
  const want = all.body.orders.map((x: any) => x.id);
  const got: string[] = [];
  for (let start = 0; start < ALL_A.length; start += 4) {
    const page = await search({ query: '*', size: 4, start, sort: 'amount asc' });
    assert.equal(page.body.total, ALL_A.length);
    assert.equal(page.body.total_relation, 'eq');
    got.push(...page.body.orders.map((x: any) => x.id));
  }
  assert.deepEqual(got, want);
  const many = await search({ query: '*', size: 1 }, B.api_key);
  assert.equal(many.body.total, 10_000);
  assert.equal(many.body.total_relation, 'gte');
  const size = await search({ query: '*' });
  assert.equal(size.body.orders.length, 10, 'size defaults to 10');
});

test('every sort orders by its field, then id, in the same direction', async () => {
  const byName = (x: any) => x.id;
  const cmp = (a: any, b: any) => (a < b ? -1 : a > b ? 1 : 0);
  const orders = (await search({ query: '*', size: 100 })).body.orders;
  const key: Record<string, (x: any) => any> = {
    created: (x) => x.created,
    modified: (x) => x.modified,
    completed: (x) => x.completed ?? '',
    amount: (x) => x.amount,
    merchant_order_id: (x) => x.merchant_order_id ?? '',
    id: (x) => x.id,
  };
  for (const [field, k] of Object.entries(key)) {
    for (const dir of ['asc', 'desc']) {
      const want = [...orders].sort((a, b) => (dir === 'asc' ? 1 : -1) * (cmp(k(a), k(b)) || cmp(a.id, b.id))).map(byName);
      const res = await search({ query: '*', size: 100, sort: `${field} ${dir}` });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.orders.map(byName), want, `${field} ${dir}`);
    }
  }
  const dflt = (await search({ query: '*', size: 100 })).body.orders.map(byName);
  assert.deepEqual(dflt, (await search({ query: '*', size: 100, sort: 'created desc' })).body.orders.map(byName), 'default sort is created desc');
});

test('orders with the same sort value are paged by id: none skipped, none repeated', async () => {
  const ids = (await t.db.query<{ id: string }>('SELECT id FROM orders WHERE project_id = $1 ORDER BY random() LIMIT 50', [B.project_id])).map((r) => r.id);
  const instant = '2021-06-01T12:00:00.123Z';
  await t.db.query('UPDATE orders SET created = $1 WHERE id = ANY($2::uuid[])', [instant, ids]);
  const want = [...ids].sort().reverse();
  let after = '-1';
  const got: string[] = [];
  for (;;) {
    const res = await search({ query: `created:"${instant}"`, size: 7, search_after: after }, B.api_key);
    assert.equal(res.status, 200, res.text);
    if (!res.body.orders.length) {
      assert.equal(res.body.search_after, null);
      break;
    }
    got.push(...res.body.orders.map((x: any) => x.id));
    after = res.body.search_after;
  }
  assert.deepEqual(got, want);
  const paged: string[] = [];
  for (let start = 0; start < 50; start += 7) paged.push(...(await search({ query: `created:"${instant}"`, size: 7, start }, B.api_key)).body.orders.map((x: any) => x.id));
  assert.deepEqual(paged, want);
});

/** Walks every order of project B by search_after; answers the ids in visiting order. */
async function walk(sort: string, size: number): Promise<string[]> {
  const ids: string[] = [];
  let after = '-1';
  for (let page = 0; page < 1000; page++) {
    const res = await search({ query: '*', size, sort, search_after: after }, B.api_key);
    assert.equal(res.status, 200, res.text);
    if (!res.body.orders.length) return ids;
    ids.push(...res.body.orders.map((x: any) => x.id));
    after = res.body.search_after;
  }
  throw new Error('walk did not end');
}

test('walking 25,000 orders by search_after visits each exactly once', async () => {
  const all = (await t.db.query<{ id: string }>('SELECT id FROM orders WHERE project_id = $1', [B.project_id])).map((r) => r.id);
  assert.ok(all.length >= 25_000, `seeded ${all.length} orders`);
  for (const sort of ['created desc', 'amount asc']) {
    const ids = await walk(sort, 1000);
    assert.equal(ids.length, all.length, sort);
    assert.equal(new Set(ids).size, all.length, `${sort}: an order came twice`);
    assert.deepEqual([...ids].sort(), [...all].sort(), sort);
  }
});

test('a walk by completed passes over orders without a completed date', async () => {
  const ids = await walk('completed asc', 1000);
  const [{ n }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE project_id = $1', [B.project_id]);
  assert.equal(new Set(ids).size, n);
  assert.equal(ids.length, n);
});

// ---------- Seed ----------

test('seeded orders are of every kind and keep the money rules', async () => {
  const kinds = await t.db.query<{ kind: string; status: string; n: number }>(
    'SELECT kind, status, count(*)::int AS n FROM orders WHERE project_id = $1 GROUP BY 1, 2',
    [B.project_id],
  );
  const has = (kind: string, status: string) => kinds.some((k) => k.kind === kind && k.status === status && k.n > 0);
  for (const [kind, status] of [
    ['payment', 'completed'], ['payment', 'error'], ['payment', 'expired'], ['payment', 'cancelled'], ['payment', 'new'],
    ['capture', 'completed'], ['void', 'completed'], ['refund', 'completed'], ['chargeback', 'completed'],
  ])
    assert.ok(has(kind, status), `${kind} ${status}`);
  for (const q of ['transactions.payment_method:wallet-a-pay', 'transactions.payment_method:wallet-b-pay', 'transactions.status:declined', 'flags:has-refunds', 'related_payment_link_id:*']) {
    const res = await search({ query: q, size: 1 }, B.api_key);
    assert.ok(res.body.total > 0, q);
  }
  const report = await checkLedger(t.db, B.project_id);
  assert.deepEqual(report.violations, []);
  assert.ok(report.journals > 20_000);
  assert.equal(seeded.orders, 21_000);
});

// ---------- CSV ----------

const EXP: Record<string, number> = { JPY: 0, KWD: 3 };
const decimals = (amount: number, currency: string) => {
  const e = EXP[currency] ?? 2;
  if (!e) return String(amount);
  const s = String(amount).padStart(e + 1, '0');
  return `${s.slice(0, -e)}.${s.slice(-e)}`;
};
const cell = (v: unknown) => (v === undefined || v === null ? '' : Array.isArray(v) ? v.join(',') : String(v));

/** The CSV row an order and one of its transactions must give, from the JSON API. */
function expectedRow(x: any, txn: any): Record<string, string> {
  const c = x.customer ?? {};
  const d = txn?.payment_method_details ?? {};
  const row: Record<string, unknown> = {
    id: x.id, merchant_order_id: x.merchant_order_id, created: x.created, completed: x.completed, currency: x.currency, amount: x.amount, status: x.status,
    'transaction.id': txn?.id, 'transaction.status': txn?.status, 'transaction.payment_method': txn?.payment_method,
    'transaction.payment_method_brand': txn?.payment_method_brand, 'transaction.amount_with_decimals': txn && decimals(txn.amount, txn.currency),
    'transaction.credit_debit': txn?.credit_debit, 'transaction.refund_of_transaction_id': txn?.refund_of_transaction_id,
    'transaction.payment_method_details.truncated_pan': d.truncated_pan, 'transaction.settlement_currency': txn?.settlement_currency,
    'transaction.settlement_amount': txn?.settlement_amount, 'transaction.fee_currency': txn?.fee_currency, 'transaction.fee_amount': txn?.fee_amount,
    'customer.merchant_customer_id': c.merchant_customer_id, merchant_id: x.merchant_id, project_id: x.project_id,
    description: x.description, modified: x.modified, flags: x.flags, refunded_amount: x.refunded_amount, related_order_id: x.related_order_id,
    capture_of_order_id: x.capture_of_order_id, void_of_order_id: x.void_of_order_id, refund_of_order_id: x.refund_of_order_id,
    chargeback_of_order_id: x.chargeback_of_order_id, reversal_of_order_id: x.reversal_of_order_id, payment_link_id: x.related_payment_link_id,
    merchant_name: x.merchant_name,
    'transaction.created': txn?.created, 'transaction.modified': txn?.modified, 'transaction.currency': txn?.currency, 'transaction.amount': txn?.amount,
    'transaction.reason': txn?.reason, 'transaction.capture_mode': txn?.capture_mode, 'transaction.transaction_type': txn?.transaction_type,
    'transaction.is_capturable': txn?.is_capturable, 'transaction.capture_of_transaction_id': txn?.capture_of_transaction_id,
    'transaction.void_of_transaction_id': txn?.void_of_transaction_id, 'transaction.chargeback_of_transaction_id': txn?.chargeback_of_transaction_id,
    'transaction.reversal_of_transaction_id': txn?.reversal_of_transaction_id, 'transaction.payment_method_details.card_expiry': d.card_expiry,
    'transaction.payment_method_details.liability_shift': d.liability_shift,
  };
  for (const f of ['email_address', 'first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'state', 'country', 'locale', 'phone_numbers', 'ip_address'])
    row[`customer.${f}`] = c[f];
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, cell(v)]));
}

async function csv(body: Record<string, unknown>, key?: string) {
  const res = await search(body, key, '?format=csv');
  assert.equal(res.status, 200, res.text);
  return { res, rows: parse(res.text, { columns: true }) as Record<string, string>[], header: parse(res.text, { to_line: 1 })[0] as string[] };
}

const SPEC_COLUMNS = [
  'id', 'merchant_order_id', 'created', 'completed', 'currency', 'amount', 'status', 'transaction.id', 'transaction.status', 'transaction.payment_method',
  'transaction.payment_method_brand', 'transaction.amount_with_decimals', 'transaction.credit_debit', 'transaction.refund_of_transaction_id',
  'transaction.payment_method_details.truncated_pan', 'transaction.settlement_currency', 'transaction.settlement_amount', 'transaction.fee_currency',
  'transaction.fee_amount', 'customer.merchant_customer_id', 'merchant_id', 'project_id',
];

test('the CSV report parses back into the same values as the JSON API', async () => {
  const { res, rows, header } = await csv({ query: '*', sort: 'created asc' });
  assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  assert.match(res.headers.get('content-disposition')!, /^attachment; filename="orders-\d{4}-\d{2}-\d{2}\.csv"$/);
  assert.deepEqual(header.slice(0, SPEC_COLUMNS.length), SPEC_COLUMNS, 'the spec columns first, in its order');
  assert.deepEqual(header, COLUMN_NAMES);
  for (const extra of ['description', 'modified', 'flags', 'payment_link_id', 'customer.email_address', 'transaction.created', 'transaction.reason'])
    assert.ok(header.includes(extra), extra);
  const json = (await search({ query: '*', sort: 'created asc', size: 100 })).body.orders;
  const want = json.flatMap((x: any) => (x.transactions.length ? x.transactions.map((txn: any) => expectedRow(x, txn)) : [expectedRow(x, undefined)]));
  assert.equal(rows.length, want.length);
  assert.deepEqual(rows, want);
});

test('CSV: one row per transaction; capture, void, refund and chargeback orders have their own', async () => {
  const { rows } = await csv({ query: '*' });
  const of = (k: string) => rows.filter((r) => r.id === o[k].id);
  for (const k of ALL_A) assert.equal(of(k).length, 1, k);
  assert.equal(of('r1')[0]['transaction.refund_of_transaction_id'], o.a1.transactions[0].id);
  assert.equal(of('r1')[0]['transaction.credit_debit'], 'debit');
  assert.equal(of('r1')[0].refund_of_order_id, o.a1.id);
  assert.equal(of('c3')[0]['transaction.capture_of_transaction_id'], o.a3.transactions[0].id);
  assert.equal(of('v4')[0]['transaction.void_of_transaction_id'], o.a4.transactions[0].id);
  assert.equal(of('cb8')[0]['transaction.chargeback_of_transaction_id'], o.a8.transactions[0].id);
  // an order without a transaction: one row, transaction columns empty
  const a6 = of('a6')[0];
  for (const c of COLUMN_NAMES.filter((c) => c.startsWith('transaction.'))) assert.equal(a6[c], '', c);
  assert.equal(a6.merchant_order_id, 'X 4');
  assert.equal(a6.description, 'Say "hi" now');
  assert.equal(a6.payment_link_id, o.link);
});

test('CSV: amount_with_decimals follows the currency exponent (JPY 1234, EUR 12.34, KWD 1.234)', async () => {
  const { rows } = await csv({ query: 'amount:1234' });
  const by = (k: string) => rows.find((r) => r.id === o[k].id)!;
  assert.equal(by('a2')['transaction.amount_with_decimals'], '1234');
  assert.equal(by('a1')['transaction.amount_with_decimals'], '12.34');
  assert.equal(by('a3')['transaction.amount_with_decimals'], '1.234');
  assert.equal(by('c3')['transaction.amount_with_decimals'], '1.234');
  assert.equal(by('a1').amount, '1234');
  assert.equal(by('a1')['transaction.fee_amount'], String(o.a1.transactions[0].fee_amount));
});

test('CSV follows the query, sort, size and search_after; errors are JSON', async () => {
  const { rows } = await csv({ query: 'currency:EUR', sort: 'amount desc', size: 3 });
  const json = (await search({ query: 'currency:EUR', sort: 'amount desc', size: 3 })).body;
  assert.deepEqual(rows.map((r) => r.id), json.orders.map((x: any) => x.id));
  const next = await csv({ query: 'currency:EUR', sort: 'amount desc', search_after: json.search_after });
  const rest = (await search({ query: 'currency:EUR', sort: 'amount desc', search_after: json.search_after, size: 100 })).body;
  assert.deepEqual(next.rows.map((r) => r.id), rest.orders.map((x: any) => x.id));
  const none = await csv({ query: 'currency:XXX' });
  assert.equal(none.rows.length, 0);
  assert.deepEqual(none.header, COLUMN_NAMES);
  const bad = await search({ query: 'nope:1' }, undefined, '?format=csv');
  expectError(bad, 'query', /Unknown field "nope"/);
  assert.match(bad.headers.get('content-type')!, /application\/json/);
});

test('CSV of every seeded order streams complete: a row per transaction or transaction-less order', async () => {
  const [{ n }] = await t.db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM transactions WHERE project_id = $1) + (SELECT count(*) FROM orders o WHERE project_id = $1
       AND NOT EXISTS (SELECT 1 FROM transactions t WHERE t.order_id = o.id))::int AS n`,
    [B.project_id],
  );
  const { rows } = await csv({ query: '*' }, B.api_key);
  assert.equal(rows.length, Number(n));
  const ids = new Set(rows.map((r) => r['transaction.id'] || r.id));
  assert.equal(ids.size, rows.length, 'no row twice');
  const jpy = rows.find((r) => r['transaction.currency'] === 'JPY')!;
  assert.equal(jpy['transaction.amount_with_decimals'], jpy['transaction.amount']);
  const kwd = rows.find((r) => r['transaction.currency'] === 'KWD')!;
  assert.equal(kwd['transaction.amount_with_decimals'], decimals(Number(kwd['transaction.amount']), 'KWD'));
});

/** The report as the service writes it, by the chosen writer, read whole. */
async function report(projectId: string, body: SearchInput, copy: boolean) {
  const project = (await findProject(t.db, projectId))!;
  const chunks: Buffer[] = [];
  for await (const chunk of orderReport(t.svc.ctx, project, body, new Date(), { copy }).stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

test('both CSV writers give the same bytes: COPY on PostgreSQL, csv-stringify in batches (PGlite), tricky text included', async () => {
  assert.equal(Boolean(t.db.copyCsv), t.db.kind === 'postgres', 'PostgreSQL has the COPY writer, PGlite only the batch one');
  const c = await t.newProject('test');
  const tricky = ['comma, inside', 'say "hi"', 'line\nbreak', 'carriage\rreturn', ' padded ', 'ünïcødé € 日本', '\\.', '=1+2'];
  for (const [i, description] of tricky.entries()) {
    const res = await t.api('POST', '/v1/orders/', validOrder({ description, merchant_order_id: `T,${i}"`, customer: { ...validOrder().customer, first_name: 'Zoë', city: 'Den Haag' } }), { key: c.api_key });
    assert.equal(res.status, 201, res.text);
  }
  const page = await search({ query: 'currency:JPY OR currency:KWD', sort: 'amount asc', size: 50 }, B.api_key);
  const cases: Array<[string, SearchInput]> = [
    [c.project_id, { query: '*', sort: 'created asc' }],
    [t.project.project_id, { query: '*', sort: 'amount desc' }],
    [B.project_id, { query: '*', sort: 'created desc' }],
    [B.project_id, { query: 'status:completed', sort: 'modified asc', size: 500, start: 20 }],
    [B.project_id, { query: 'currency:JPY OR currency:KWD', sort: 'amount asc', search_after: page.body.search_after }],
  ];
  for (const [projectId, body] of cases) {
    const streamed = await report(projectId, body, false);
    const copied = await report(projectId, body, true);
    assert.ok(streamed.split('\n').length > 2, `${JSON.stringify(body)} has rows`);
    assert.equal(copied, streamed, JSON.stringify(body));
  }
  const rows = parse(await report(c.project_id, { query: '*', sort: 'created asc' }, true), { columns: true }) as Record<string, string>[];
  assert.deepEqual(rows.map((r) => r.description), tricky);
  assert.deepEqual(rows.map((r) => r.merchant_order_id), tricky.map((_, i) => `T,${i}"`));
  assert.ok(rows.every((r) => r['customer.first_name'] === 'Zoë' && r['transaction.id'] === ''));
});

test('a CSV download abandoned half way frees its connection: more abandoned downloads than the pool holds, then the API still answers', async () => {
  for (let i = 0; i < 25; i++) {
    const abort = new AbortController();
    const res = await fetch(`${t.url}/v1/search/orders/?format=csv`, {
      method: 'POST',
      headers: { authorization: 'Basic ' + Buffer.from(`${B.api_key}:`).toString('base64'), 'content-type': 'application/json' },
      body: JSON.stringify({ query: '*' }),
      signal: abort.signal,
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    assert.ok((await reader.read()).value!.length > 0, 'the report started');
    abort.abort();
    await reader.closed.catch(() => {});
  }
  const after = await csv({ query: 'currency:JPY', size: 5 }, B.api_key);
  assert.equal(new Set(after.rows.map((r) => r.id)).size, 5);
  if (t.db.kind !== 'postgres') return;
  // and no server process is left sending an abandoned COPY (each ends when its socket is cut)
  let copying = -1;
  for (let i = 0; i < 50 && copying !== 0; i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    [{ n: copying }] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'COPY (%' AND pid <> pg_backend_pid()`,
    );
  }
  assert.equal(copying, 0, 'backends still running an abandoned COPY');
});
