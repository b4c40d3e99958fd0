import { test } from 'node:test';
import assert from 'node:assert/strict';
import { moneyActions, moneyOf, moneyTotals, succeeded, type MoneyTxn } from '../../src/domain/money-state.ts';
import { insightOf } from '../../src/domain/insight.ts';

const txn = (o: Partial<MoneyTxn> = {}): MoneyTxn => ({
  status: 'completed',
  reason: null,
  credit_debit: 'credit',
  capture_mode: null,
  is_capturable: false,
  authorized_amount: 0,
  captured_amount: 0,
  voided_amount: 0,
  refunded_amount: 0,
  charged_back_amount: 0,
  ...o,
});
const sale = (amount: number, o: Partial<MoneyTxn> = {}) => txn({ authorized_amount: amount, captured_amount: amount, ...o });
const preauth = (amount: number, o: Partial<MoneyTxn> = {}) =>
  txn({ status: 'accepted', capture_mode: 'manual', is_capturable: true, authorized_amount: amount, ...o });

test('a sale is captured; its net is the amount; only a refund of all of it is offered', () => {
  const m = moneyOf('completed', [sale(1000)]);
  assert.equal(m.state, 'captured');
  assert.equal(m.net, 1000);
  assert.deepEqual(moneyActions('completed', m), { refund: 1000 });
});

test('a pre-authorization is authorized with capture and void of what is reserved, and no refund', () => {
  const m = moneyOf('completed', [preauth(2500)]);
  assert.equal(m.state, 'authorized');
  assert.equal(m.net, 0);
  assert.equal(m.open, 2500);
  assert.deepEqual(moneyActions('completed', m), { capture: 2500, void: 2500 });
});

test('a partial void leaves the rest authorized; capturing the rest is a partial capture', () => {
  const partlyVoided = moneyOf('completed', [preauth(2500, { voided_amount: 1000 })]);
  assert.equal(partlyVoided.state, 'authorized');
  assert.deepEqual(moneyActions('completed', partlyVoided), { capture: 1500, void: 1500 });
  const captured = moneyOf('completed', [
    preauth(2500, { status: 'completed', is_capturable: false, voided_amount: 1000, captured_amount: 1500 }),
  ]);
  assert.equal(captured.state, 'partially_captured');
  assert.equal(captured.net, 1500);
  assert.deepEqual(moneyActions('completed', captured), { refund: 1500 });
});

test('refunds: partially refunded with the net left, then refunded with nothing to do', () => {
  const part = moneyOf('completed', [sale(1000, { refunded_amount: 300 })]);
  assert.equal(part.state, 'partially_refunded');
  assert.equal(part.net, 700);
  assert.deepEqual(moneyActions('completed', part), { refund: 700 });
  const all = moneyOf('completed', [sale(1000, { refunded_amount: 1000 })]);
  assert.equal(all.state, 'refunded');
  assert.deepEqual(moneyActions('completed', all), {});
});

test('a chargeback of everything reads charged back; a partial one counts as money taken back', () => {
  assert.equal(moneyOf('completed', [sale(1000, { charged_back_amount: 1000 })]).state, 'charged_back');
  const part = moneyOf('completed', [sale(1000, { charged_back_amount: 400 })]);
  assert.equal(part.state, 'partially_refunded');
  assert.equal(part.net, 600);
});

test('voided in full and expired pre-authorizations move no money and allow nothing', () => {
  const voided = moneyOf('completed', [preauth(900, { status: 'cancelled', is_capturable: false, voided_amount: 900 })]);
  assert.equal(voided.state, 'voided');
  assert.deepEqual(moneyActions('completed', voided), {});
  const expired = moneyOf('completed', [preauth(900, { status: 'expired', is_capturable: false })]);
  assert.equal(expired.state, 'expired');
  assert.equal(expired.net, 0);
});

test('unpaid orders: declined with its reason, failed, expired, cancelled, processing, open', () => {
  const declined = moneyOf('error', [txn({ status: 'declined', reason: 'insufficient_funds' })]);
  assert.equal(declined.state, 'declined');
  assert.equal(declined.reason, 'insufficient_funds');
  assert.equal(moneyOf('error', [txn({ status: 'error', reason: 'processing_error' })]).state, 'failed');
  assert.equal(moneyOf('expired', [txn({ status: 'expired' })]).state, 'expired');
  assert.equal(moneyOf('cancelled', []).state, 'cancelled');
  assert.equal(moneyOf('processing', [txn({ status: 'pending' })]).state, 'processing');
  const open = moneyOf('new', []);
  assert.equal(open.state, 'open');
  assert.deepEqual(moneyActions('new', open), { cancel: true });
});

test('a declined attempt before a paid one: the paid one decides', () => {
  const m = moneyOf('completed', [txn({ status: 'declined', reason: 'declined' }), sale(500)]);
  assert.equal(m.state, 'captured');
  assert.equal(m.reason, undefined);
});

test('totals count each payment once, per currency', () => {
  const rows = [
    { currency: 'EUR', money: moneyOf('completed', [sale(1000, { refunded_amount: 250 })]) },
    { currency: 'EUR', money: moneyOf('completed', [preauth(2000)]) },
    { currency: 'EUR', money: moneyOf('completed', [preauth(2000, { status: 'completed', voided_amount: 500, captured_amount: 1500 })]) },
    { currency: 'USD', money: moneyOf('completed', [sale(700)]) },
    { currency: 'EUR', money: moneyOf('error', [txn({ status: 'declined' })]) },
  ];
  assert.deepEqual(moneyTotals(rows), [
    { currency: 'EUR', payments: 2, captured: 2500, refunded: 250, charged_back: 0, net: 2250 },
    { currency: 'USD', payments: 1, captured: 700, refunded: 0, charged_back: 0, net: 700 },
  ]);
  assert.equal(rows.filter((r) => succeeded(r.money)).length, 4);
});

test('insight: net volume by day per currency, payments by method and brand, the share that succeeded', () => {
  const from = new Date('2026-03-01T00:00:00Z');
  const pay = (day: string, currency: string, money: ReturnType<typeof moneyOf>, brand: string | null = 'visa') => ({
    currency,
    created: new Date(`${day}T10:00:00Z`),
    payment_method: 'credit-card',
    brand,
    money,
  });
  const i = insightOf(
    [
      pay('2026-03-01', 'EUR', moneyOf('completed', [sale(1000, { refunded_amount: 400 })])),
      pay('2026-03-01', 'EUR', moneyOf('completed', [sale(500)]), 'mastercard'),
      pay('2026-03-03', 'USD', moneyOf('completed', [sale(700)])),
      pay('2026-03-03', 'EUR', moneyOf('error', [txn({ status: 'declined', reason: 'declined' })])),
      pay('2026-03-02', 'EUR', moneyOf('new', []), null),
    ],
    from,
    3,
  );
  assert.deepEqual(i.byDay, [
    {
      currency: 'EUR',
      days: [
        { day: '2026-03-01', payments: 2, net: 1100 },
        { day: '2026-03-02', payments: 0, net: 0 },
        { day: '2026-03-03', payments: 0, net: 0 },
      ],
    },
    {
      currency: 'USD',
      days: [
        { day: '2026-03-01', payments: 0, net: 0 },
        { day: '2026-03-02', payments: 0, net: 0 },
        { day: '2026-03-03', payments: 1, net: 700 },
      ],
    },
  ]);
  assert.deepEqual(i.byMethod, [
    { method: 'credit-card', brand: 'visa', payments: 3, succeeded: 2 },
    { method: 'credit-card', brand: 'mastercard', payments: 1, succeeded: 1 },
  ]);
  assert.equal(i.ended, 4, 'the open order has not ended');
  assert.equal(i.succeeded, 3);
});
