// The search seed and the CSV report of POST /v1/search/orders/, black-box through the API: the
// seeded orders and their money rules, and the CSV parsed back against the JSON API, written by
// both writers. The query language and paging: search.test.ts.
import { SPEC_COLUMNS } from '../helpers/spec-columns.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { validOrder, type TestService } from '../helpers/service.ts';
import { ALL_A, csvDownload, expectError, runningCopies, searchOn, startSearchService, type SearchFixture } from '../helpers/search.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { COLUMN_NAMES, orderReport } from '../../src/services/reporting/reports.ts';
import { findProject } from '../../src/store/platform/projects.ts';
import type { SearchInput } from '../../src/services/reporting/search.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
let o: SearchFixture['o'];
let B: SearchFixture['B'];
let seeded: SearchFixture['seeded'];
before(async () => ({ t, o, B, seeded } = await startSearchService()));
after(async () => t?.close());

const search = searchOn(() => t);

// ---------- Seed ----------

test('seeded orders are of every kind and keep the money rules', async () => {
  const kinds = await t.db.query<{ kind: string; status: string; n: number }>(
    'SELECT kind, status, count(*)::int AS n FROM orders WHERE project_id = $1 GROUP BY 1, 2',
    [B.project_id],
  );
  const has = (kind: string, status: string) => kinds.some((k) => k.kind === kind && k.status === status && k.n > 0);
  for (const [kind, status] of [
    ['payment', 'completed'],
    ['payment', 'error'],
    ['payment', 'expired'],
    ['payment', 'cancelled'],
    ['payment', 'new'],
    ['capture', 'completed'],
    ['void', 'completed'],
    ['refund', 'completed'],
    ['chargeback', 'completed'],
  ])
    assert.ok(has(kind, status), `${kind} ${status}`);
  for (const q of [
    'transactions.payment_method:wallet-a-pay',
    'transactions.payment_method:wallet-b-pay',
    'transactions.status:declined',
    'flags:has-refunds',
    'related_payment_link_id:*',
  ]) {
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
function expectedRow(x: Json, txn: Json): Record<string, string> {
  const c = x.customer ?? {};
  const d = txn?.payment_method_details ?? {};
  const row: Record<string, unknown> = {
    id: x.id,
    merchant_order_id: x.merchant_order_id,
    created: x.created,
    completed: x.completed,
    currency: x.currency,
    amount: x.amount,
    status: x.status,
    'transaction.id': txn?.id,
    'transaction.status': txn?.status,
    'transaction.payment_method': txn?.payment_method,
    'transaction.payment_method_brand': txn?.payment_method_brand,
    'transaction.amount_with_decimals': txn && decimals(txn.amount, txn.currency),
    'transaction.credit_debit': txn?.credit_debit,
    'transaction.refund_of_transaction_id': txn?.refund_of_transaction_id,
    'transaction.payment_method_details.truncated_pan': d.truncated_pan,
    'transaction.settlement_currency': txn?.settlement_currency,
    'transaction.settlement_amount': txn?.settlement_amount,
    'transaction.fee_currency': txn?.fee_currency,
    'transaction.fee_amount': txn?.fee_amount,
    'customer.merchant_customer_id': c.merchant_customer_id,
    merchant_id: x.merchant_id,
    project_id: x.project_id,
    description: x.description,
    modified: x.modified,
    flags: x.flags,
    refunded_amount: x.refunded_amount,
    related_order_id: x.related_order_id,
    capture_of_order_id: x.capture_of_order_id,
    void_of_order_id: x.void_of_order_id,
    refund_of_order_id: x.refund_of_order_id,
    chargeback_of_order_id: x.chargeback_of_order_id,
    reversal_of_order_id: x.reversal_of_order_id,
    payment_link_id: x.related_payment_link_id,
    merchant_name: x.merchant_name,
    'transaction.created': txn?.created,
    'transaction.modified': txn?.modified,
    'transaction.currency': txn?.currency,
    'transaction.amount': txn?.amount,
    'transaction.reason': txn?.reason,
    'transaction.capture_mode': txn?.capture_mode,
    'transaction.transaction_type': txn?.transaction_type,
    'transaction.is_capturable': txn?.is_capturable,
    'transaction.capture_of_transaction_id': txn?.capture_of_transaction_id,
    'transaction.void_of_transaction_id': txn?.void_of_transaction_id,
    'transaction.chargeback_of_transaction_id': txn?.chargeback_of_transaction_id,
    'transaction.reversal_of_transaction_id': txn?.reversal_of_transaction_id,
    'transaction.payment_method_details.card_expiry': d.card_expiry,
    'transaction.payment_method_details.liability_shift': d.liability_shift,
  };
  for (const f of [
    'email_address',
    'first_name',
    'last_name',
    'address_type',
    'address',
    'postal_code',
    'city',
    'state',
    'country',
    'locale',
    'phone_numbers',
    'ip_address',
  ])
    row[`customer.${f}`] = c[f];
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, cell(v)]));
}

async function csv(body: Record<string, unknown>, key?: string) {
  const res = await search(body, key, '?format=csv');
  assert.equal(res.status, 200, res.text);
  return {
    res,
    rows: parse(res.text, { columns: true }) as Record<string, string>[],
    header: parse(res.text, { to_line: 1 })[0] as string[],
  };
}

test('the CSV report parses back into the same values as the JSON API', async () => {
  const { res, rows, header } = await csv({ query: '*', sort: 'created asc' });
  assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
  assert.match(res.headers.get('content-disposition')!, /^attachment; filename="orders-\d{4}-\d{2}-\d{2}\.csv"$/);
  assert.deepEqual(header.slice(0, SPEC_COLUMNS.length), SPEC_COLUMNS, 'the spec columns first, in its order');
  assert.deepEqual(header, COLUMN_NAMES);
  for (const extra of [
    'description',
    'modified',
    'flags',
    'payment_link_id',
    'customer.email_address',
    'transaction.created',
    'transaction.reason',
  ])
    assert.ok(header.includes(extra), extra);
  const json = (await search({ query: '*', sort: 'created asc', size: 100 })).body.orders;
  const want = json.flatMap((x: Json) =>
    x.transactions.length ? x.transactions.map((txn: Json) => expectedRow(x, txn)) : [expectedRow(x, undefined)],
  );
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
  assert.deepEqual(
    rows.map((r) => r.id),
    json.orders.map((x: Json) => x.id),
  );
  const next = await csv({ query: 'currency:EUR', sort: 'amount desc', search_after: json.search_after });
  const rest = (await search({ query: 'currency:EUR', sort: 'amount desc', search_after: json.search_after, size: 100 })).body;
  assert.deepEqual(
    next.rows.map((r) => r.id),
    rest.orders.map((x: Json) => x.id),
  );
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
async function report(projectId: string, body: SearchInput, copy: boolean, partOrders?: number) {
  const project = (await findProject(t.db, projectId))!;
  const chunks: Buffer[] = [];
  for await (const chunk of orderReport(t.svc.ctx, project, body, new Date(), { copy, partOrders }).stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

test('both CSV writers give the same bytes: COPY on PostgreSQL, csv-stringify in batches (PGlite), tricky text included', async () => {
  assert.equal(Boolean(t.db.copyCsv), t.db.kind === 'postgres', 'PostgreSQL has the COPY writer, PGlite only the batch one');
  const c = await t.newProject('test');
  const tricky = ['comma, inside', 'say "hi"', 'line\nbreak', 'carriage\rreturn', ' padded ', 'ünïcødé € 日本', '\\.', '=1+2'];
  for (const [i, description] of tricky.entries()) {
    const res = await t.api(
      'POST',
      '/v1/orders/',
      validOrder({
        description,
        merchant_order_id: `T,${i}"`,
        customer: { ...validOrder().customer, first_name: 'Zoë', city: 'Den Haag' },
      }),
      { key: c.api_key },
    );
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
    // copied in many small parts side by side (one order each, and seven), stitched in order
    if (t.db.copyCsvParts)
      for (const part of [1, 7])
        assert.equal(await report(projectId, body, true, part), streamed, `${JSON.stringify(body)} in parts of ${part}`);
  }
  // phone numbers: none, one, and the most an order takes (10), joined by commas
  const phones = Array.from({ length: 10 }, (_, i) => `+31 20 555 00${i}${i}`);
  const d = await t.newProject('test');
  for (const list of [[], phones.slice(0, 1), phones]) {
    const res = await t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, phone_numbers: list } }), {
      key: d.api_key,
    });
    assert.equal(res.status, 201, res.text);
  }
  const withPhones = await report(d.project_id, { query: '*', sort: 'created asc' }, true);
  assert.equal(withPhones, await report(d.project_id, { query: '*', sort: 'created asc' }, false));
  const phoneCells = (parse(withPhones, { columns: true }) as Record<string, string>[]).map((r) => r['customer.phone_numbers']);
  // a cell beginning with + is neutralised against formula injection (a leading quote)
  assert.deepEqual(phoneCells, ['', `'${phones[0]}`, `'${phones.join(',')}`]);
  const rows = parse(await report(c.project_id, { query: '*', sort: 'created asc' }, true), { columns: true }) as Record<string, string>[];
  assert.deepEqual(
    rows.map((r) => r.description),
    tricky.map((d) => (d.startsWith('=') ? `'${d}` : d)),
  );
  assert.deepEqual(
    rows.map((r) => r.merchant_order_id),
    tricky.map((_, i) => `T,${i}"`),
  );
  assert.ok(rows.every((r) => r['customer.first_name'] === 'Zoë' && r['transaction.id'] === ''));
});

test('a CSV download abandoned half way frees its connection: more abandoned downloads than the pool holds, then the API still answers', async () => {
  for (let i = 0; i < 25; i++) {
    const abort = new AbortController();
    const res = await csvDownload(t, B.api_key, { query: '*' }, abort.signal);
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    assert.ok((await reader.read()).value!.length > 0, 'the report started');
    abort.abort();
    await reader.closed.catch(() => {});
  }
  const after = await csv({ query: 'currency:JPY', size: 5 }, B.api_key);
  assert.equal(new Set(after.rows.map((r) => r.id)).size, 5);
  if (t.db.kind !== 'postgres') return;
  // and no server process of this service is left sending an abandoned COPY (each ends when its socket is cut)
  let copying = -1;
  for (let i = 0; i < 50 && copying !== 0; i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    copying = await runningCopies(t.db);
  }
  assert.equal(copying, 0, 'backends still running an abandoned COPY');
});
