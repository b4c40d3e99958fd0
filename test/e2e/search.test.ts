// POST /v1/search/orders/ black-box through the API: every construct of the query language on
// orders made through the real card and money flows, every error, and the paging rules, up to a
// walk over 25,000 seeded orders. The seed and the CSV report: search-reports.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestService } from '../helpers/service.ts';
import { ALL_A, expectError, searchOn, startSearchService, type SearchFixture } from '../helpers/search.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
let o: SearchFixture['o'];
let B: SearchFixture['B'];
before(async () => ({ t, o, B } = await startSearchService()));
after(async () => t?.close());

const search = searchOn(() => t);
/** the names (a1, r1, ...) of the project A orders a query finds, sorted */
async function found(query: string): Promise<string[]> {
  const res = await search({ query, size: 1000 });
  assert.equal(res.status, 200, `${query}: ${res.text}`);
  const names = new Map(
    Object.entries(o)
      .filter(([k]) => k !== 'link')
      .map(([k, v]) => [v.id, k]),
  );
  assert.equal(res.body.total, res.body.orders.length, query);
  return res.body.orders.map((x: Json) => names.get(x.id) ?? `?${x.id}`).sort();
}
const sorted = (xs: string[]) => [...xs].sort();

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
  expectError(await search({ query: '' }), 'query', /query must NOT have fewer than 1 characters/); // the schema's minLength, before the parser
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
  expectError(
    await search({ query: '*', size: 2, sort: 'created desc', search_after: first.body.search_after }),
    'search_after',
    /sort "amount asc"/,
  );
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
  const want = all.body.orders.map((x: Json) => x.id);
  const got: string[] = [];
  for (let start = 0; start < ALL_A.length; start += 4) {
    const page = await search({ query: '*', size: 4, start, sort: 'amount asc' });
    assert.equal(page.body.total, ALL_A.length);
    assert.equal(page.body.total_relation, 'eq');
    got.push(...page.body.orders.map((x: Json) => x.id));
  }
  assert.deepEqual(got, want);
  const many = await search({ query: '*', size: 1 }, B.api_key);
  assert.equal(many.body.total, 10_000);
  assert.equal(many.body.total_relation, 'gte');
  const size = await search({ query: '*' });
  assert.equal(size.body.orders.length, 10, 'size defaults to 10');
});

test('every sort orders by its field, then id, in the same direction', async () => {
  const byName = (x: Json) => x.id;
  const cmp = (a: Json, b: Json) => (a < b ? -1 : a > b ? 1 : 0);
  const orders = (await search({ query: '*', size: 100 })).body.orders;
  const key: Record<string, (x: Json) => Json> = {
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
  assert.deepEqual(
    dflt,
    (await search({ query: '*', size: 100, sort: 'created desc' })).body.orders.map(byName),
    'default sort is created desc',
  );
});

test('orders with the same sort value are paged by id: none skipped, none repeated', async () => {
  const ids = (
    await t.db.query<{ id: string }>('SELECT id FROM orders WHERE project_id = $1 ORDER BY random() LIMIT 50', [B.project_id])
  ).map((r) => r.id);
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
    got.push(...res.body.orders.map((x: Json) => x.id));
    after = res.body.search_after;
  }
  assert.deepEqual(got, want);
  const paged: string[] = [];
  for (let start = 0; start < 50; start += 7)
    paged.push(...(await search({ query: `created:"${instant}"`, size: 7, start }, B.api_key)).body.orders.map((x: Json) => x.id));
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
    ids.push(...res.body.orders.map((x: Json) => x.id));
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
