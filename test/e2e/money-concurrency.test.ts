// Exact money under concurrency: many requests at once on one authorization or one payment never
// move more than allowed. Written for PostgreSQL (DATABASE_URL), where the requests really run side
// by side on a pool of connections and meet at the row lock; without DATABASE_URL the same
// assertions run on PGlite, which serialises transactions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const N = 50;
const txnPath = (o: Json) => `/v1/orders/${o.id}/transactions/${o.transactions[0].id}`;
const get = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;
type Amounts = Record<'authorized_amount' | 'captured_amount' | 'voided_amount' | 'refunded_amount' | 'charged_back_amount', number>;
const counters = async (txnId: string) =>
  (
    await t.db.query<Amounts>(
      'SELECT authorized_amount, captured_amount, voided_amount, refunded_amount, charged_back_amount FROM transactions WHERE id = $1',
      [txnId],
    )
  )[0];

function tally(results: { status: number }[]) {
  const by: Record<number, number> = {};
  for (const r of results) by[r.status] = (by[r.status] ?? 0) + 1;
  return by;
}

test(`${N} concurrent captures of one authorization give exactly one capture order; the rest name it or 409`, async () => {
  const o = await payOrder(t, {}, { capture_mode: 'manual' });
  const results = await Promise.all(Array.from({ length: N }, () => t.api('POST', `${txnPath(o)}/captures/`)));
  const by = tally(results);
  assert.equal((by[201] ?? 0) + (by[409] ?? 0), N);
  // those that came while the capture was in flight answer with its result: the same order
  assert.equal(new Set(results.filter((x) => x.status === 201).map((x) => x.body.id)).size, 1);
  for (const r of results.filter((x) => x.status === 409)) assert.equal(r.body.error.type, 'CanNotCaptureTransaction');
  const after = await get(o.id);
  assert.equal(after.related_orders.length, 1);
  const c = await counters(o.transactions[0].id);
  assert.equal(c.captured_amount, 1995);
  const captureOrders = await t.db.query("SELECT id FROM orders WHERE related_order_id = $1 AND kind = 'capture'", [o.id]);
  assert.equal(captureOrders.length, 1);
});

test(`${N} concurrent partial voids whose sum exceeds the authorization never void more than it`, async () => {
  const o = await payOrder(t, {}, { capture_mode: 'manual' }); // 1995
  const results = await Promise.all(
    Array.from({ length: N }, () => t.api('POST', `${txnPath(o)}/voids/amount/`, { amount: 100, description: 'race' })),
  );
  // 19 × 100 fit in 1995, whatever the order of arrival; 95 stays authorized
  assert.deepEqual(tally(results), { 201: 19, 409: N - 19 });
  for (const r of results.filter((x) => x.status === 409)) assert.equal(r.body.error.type, 'CanNotVoidTransaction');
  const c = await counters(o.transactions[0].id);
  assert.equal(c.voided_amount, 1900);
  const after = await get(o.id);
  assert.equal(after.transactions[0].is_capturable, true);
  const cap = await t.api('POST', `${txnPath(o)}/captures/`);
  assert.equal(cap.status, 201);
  assert.equal(cap.body.amount, 95, 'the capture takes only the remainder');
});

test(`${N} concurrent partial refunds whose sum exceeds the captured amount never refund more than it`, async () => {
  const s = await payOrder(t, {}); // a sale of 1995
  const results = await Promise.all(
    Array.from({ length: N }, () => t.api('POST', `/v1/orders/${s.id}/refunds/`, { amount: 100, description: 'race' })),
  );
  assert.deepEqual(tally(results), { 201: 19, 422: N - 19 });
  for (const r of results.filter((x) => x.status === 422)) assert.equal(r.body.error.type, 'RefundError');
  const after = await get(s.id);
  assert.equal(after.refunded_amount, 1900);
  assert.equal(after.refund_orders.length, 19);
  const c = await counters(s.transactions[0].id);
  assert.equal(c.refunded_amount, 1900);
});

test('captures racing partial voids: one capture, and captured + voided is exactly the authorization', async () => {
  const o = await payOrder(t, {}, { capture_mode: 'manual' });
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      i % 2 ? t.api('POST', `${txnPath(o)}/captures/`) : t.api('POST', `${txnPath(o)}/voids/amount/`, { amount: 50, description: 'race' }),
    ),
  );
  const captures = results.filter((_, i) => i % 2);
  const voids = results.filter((_, i) => !(i % 2));
  // a capture asked while another is in flight answers with that one's result: one capture order
  const captured = captures.filter((r) => r.status === 201);
  assert.ok(captured.length >= 1);
  assert.equal(new Set(captured.map((r) => r.body.id)).size, 1, 'every 201 names the one capture order');
  assert.ok(captures.every((r) => r.status === 201 || r.status === 409));
  assert.ok(voids.every((r) => r.status === 201 || r.status === 409));
  const voided = voids.filter((r) => r.status === 201).length * 50;
  const c = await counters(o.transactions[0].id);
  assert.equal(c.voided_amount, voided);
  assert.equal(c.captured_amount, 1995 - voided);
  assert.equal(captures.find((r) => r.status === 201)!.body.amount, 1995 - voided);
});

test('refunds racing chargebacks on one payment never take back more than was captured', async () => {
  const s = await payOrder(t, {});
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      i % 2
        ? t.api('POST', `/v1/test/orders/${s.id}/chargeback/`, { amount: 100 })
        : t.api('POST', `/v1/orders/${s.id}/refunds/`, { amount: 100 }),
    ),
  );
  assert.equal(results.filter((r) => r.status === 201).length, 19);
  assert.ok(results.every((r) => r.status === 201 || r.status === 422));
  const c = await counters(s.transactions[0].id);
  assert.equal(c.refunded_amount + c.charged_back_amount, 1900);
});

test('`ledger check` passes afterwards', async () => {
  const r = await checkLedger(t.db);
  assert.deepEqual(r.violations, []);
  assert.equal(r.ok, true);
  assert.ok(r.transactions >= 5);
});
