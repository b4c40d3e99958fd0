import { SPEC_COLUMNS } from '../helpers/spec-columns.ts';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileTransactionTerm, encodeSearchAfter, parseSort, QueryError } from '../../src/domain/query.ts';
import { planSearch, searchPageJson } from '../../src/services/reporting/search.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { COLUMN_NAMES } from '../../src/services/reporting/reports.ts';

const P = '6f1c2d3e-1111-4222-8333-444455556666';

describe('compileTransactionTerm: one transactions.* term over t alone', () => {
  it('compiles the term without the EXISTS', () => {
    assert.deepEqual(compileTransactionTerm('transactions.payment_method_brand:VISA', 2), {
      where: 'lower(t.payment_method_brand) = $2',
      params: ['visa'],
    });
    assert.deepEqual(compileTransactionTerm('(transactions.status:declined)', 2), { where: 't.status = $2', params: ['declined'] });
    assert.deepEqual(compileTransactionTerm('transactions.payment_method_brand:vi*', 3), {
      where: 'lower(t.payment_method_brand) LIKE $3',
      params: ['vi%'],
    });
  });
  it('is null for anything else', () => {
    for (const q of [
      '*',
      'status:new',
      'NOT transactions.status:declined',
      'transactions.status:declined AND status:error',
      'visa',
      'transactions.status:declined OR transactions.status:error',
    ])
      assert.equal(compileTransactionTerm(q, 2), null, q);
  });
  it('throws what compileQuery throws', () => {
    assert.throws(() => compileTransactionTerm('transactions.nope:x', 2), QueryError);
  });
});

describe('planSearch: the paging rules', () => {
  const err = (fn: () => unknown, field: string, value: RegExp) =>
    assert.throws(
      fn,
      (e: unknown) => e instanceof DomainError && e.type === 'ValidationError' && e.field === field && value.test(e.message),
    );

  it('defaults: size 10, start 0, created desc, no cursor', () => {
    const p = planSearch(P, { query: '*' });
    assert.equal(p.size, 10);
    assert.equal(p.start, 0);
    assert.equal(p.sort.orderBy, 'o.created DESC, o.id DESC');
    assert.equal(p.after, null);
    assert.equal(planSearch(P, { query: '*' }, { unlimited: true }).size, undefined, 'a CSV without size has no limit');
  });
  it('start + size up to 10,000', () => {
    assert.equal(planSearch(P, { query: '*', start: 9000, size: 1000 }).start, 9000);
    err(() => planSearch(P, { query: '*', start: 9001, size: 1000 }), 'start', /search_after/);
    err(() => planSearch(P, { query: '*', start: 10_001 }, { unlimited: true }), 'start', /search_after/);
  });
  it('start and search_after never together; -1 starts a run', () => {
    err(() => planSearch(P, { query: '*', start: 0, search_after: '-1' }), 'start', /either start or search_after/);
    assert.equal(planSearch(P, { query: '*', search_after: '-1' }).after, null);
    assert.equal(planSearch(P, { query: '*', search_after: -1 }).after, null);
    err(() => planSearch(P, { query: '*', search_after: 3 }), 'search_after', /-1/);
  });
  it('a cursor of another sort is refused up front', () => {
    const cursor = encodeSearchAfter(500, P, parseSort('amount asc'));
    assert.deepEqual(planSearch(P, { query: '*', sort: 'amount asc', search_after: cursor }).after, {
      value: 500,
      id: P,
      sort: 'amount asc',
    });
    err(() => planSearch(P, { query: '*', search_after: cursor }), 'search_after', /amount asc/);
  });
  it('query and sort errors name their member', () => {
    err(() => planSearch(P, { query: 'status:' }), 'query', /position 7/);
    err(() => planSearch(P, { query: '*', sort: 'flags' }), 'sort', /Invalid sort/);
  });
});

describe('CSV columns', () => {
  it('the spec columns first, in order, then ours, each once', () => {
    assert.deepEqual(COLUMN_NAMES.slice(0, SPEC_COLUMNS.length), SPEC_COLUMNS);
    assert.equal(new Set(COLUMN_NAMES).size, COLUMN_NAMES.length);
    for (const c of ['flags', 'payment_link_id', 'customer.email_address', 'transaction.created', 'description'])
      assert.ok(COLUMN_NAMES.includes(c), c);
  });
});

describe('a search page as JSON', () => {
  it('written a hundred orders at a time, it is the same text as JSON.stringify of the whole page', async () => {
    const orders = Array.from({ length: 250 }, (_, i) => ({
      id: `o${i}`,
      amount: i,
      description: `line "${i}"\n`,
      transactions: [{ id: `t${i}` }],
    }));
    for (const page of [
      { total: 250, total_relation: 'eq' as const, orders, search_after: '["x",1]' },
      { total: 0, total_relation: 'gte' as const, orders: [], search_after: null },
    ])
      assert.equal(await searchPageJson(page as never), JSON.stringify(page));
  });
});
