// Capturing a pre-authorization per order line (docs/money.md "Capturing per order line"): a
// Klarna pay later order authorized on its sandbox page and captured in two shipments, each
// capture order listing its lines, the transaction completed with the last; the lines refused by
// name (400, nothing stored); the rest voided or lapsed; a card pre-authorization the same way.
// The ledger check passes after each.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { expectRejectedIn } from '../helpers/rejects.ts';
import { moneyClient, eventually, expectError } from '../helpers/money.ts';
import { payOrder } from '../helpers/pay.ts';
import { bnplLines, sandboxCustomer } from '../helpers/methods.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
  await setActiveMethods(t.svc.ctx, t.project.project_id, 'all');
});
after(async () => t?.close());

const m = moneyClient(() => t);
const captureLines = (o: Json, order_lines: unknown) => t.api('POST', `${m.txnPath(o)}/captures/`, { order_lines });
const counters = async (o: Json) =>
  (
    await t.db.query<{ captured_amount: number; voided_amount: number; status: string; is_capturable: boolean }>(
      'SELECT captured_amount::int, voided_amount::int, status, is_capturable FROM transactions WHERE id = $1',
      [o.transactions[0].id],
    )
  )[0];
const attempts = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM acquirer_attempts'))[0].n;
const outbox = async (id: string) =>
  (await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [id])).map((r) => r.status);

/** A Klarna pay later order of two mugs and a tea (2995), authorized by the customer on its sandbox page. */
async function authorizedKlarna() {
  const res = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({
      amount: 2995,
      webhook_url: 'https://shop.example/hook',
      order_lines: bnplLines,
      transactions: [{ payment_method: 'klarna-pay-later' }],
    }),
  );
  assert.equal(res.status, 201, res.text);
  await sandboxCustomer(t).choose(res.body, 'paid');
  const o = await m.get(res.body.id);
  assert.equal(o.transactions[0].is_capturable, true);
  return o;
}

test('Klarna pay later captured per order line in two shipments, then refunded per line', async () => {
  const o = await authorizedKlarna();
  const first = await captureLines(o, [{ merchant_order_line_id: 'mug', quantity: 1 }]);
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.amount, 1000);
  assert.equal(first.body.status, 'completed');
  assert.deepEqual(first.body.order_lines, [{ ...bnplLines[0], quantity: 1 }]);
  assert.deepEqual(await counters(o), { captured_amount: 1000, voided_amount: 0, status: 'accepted', is_capturable: true });
  const mid = await m.get(o.id);
  assert.ok(mid.flags.includes('has-captures'));
  assert.equal(mid.transactions[0].is_capturable, true, 'the rest is still capturable');
  await m.ledgerSound();

  // the second shipment: the other mug (quantity: what is left of it) and the tea, sent as whole lines as a shop may
  const second = await captureLines(o, [{ merchant_order_line_id: 'mug' }, bnplLines[1]]);
  assert.equal(second.status, 201, second.text);
  assert.equal(second.body.amount, 1995);
  assert.deepEqual(
    second.body.order_lines.map((l: Json) => [l.merchant_order_line_id, l.quantity]),
    [
      ['mug', 1],
      ['tea', 1],
    ],
  );
  assert.deepEqual(await counters(o), { captured_amount: 2995, voided_amount: 0, status: 'completed', is_capturable: false });
  const done = await m.get(o.id);
  assert.equal(done.related_orders.length, 2);
  for (const c of [first.body, second.body]) assert.deepEqual(await outbox(c.id), ['completed'], 'each capture order sends its webhook');
  expectError(await captureLines(o, [{ merchant_order_line_id: 'tea' }]), 409, 'CanNotCaptureTransaction');
  expectError(await m.capture(o), 409, 'CanNotCaptureTransaction');

  const refund = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 995, order_lines: [bnplLines[1]] });
  assert.equal(refund.status, 201, refund.text);
  assert.equal((await m.get(o.id)).refunded_amount, 995);
  await m.ledgerSound();
});

test('order lines a capture can not take: 400 naming the field, nothing stored, nothing captured', async () => {
  const o = await authorizedKlarna();
  assert.equal((await captureLines(o, [{ merchant_order_line_id: 'mug', quantity: 1 }])).status, 201);
  const cases: [unknown, string, RegExp][] = [
    [[{ merchant_order_line_id: 'cup' }], 'order_lines[0].merchant_order_line_id', /the order has no order line cup/],
    [[{ merchant_order_line_id: 'mug', quantity: 2 }], 'order_lines[0].quantity', /only 1 of order line mug is left to capture/],
    [[{ merchant_order_line_id: 'tea', quantity: 0 }], 'order_lines[0].quantity', /whole number from 1/],
    [[{ merchant_order_line_id: 'tea', quantity: 1.5 }], 'order_lines[0].quantity', /whole number from 1/],
    [[{ merchant_order_line_id: 'tea' }, { merchant_order_line_id: 'tea' }], 'order_lines[1].merchant_order_line_id', /named twice/],
    [[{ quantity: 1 }], 'order_lines[0].merchant_order_line_id', /required/],
    [[{ merchant_order_line_id: 'tea', amount: 1 }], 'order_lines[0].amount', /amount differs from order line tea/],
    [[], 'order_lines', /1 to 500 order lines/],
    ['tea', 'order_lines', /1 to 500 order lines/],
    [['tea'], 'order_lines[0]', /must be an object/],
  ];
  for (const [lines, field, value] of cases) {
    const before = await attempts();
    const res = await expectRejectedIn(t.db, () => captureLines(o, lines), { field });
    assert.match(res.body.error.value, value, field);
    assert.equal(await attempts(), before, 'nothing was sent to the acquirer');
  }
  await expectRejectedIn(
    t.db,
    () => t.api('POST', `${m.txnPath(o)}/captures/`, { order_lines: [{ merchant_order_line_id: 'tea' }], amount: 995 }),
    { field: 'amount' },
  );
  assert.deepEqual(await counters(o), { captured_amount: 1000, voided_amount: 0, status: 'accepted', is_capturable: true });
  // the mug left in full is then refused by name
  assert.equal((await captureLines(o, [{ merchant_order_line_id: 'mug' }])).status, 201);
  const full = await expectRejectedIn(t.db, () => captureLines(o, [{ merchant_order_line_id: 'mug' }]), {
    field: 'order_lines[0].merchant_order_line_id',
  });
  assert.match(full.body.error.value, /order line mug has been captured in full/);
  await m.ledgerSound();
});

test('the rest after a capture per line: captured whole, voided, or lapsed with the capture window', async () => {
  const whole = await authorizedKlarna();
  assert.equal((await captureLines(whole, [{ merchant_order_line_id: 'tea' }])).status, 201);
  const rest = await m.capture(whole);
  assert.equal(rest.status, 201, rest.text);
  assert.equal(rest.body.amount, 2000, 'no body: all that remains');
  assert.deepEqual(await counters(whole), { captured_amount: 2995, voided_amount: 0, status: 'completed', is_capturable: false });

  const voided = await authorizedKlarna();
  assert.equal((await captureLines(voided, [{ merchant_order_line_id: 'tea' }])).status, 201);
  const v = await m.voidAll(voided);
  assert.equal(v.status, 201, v.text);
  assert.equal(v.body.amount, 2000);
  assert.deepEqual(await counters(voided), { captured_amount: 995, voided_amount: 2000, status: 'completed', is_capturable: false });
  expectError(await captureLines(voided, [{ merchant_order_line_id: 'mug' }]), 409, 'CanNotCaptureTransaction');

  // the capture window (P5D) passes with a mug left: the payment is done with what was captured
  const shop = await t.newProject();
  await setActiveMethods(t.svc.ctx, shop.project_id, 'all');
  const made = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({ amount: 2995, order_lines: bnplLines, transactions: [{ payment_method: 'klarna-pay-later' }] }),
    { key: shop.api_key },
  );
  assert.equal(made.status, 201, made.text);
  await sandboxCustomer(t).choose(made.body, 'paid');
  const part = await t.api(
    'POST',
    `${m.txnPath(made.body)}/captures/`,
    { order_lines: [{ merchant_order_line_id: 'mug', quantity: 1 }] },
    { key: shop.api_key },
  );
  assert.equal(part.status, 201, part.text);
  assert.equal((await m.runJobs('P5DT1M', shop.api_key)).status, 200);
  await eventually(async () =>
    assert.deepEqual(await counters(made.body), { captured_amount: 1000, voided_amount: 0, status: 'completed', is_capturable: false }),
  );
  await m.ledgerSound(shop.project_id);
});

test('a card pre-authorization with order lines is captured per line the same way', async () => {
  const o = await payOrder(t, { amount: 2995, order_lines: bnplLines }, { capture_mode: 'manual' });
  assert.equal(o.transactions[0].is_capturable, true);
  const a = await captureLines(o, [{ merchant_order_line_id: 'tea' }]);
  assert.equal(a.status, 201, a.text);
  assert.equal(a.body.amount, 995);
  const b = await captureLines(o, [{ merchant_order_line_id: 'mug', quantity: 2 }]);
  assert.equal(b.status, 201, b.text);
  assert.deepEqual(await counters(o), { captured_amount: 2995, voided_amount: 0, status: 'completed', is_capturable: false });
  // an order without order lines can only be captured whole
  const plain = await m.preauth();
  const none = await expectRejectedIn(t.db, () => captureLines(plain, [{ merchant_order_line_id: 'mug' }]), { field: 'order_lines' });
  assert.match(none.body.error.value, /no order_lines to capture by/);
  assert.equal((await m.capture(plain)).status, 201);
  await m.ledgerSound();
});
