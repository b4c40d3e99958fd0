import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  compileQuery,
  decodeSearchAfter,
  encodeSearchAfter,
  keysetCondition,
  parseSort,
  QueryError,
  SEARCH_FIELDS,
  SORT_FIELDS,
} from '../../src/domain/query.ts';
import { searchBoxQuery } from '../../src/domain/search-box.ts';

const UUID = '6f1c2d3e-1111-4222-8333-444455556666';
const TXN = (pred: string) => `EXISTS (SELECT 1 FROM transactions t WHERE t.order_id = o.id AND t.project_id = o.project_id AND ${pred})`;
const BARE = (a: number) => `(o.merchant_order_id = $${a} OR lower(o.customer_email) = $${a + 1} OR o.description ILIKE $${a + 2})`;

/** compileQuery from $1 */
const c = (q: string) => compileQuery(q, 1);

function assertQueryError(fn: () => unknown, expected: { position?: number; field?: string; param?: string; message?: RegExp }) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof QueryError, `expected QueryError, got ${String(err)}`);
    if ('position' in expected) assert.equal(err.position, expected.position, err.message);
    if ('field' in expected) assert.equal(err.field, expected.field, err.message);
    assert.equal(err.param, expected.param ?? 'query');
    if (expected.message) assert.match(err.message, expected.message);
    if (err.position !== undefined) assert.match(err.message, new RegExp(`at position ${err.position}\\b`));
    return true;
  });
}

describe('compileQuery: representative queries (exact SQL)', () => {
  it('* matches everything', () => {
    assert.deepEqual(c('*'), { where: 'TRUE', params: [] });
    assert.deepEqual(c('  *  '), { where: 'TRUE', params: [] });
  });

  it('status and date range', () => {
    assert.deepEqual(c('status:completed AND created:[2024-01-01 TO 2024-01-31]'), {
      where: '(o.status = $1 AND (o.created >= $2::timestamptz AND o.created < $3::timestamptz))',
      params: ['completed', '2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z'],
    });
  });

  it('merchant_order_id', () => {
    assert.deepEqual(c('merchant_order_id:ORD-10042'), { where: 'o.merchant_order_id = $1', params: ['ORD-10042'] });
  });

  it('customer e-mail, case-insensitive', () => {
    assert.deepEqual(c('customer.email_address:Jane@Example.com'), { where: 'lower(o.customer_email) = $1', params: ['jane@example.com'] });
  });

  it('card brand, through the transactions', () => {
    assert.deepEqual(c('transactions.payment_method_brand:visa'), { where: TXN('lower(t.payment_method_brand) = $1'), params: ['visa'] });
  });

  it('numbers parameters from firstParam', () => {
    assert.deepEqual(compileQuery('status:new OR amount:100', 4), {
      where: '(o.status = $4 OR o.amount = $5::bigint)',
      params: ['new', 100],
    });
  });

  it('never puts user text in the SQL', () => {
    const evil = `x'; DROP TABLE orders; --`;
    const r = c(`merchant_order_id:"${evil}" OR "${evil}"`);
    assert.ok(!r.where.includes('DROP'));
    assert.deepEqual(r.params, [evil, evil, evil.toLowerCase(), `%x'; DROP TABLE orders; --%`]);
  });
});

describe('compileQuery: grammar', () => {
  it('field:value and field:"quoted value"', () => {
    assert.deepEqual(c('merchant_order_id:"ORD 1 (a)"'), { where: 'o.merchant_order_id = $1', params: ['ORD 1 (a)'] });
    assert.deepEqual(c('merchant_order_id:"say \\"hi\\""'), { where: 'o.merchant_order_id = $1', params: ['say "hi"'] });
    assert.deepEqual(c('status: new'), { where: 'o.status = $1', params: ['new'] });
  });

  it('quoted values are literal: no wildcard', () => {
    assert.deepEqual(c('merchant_order_id:"ORD*"'), { where: 'o.merchant_order_id = $1', params: ['ORD*'] });
  });

  it('backslash escapes', () => {
    assert.deepEqual(c('merchant_order_id:a\\*b\\ c'), { where: 'o.merchant_order_id = $1', params: ['a*b c'] });
    assert.deepEqual(c('merchant_order_id:what\\?'), { where: 'o.merchant_order_id = $1', params: ['what?'] });
  });

  it('a value after field: may contain colons', () => {
    assert.deepEqual(c('created:2024-01-31T10:00:00Z'), { where: 'o.created = $1::timestamptz', params: ['2024-01-31T10:00:00Z'] });
    assert.deepEqual(c('merchant_order_id:a:b'), { where: 'o.merchant_order_id = $1', params: ['a:b'] });
  });

  it('AND, OR, NOT with precedence NOT > AND > OR', () => {
    assert.deepEqual(c('status:new OR status:error AND currency:EUR'), {
      where: '(o.status = $1 OR (o.status = $2 AND o.currency = $3))',
      params: ['new', 'error', 'EUR'],
    });
    assert.deepEqual(c('status:new AND status:error OR currency:EUR'), {
      where: '((o.status = $1 AND o.status = $2) OR o.currency = $3)',
      params: ['new', 'error', 'EUR'],
    });
    assert.deepEqual(c('NOT status:new AND currency:EUR'), {
      where: '((o.status = $1) IS NOT TRUE AND o.currency = $2)',
      params: ['new', 'EUR'],
    });
  });

  it('&&, || and ! are AND, OR and NOT', () => {
    assert.deepEqual(c('status:new && currency:EUR || amount:5'), c('status:new AND currency:EUR OR amount:5'));
    assert.deepEqual(c('!status:new'), c('NOT status:new'));
  });

  it('lower-case and/or/not are words, not operators', () => {
    assert.deepEqual(c('status:new and'), { where: `(o.status = $1 AND ${BARE(2)})`, params: ['new', 'and', 'and', '%and%'] });
  });

  it('parentheses group', () => {
    assert.deepEqual(c('(status:new OR status:error) AND currency:EUR'), {
      where: '((o.status = $1 OR o.status = $2) AND o.currency = $3)',
      params: ['new', 'error', 'EUR'],
    });
    assert.deepEqual(c('((status:new))'), { where: 'o.status = $1', params: ['new'] });
  });

  it('implicit AND between terms, flattened', () => {
    assert.deepEqual(c('status:new currency:EUR amount:5'), {
      where: '(o.status = $1 AND o.currency = $2 AND o.amount = $3::bigint)',
      params: ['new', 'EUR', 5],
    });
  });

  it('NOT, AND NOT, OR NOT, leading - and +', () => {
    assert.deepEqual(c('NOT status:new'), { where: '(o.status = $1) IS NOT TRUE', params: ['new'] });
    assert.deepEqual(c('currency:EUR AND NOT status:new'), {
      where: '(o.currency = $1 AND (o.status = $2) IS NOT TRUE)',
      params: ['EUR', 'new'],
    });
    assert.deepEqual(c('currency:EUR NOT status:new'), c('currency:EUR AND NOT status:new'));
    assert.deepEqual(c('currency:EUR -status:new'), c('currency:EUR AND NOT status:new'));
    assert.deepEqual(c('currency:EUR OR NOT status:new'), {
      where: '(o.currency = $1 OR (o.status = $2) IS NOT TRUE)',
      params: ['EUR', 'new'],
    });
    assert.deepEqual(c('+status:new'), c('status:new'));
    assert.deepEqual(c('NOT (status:new OR status:error)'), {
      where: '(o.status = $1 OR o.status = $2) IS NOT TRUE',
      params: ['new', 'error'],
    });
  });

  it('NOT NOT cancels out; NOT * matches nothing; * in AND/OR folds away', () => {
    assert.deepEqual(c('NOT NOT status:new'), c('status:new'));
    assert.deepEqual(c('NOT *'), { where: 'FALSE', params: [] });
    assert.deepEqual(c('* AND status:new'), c('status:new'));
    assert.deepEqual(c('* OR status:new'), { where: 'TRUE', params: [] });
  });

  it('field groups apply the field to each term', () => {
    assert.deepEqual(c('status:(completed OR cancelled)'), {
      where: '(o.status = $1 OR o.status = $2)',
      params: ['completed', 'cancelled'],
    });
    assert.deepEqual(c('amount:([1 TO 5] OR 10)'), {
      where: '((o.amount >= $1::bigint AND o.amount <= $2::bigint) OR o.amount = $3::bigint)',
      params: [1, 5, 10],
    });
  });

  it('trailing wildcard: LIKE with escaped % and _', () => {
    assert.deepEqual(c('merchant_order_id:ORD_5%*'), { where: 'o.merchant_order_id LIKE $1', params: ['ORD\\_5\\%%'] });
    assert.deepEqual(c('customer.email_address:Jane*'), { where: 'lower(o.customer_email) LIKE $1', params: ['jane%'] });
    assert.deepEqual(c('status:proc*'), { where: 'o.status LIKE $1', params: ['proc%'] });
    assert.deepEqual(c('transactions.payment_method_brand:Master*'), {
      where: TXN('lower(t.payment_method_brand) LIKE $1'),
      params: ['master%'],
    });
    assert.deepEqual(c('flags:test*'), {
      where: 'EXISTS (SELECT 1 FROM unnest(o.flags) AS f(flag) WHERE f.flag LIKE $1)',
      params: ['test%'],
    });
    assert.deepEqual(c('merchant_order_id:a\\\\*'), { where: 'o.merchant_order_id LIKE $1', params: ['a\\\\%'] });
  });

  it('field:* means the field has a value', () => {
    assert.deepEqual(c('completed:*'), { where: 'o.completed IS NOT NULL', params: [] });
    assert.deepEqual(c('flags:*'), { where: 'cardinality(o.flags) > 0', params: [] });
    assert.deepEqual(c('transactions.payment_method_brand:*'), { where: TXN('t.payment_method_brand IS NOT NULL'), params: [] });
  });

  it('bare words search merchant_order_id, customer e-mail and description', () => {
    assert.deepEqual(c('ORD-1'), { where: BARE(1), params: ['ORD-1', 'ord-1', '%ORD-1%'] });
    assert.deepEqual(c('"50% off"'), { where: BARE(1), params: ['50% off', '50% off', '%50\\% off%'] });
    assert.deepEqual(c('Jan*'), {
      where: '(o.merchant_order_id LIKE $1 OR lower(o.customer_email) LIKE $2 OR o.description ILIKE $3)',
      params: ['Jan%', 'jan%', '%Jan%'],
    });
    assert.deepEqual(c('a b'), { where: `(${BARE(1)} AND ${BARE(4)})`, params: ['a', 'a', '%a%', 'b', 'b', '%b%'] });
  });

  it('ranges: inclusive, exclusive, mixed, open ends', () => {
    assert.deepEqual(c('amount:[100 TO 500]'), { where: '(o.amount >= $1::bigint AND o.amount <= $2::bigint)', params: [100, 500] });
    assert.deepEqual(c('amount:{100 TO 500}'), { where: '(o.amount > $1::bigint AND o.amount < $2::bigint)', params: [100, 500] });
    assert.deepEqual(c('amount:[100 TO 500}'), { where: '(o.amount >= $1::bigint AND o.amount < $2::bigint)', params: [100, 500] });
    assert.deepEqual(c('amount:{100 TO 500]'), { where: '(o.amount > $1::bigint AND o.amount <= $2::bigint)', params: [100, 500] });
    assert.deepEqual(c('amount:[100 TO *]'), { where: 'o.amount >= $1::bigint', params: [100] });
    assert.deepEqual(c('amount:{* TO 500}'), { where: 'o.amount < $1::bigint', params: [500] });
    assert.deepEqual(c('amount:[* TO *]'), { where: 'o.amount IS NOT NULL', params: [] });
    assert.deepEqual(c('amount:[ 1  TO  2 ]'), c('amount:[1 TO 2]'));
  });

  it('date range ends stand for whole UTC days', () => {
    const r = (q: string) => c(q).params;
    assert.deepEqual(r('created:[2024-01-01 TO 2024-01-31]'), ['2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z']);
    assert.deepEqual(r('created:{2024-01-01 TO 2024-01-31}'), ['2024-01-02T00:00:00Z', '2024-01-31T00:00:00Z']);
    assert.deepEqual(r('created:[2024-02-28 TO 2024-02-29]'), ['2024-02-28T00:00:00Z', '2024-03-01T00:00:00Z']);
    assert.deepEqual(r('created:[* TO 2024-12-31]'), ['2025-01-01T00:00:00Z']);
    assert.equal(c('created:{2024-01-01 TO *]').where, 'o.created >= $1::timestamptz');
    assert.equal(c('created:[* TO 2024-01-31}').where, 'o.created < $1::timestamptz');
  });

  it('date-time range ends are exact; no offset means UTC', () => {
    assert.deepEqual(c('modified:[2024-01-01T10:00 TO 2024-01-01T12:30:15.5+02:00}'), {
      where: '(o.modified >= $1::timestamptz AND o.modified < $2::timestamptz)',
      params: ['2024-01-01T10:00:00Z', '2024-01-01T12:30:15.5+02:00'],
    });
    assert.deepEqual(c('completed:{"2024-01-01 10:00:00+0530" TO *]'), {
      where: 'o.completed > $1::timestamptz',
      params: ['2024-01-01T10:00:00+05:30'],
    });
  });

  it('a date as a value means that day; a date-time is exact', () => {
    assert.deepEqual(c('completed:2024-01-31'), {
      where: '(o.completed >= $1::timestamptz AND o.completed < $2::timestamptz)',
      params: ['2024-01-31T00:00:00Z', '2024-02-01T00:00:00Z'],
    });
    assert.deepEqual(c('created:"2024-01-31T10:00:00z"'), { where: 'o.created = $1::timestamptz', params: ['2024-01-31T10:00:00Z'] });
  });

  it('every field compiles', () => {
    const cases: Record<string, [string, { where: string; params: unknown[] }]> = {
      id: [`id:${UUID.toUpperCase()}`, { where: 'o.id = $1::uuid', params: [UUID] }],
      merchant_order_id: ['merchant_order_id:A', { where: 'o.merchant_order_id = $1', params: ['A'] }],
      status: ['status:Completed', { where: 'o.status = $1', params: ['completed'] }],
      currency: ['currency:eur', { where: 'o.currency = $1', params: ['EUR'] }],
      amount: ['amount:995', { where: 'o.amount = $1::bigint', params: [995] }],
      created: ['created:"2024-01-31T10:00:00Z"', { where: 'o.created = $1::timestamptz', params: ['2024-01-31T10:00:00Z'] }],
      modified: ['modified:"2024-01-31T10:00:00Z"', { where: 'o.modified = $1::timestamptz', params: ['2024-01-31T10:00:00Z'] }],
      completed: ['completed:"2024-01-31T10:00:00Z"', { where: 'o.completed = $1::timestamptz', params: ['2024-01-31T10:00:00Z'] }],
      flags: ['flags:test', { where: '$1 = ANY(o.flags)', params: ['test'] }],
      description: ['description:"gift card"', { where: 'o.description ILIKE $1', params: ['%gift card%'] }],
      'customer.email_address': ['customer.email_address:a@b.c', { where: 'lower(o.customer_email) = $1', params: ['a@b.c'] }],
      'customer.merchant_customer_id': ['customer.merchant_customer_id:C-1', { where: 'o.merchant_customer_id = $1', params: ['C-1'] }],
      'customer.name': [
        'customer.name:Vries',
        { where: "concat_ws(' ', o.body->'customer'->>'first_name', o.body->'customer'->>'last_name') ILIKE $1", params: ['%Vries%'] },
      ],
      related_payment_link_id: [`related_payment_link_id:${UUID}`, { where: 'o.payment_link_id = $1::uuid', params: [UUID] }],
      'transactions.payment_method': [
        'transactions.payment_method:credit-card',
        { where: TXN('t.payment_method = $1'), params: ['credit-card'] },
      ],
      'transactions.status': ['transactions.status:declined', { where: TXN('t.status = $1'), params: ['declined'] }],
      'transactions.payment_method_brand': [
        'transactions.payment_method_brand:VISA',
        { where: TXN('lower(t.payment_method_brand) = $1'), params: ['visa'] },
      ],
      kind: ['kind:Refund', { where: 'o.kind = $1', params: ['refund'] }],
      'transactions.payment_method_details.last4': [
        'transactions.payment_method_details.last4:4242',
        { where: TXN("right(t.details->>'truncated_pan', 4) = $1"), params: ['4242'] },
      ],
      'transactions.id': [`transactions.id:${UUID}`, { where: TXN('t.id = $1::uuid'), params: [UUID] }],
    };
    assert.deepEqual(Object.keys(cases).sort(), [...SEARCH_FIELDS].sort());
    for (const [q, expected] of Object.values(cases)) assert.deepEqual(c(q), expected, q);
  });

  it('NOT of a transaction condition: no transaction matches', () => {
    assert.deepEqual(c('NOT transactions.status:declined'), { where: `(${TXN('t.status = $1')}) IS NOT TRUE`, params: ['declined'] });
  });
});

describe('compileQuery: errors', () => {
  it('syntax errors carry the 0-based position', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['', 0, /Empty query/],
      ['   ', 3, /Empty query/],
      ['status:new AND', 14, /end of query/],
      ['AND status:new', 0, /Unexpected operator AND/],
      ['status:new AND OR currency:EUR', 15, /Unexpected operator OR/],
      ['(status:new', 11, /Missing '\)'.*'\(' at position 0/],
      ['status:new)', 10, /Unexpected '\)'/],
      ['()', 1, /Empty parentheses/],
      ['merchant_order_id:"abc', 18, /Missing closing '"'/],
      ['status:', 7, /Expected a value for field "status"/],
      ['status:)', 7, /Expected a value/],
      [':new', 0, /field name missing/],
      ['amount:[1 TO 2', 14, /Expected '\]' or '\}'/],
      ['amount:[1 2]', 10, /Expected 'TO'/],
      ['amount:[1 TO5]', 10, /Expected 'TO'/],
      ['amount:[1 TO 2*]', 14, /Wildcards are not allowed in a range/],
      ['[1 TO 2]', 0, /range needs a field/],
      ['- status:new', 1, /right after '-'/],
      ['*ORD', 0, /Only a trailing \* wildcard/],
      ['merchant_order_id:OR*D', 20, /Only a trailing \* wildcard/],
      ['OR?D', 2, /\? wildcard is not supported/],
      ['merchant_order_id:abc\\', 21, /Nothing to escape/],
    ];
    for (const [q, position, message] of cases) assertQueryError(() => c(q), { position, message });
  });

  it('unknown field: names it and lists the known fields', () => {
    assertQueryError(() => c('status:new AND customer.emial:x@y.z'), {
      position: 15,
      field: 'customer.emial',
      message: /Unknown field "customer\.emial" at position 15; known fields: id, merchant_order_id, status,.*transactions\.id$/,
    });
  });

  it('last four digits and kinds are checked', () => {
    assertQueryError(() => c('transactions.payment_method_details.last4:42'), { position: 42, message: /last four digits/ });
    assertQueryError(() => c('kind:sale'), { position: 5, field: 'kind', message: /one of payment, capture/ });
  });

  it('bad uuid', () => {
    assertQueryError(() => c('id:123'), { position: 3, field: 'id', message: /"id".*UUID/ });
    assertQueryError(() => c('transactions.id:"not-a-uuid"'), { position: 16, field: 'transactions.id', message: /UUID/ });
    assertQueryError(() => c('related_payment_link_id:x'), { field: 'related_payment_link_id' });
  });

  it('bad amount', () => {
    for (const q of ['amount:1.5', 'amount:-5', 'amount:abc', 'amount:99999999999999999']) {
      assertQueryError(() => c(q), { position: 7, field: 'amount', message: /integer amount/ });
    }
    assertQueryError(() => c('amount:[1 TO x]'), { position: 13, field: 'amount' });
  });

  it('bad date', () => {
    for (const q of [
      'created:2024-02-30',
      'created:2023-02-29',
      'created:yesterday',
      'created:2024-1-5',
      'created:"2024-01-01T24:00:00Z"',
      'created:"2024-01-01T10:00:00+15:00"',
    ]) {
      assertQueryError(() => c(q), { position: 8, field: 'created', message: /date/ });
    }
    assertQueryError(() => c('completed:[2024-01-01 TO 2024-13-01]'), { position: 25, field: 'completed' });
  });

  it('values outside a closed list', () => {
    assertQueryError(() => c('status:compleeted'), { position: 7, field: 'status', message: /one of new, processing/ });
    assertQueryError(() => c('transactions.status:ok'), { field: 'transactions.status' });
    assertQueryError(() => c('transactions.payment_method:cash'), { field: 'transactions.payment_method' });
    assertQueryError(() => c('currency:EURO'), { field: 'currency', message: /ISO 4217/ });
  });

  it('ranges and wildcards only where they make sense', () => {
    assertQueryError(() => c('status:[a TO b]'), { position: 0, field: 'status', message: /does not support ranges/ });
    assertQueryError(() => c('id:6f1c*'), { position: 3, field: 'id', message: /does not support wildcards/ });
    assertQueryError(() => c('amount:1*'), { field: 'amount', message: /wildcards/ });
  });

  it('limits', () => {
    assertQueryError(() => c('a '.repeat(6000)), { position: 10_000, message: /too long/ });
    assertQueryError(() => c('('.repeat(100) + 'a' + ')'.repeat(100)), { message: /nested too deeply/ });
  });
});

describe('parseSort', () => {
  it('defaults to created desc', () => {
    for (const s of [undefined, '', '  ']) {
      assert.deepEqual(parseSort(s), {
        field: 'created',
        column: 'o.created',
        direction: 'desc',
        orderBy: 'o.created DESC, o.id DESC',
        valueSql: `to_char(o.created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
      });
    }
  });

  it('accepts field, field asc|desc and field:asc|desc', () => {
    assert.equal(parseSort('created asc').direction, 'asc');
    assert.equal(parseSort('amount DESC').orderBy, 'o.amount DESC, o.id DESC');
    assert.equal(parseSort('modified').direction, 'asc');
    assert.equal(parseSort('created:desc').direction, 'desc');
    assert.equal(parseSort('completed desc').orderBy, "COALESCE(o.completed, '-infinity'::timestamptz) DESC, o.id DESC");
    assert.equal(parseSort('merchant_order_id asc').column, "COALESCE(o.merchant_order_id, '')");
    assert.equal(parseSort('id desc').orderBy, 'o.id DESC');
    for (const f of SORT_FIELDS) assert.equal(parseSort(`${f} asc`).field, f);
  });

  it('refuses anything else', () => {
    for (const s of ['status asc', 'created up', 'created asc desc', 'createdasc', 'created:', 'Created', 'o.created; DROP TABLE orders']) {
      assertQueryError(() => parseSort(s), { param: 'sort', message: /Invalid sort.*use one of created, modified/ });
    }
  });
});

describe('search_after cursors and keyset paging', () => {
  const desc = parseSort('created desc');

  it('-1 means the first page: no condition', () => {
    assert.equal(decodeSearchAfter('-1'), null);
    assert.equal(decodeSearchAfter(' -1 '), null);
    assert.deepEqual(keysetCondition(desc, '-1', 3), { sql: 'TRUE', params: [] });
    assert.deepEqual(keysetCondition(desc, null, 3), { sql: 'TRUE', params: [] });
  });

  it('encodes an opaque url-safe string that decodes back', () => {
    const cursor = encodeSearchAfter('2024-01-31T10:00:00.123456Z', UUID, desc);
    assert.match(cursor, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeSearchAfter(cursor), { value: '2024-01-31T10:00:00.123456Z', id: UUID, sort: 'created desc' });
    assert.deepEqual(decodeSearchAfter(encodeSearchAfter(new Date('2024-01-31T10:00:00Z'), UUID)), {
      value: '2024-01-31T10:00:00.000Z',
      id: UUID,
    });
    assert.deepEqual(decodeSearchAfter(encodeSearchAfter(995n, UUID)), { value: 995, id: UUID });
    assert.deepEqual(decodeSearchAfter(encodeSearchAfter(null, UUID)), { value: null, id: UUID });
  });

  it('keyset condition: > ascending, < descending, id as tie-breaker', () => {
    const cursor = encodeSearchAfter('2024-01-31T10:00:00.123456Z', UUID, desc);
    assert.deepEqual(keysetCondition(desc, cursor, 3), {
      sql: '(o.created, o.id) < ($3::timestamptz, $4::uuid)',
      params: ['2024-01-31T10:00:00.123456Z', UUID],
    });
    const asc = parseSort('amount asc');
    assert.deepEqual(keysetCondition(asc, encodeSearchAfter(995, UUID, asc), 1), {
      sql: '(o.amount, o.id) > ($1::bigint, $2::uuid)',
      params: [995, UUID],
    });
    const byId = parseSort('id asc');
    assert.deepEqual(keysetCondition(byId, encodeSearchAfter(UUID, UUID, byId), 2), { sql: 'o.id > $2::uuid', params: [UUID] });
  });

  it('NULL sort values use the sentinel of the sort expression', () => {
    const completed = parseSort('completed desc');
    assert.deepEqual(keysetCondition(completed, encodeSearchAfter(null, UUID, completed), 2), {
      sql: "(COALESCE(o.completed, '-infinity'::timestamptz), o.id) < ($2::timestamptz, $3::uuid)",
      params: ['-infinity', UUID],
    });
    const moid = parseSort('merchant_order_id asc');
    assert.deepEqual(keysetCondition(moid, encodeSearchAfter(null, UUID, moid), 2), {
      sql: "(COALESCE(o.merchant_order_id, ''), o.id) > ($2::text, $3::uuid)",
      params: ['', UUID],
    });
  });

  it('accepts a decoded cursor', () => {
    assert.deepEqual(keysetCondition(desc, { value: '2024-01-31T10:00:00Z', id: UUID }, 1).params, ['2024-01-31T10:00:00Z', UUID]);
  });

  it('refuses garbage', () => {
    const bad = [
      'not a cursor!',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('not json').toString('base64url'),
      encodeSearchAfter('2024-01-01T00:00:00Z', 'nope'),
      Buffer.from(JSON.stringify([{}, UUID])).toString('base64url'),
      '',
    ];
    for (const text of bad) assertQueryError(() => decodeSearchAfter(text), { param: 'search_after', message: /Invalid search_after/ });
  });

  it('refuses a value of the wrong type for the sort', () => {
    assertQueryError(() => keysetCondition(desc, encodeSearchAfter('yesterday', UUID), 1), { param: 'search_after' });
    assertQueryError(() => keysetCondition(desc, encodeSearchAfter(null, UUID), 1), { param: 'search_after' });
    assertQueryError(() => keysetCondition(parseSort('amount asc'), encodeSearchAfter('x', UUID), 1), { param: 'search_after' });
  });

  it('refuses a cursor made with another sort', () => {
    const cursor = encodeSearchAfter(995, UUID, parseSort('amount desc'));
    assertQueryError(() => keysetCondition(desc, cursor, 1), { param: 'search_after', message: /"amount desc", not "created desc"/ });
  });
});

describe("searchBoxQuery: the portal's one box", () => {
  it('each word may be a reference, e-mail, description, name, last four, order or transaction id, or amount', () => {
    assert.equal(
      searchBoxQuery('Vries 1111', 'EUR'),
      '("Vries" OR customer.name:"Vries") AND ("1111" OR customer.name:"1111" OR transactions.payment_method_details.last4:1111 OR amount:111100)',
    );
    assert.equal(searchBoxQuery(UUID, 'EUR'), `("${UUID}" OR customer.name:"${UUID}" OR id:${UUID} OR transactions.id:${UUID})`);
    assert.equal(searchBoxQuery('€19,95', 'EUR'), '("€19,95" OR customer.name:"€19,95" OR amount:1995)');
    assert.equal(
      searchBoxQuery('1995', 'JPY'),
      '("1995" OR customer.name:"1995" OR transactions.payment_method_details.last4:1995 OR amount:1995)',
    );
    for (const q of ['Vries 1111', UUID, '19.95', 'ada@example.com ORD-7']) c(searchBoxQuery(q, 'EUR')); // each compiles
  });
  it('text in the search language, and nothing, are taken as they are', () => {
    for (const q of ['status:completed', 'ORD-*', '"two words"', 'a OR b', '-cancelled', '(a)']) assert.equal(searchBoxQuery(q, 'EUR'), q);
    assert.equal(searchBoxQuery('  ', 'EUR'), '');
    assert.equal(searchBoxQuery('*', 'EUR'), '');
  });
});
