import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  captureLegs,
  captureProblem,
  counterViolations,
  debitLegs,
  feeLegs,
  figures,
  holdLegs,
  isBalanced,
  journalSum,
  payoutLegs,
  refundable,
  releaseLegs,
  reserveFor,
  reserveLegs,
  remainingAuthorization,
  reversalLegs,
  settlementLegs,
  voidProblem,
  type Authorization,
  type Leg,
} from '../../src/domain/ledger.ts';
import { guarded } from '../../src/services/payments/operations.ts';
import { DomainError } from '../../src/domain/errors.ts';

const balanceOf = (legs: Leg[], account: string) => legs.filter((l) => l.account === account).reduce((s, l) => s + l.amount, 0);

test('every journal builder balances to zero, for many amounts and fees', () => {
  const amounts = [0, 1, 2, 99, 1995, 10_000_000, 2 ** 40];
  for (const a of amounts)
    for (const f of [0, 1, 61, 1500]) {
      for (const legs of [
        holdLegs(a),
        releaseLegs(a, 'void'),
        releaseLegs(a, 'expiry'),
        captureLegs(a, f, true),
        captureLegs(a, f, false),
        debitLegs(a, f, 'refund'),
        debitLegs(a, f, 'chargeback'),
        reversalLegs(a, f),
        settlementLegs('credit', a, f),
        settlementLegs('debit', a, f),
        feeLegs(f),
        reserveLegs(a, 'reserve'),
        reserveLegs(a, 'reserve_release'),
        payoutLegs(a, 'payout'),
        payoutLegs(a, 'payout_return'),
      ]) {
        assert.equal(journalSum(legs), 0, JSON.stringify(legs));
        assert.ok(isBalanced(legs));
        assert.ok(
          legs.every((l) => l.amount !== 0),
          'no zero legs',
        );
      }
    }
  assert.equal(isBalanced([{ amount: 5 }, { amount: -4 }]), false);
});

test('a pre-authorization life: hold, partial void, capture, refund, settlement leave the right balances', () => {
  const legs = [
    ...holdLegs(1995),
    ...releaseLegs(495, 'void'),
    ...captureLegs(1500, 52, true),
    ...debitLegs(300, 0, 'refund'),
    ...settlementLegs('credit', 1500, 52),
    ...settlementLegs('debit', 300, 0),
  ];
  assert.equal(balanceOf(legs, 'holds'), 0, 'hold fully released by void and capture');
  assert.equal(balanceOf(legs, 'acquirer_receivable'), 0, 'the acquirer paid what it owed');
  assert.equal(balanceOf(legs, 'merchant_payable'), 0, 'nothing is pending any more');
  assert.equal(balanceOf(legs, 'merchant_available'), -(1448 - 300), 'the merchant is owed the net, until a payout');
  assert.equal(balanceOf(legs, 'fee_income'), -52, 'our fee, credited');
  assert.equal(balanceOf(legs, 'bank'), 1200, 'the acquirer paid 1500 and took 300 back');
  const paid = [...legs, ...payoutLegs(1148, 'payout')];
  assert.equal(balanceOf(paid, 'merchant_available'), 0, 'a payout takes it out of what we owe');
  assert.equal(balanceOf(paid, 'bank'), 52, 'our fee stays in the bank');
});

test('a rolling reserve holds back part of a settled credit and gives it back on release; debits hold nothing', () => {
  assert.equal(reserveFor('credit', 1934, 1000), 193, '10 % of 1934, half up');
  assert.equal(reserveFor('credit', 1935, 1000), 194, '193.5 rounds half up');
  assert.equal(reserveFor('debit', 300, 1000), 0);
  assert.equal(reserveFor('credit', 1934, 0), 0);
  assert.equal(reserveFor('credit', -5, 1000), 0, 'a fee above the amount holds nothing');
  const legs = [...settlementLegs('credit', 1995, 61), ...reserveLegs(193, 'reserve')];
  assert.equal(balanceOf(legs, 'merchant_available'), -(1934 - 193));
  assert.equal(balanceOf(legs, 'merchant_reserved'), -193);
  const released = [...legs, ...reserveLegs(193, 'reserve_release')];
  assert.equal(balanceOf(released, 'merchant_reserved'), 0);
  assert.equal(balanceOf(released, 'merchant_available'), -1934);
});

test('a sale books receivable and payable at once, net of the fee; no hold', () => {
  const legs = captureLegs(1995, 61, false);
  assert.equal(balanceOf(legs, 'holds'), 0);
  assert.equal(balanceOf(legs, 'acquirer_receivable'), 1995);
  assert.equal(balanceOf(legs, 'merchant_payable'), -1934);
  assert.ok(legs.every((l) => l.kind === 'sale' || l.kind === 'fee'));
});

test('a chargeback reversal gives back exactly what the chargeback took', () => {
  const legs = [...captureLegs(1000, 0, false), ...debitLegs(400, 0, 'chargeback'), ...reversalLegs(400, 0)];
  assert.equal(balanceOf(legs, 'acquirer_receivable'), 1000);
  assert.equal(balanceOf(legs, 'merchant_payable'), -1000);
});

test('figures: fee from the rule (half up), settlement amount − fee for credits, amount + fee for debits', () => {
  assert.deepEqual(figures('credit', 1995, { bps: 180, fixed: 25 }), { fee: 61, settlement: 1934 });
  assert.deepEqual(figures('credit', 1500, { bps: 180, fixed: 25 }), { fee: 52, settlement: 1448 });
  assert.deepEqual(figures('credit', 250, { bps: 180, fixed: 0 }), { fee: 5, settlement: 245 }, '4.5 rounds half up');
  assert.deepEqual(figures('debit', 1000, { bps: 0, fixed: 15 }), { fee: 15, settlement: 1015 });
  assert.deepEqual(figures('debit', 300, undefined), { fee: 0, settlement: 300 }, 'no rule, no fee');
  assert.deepEqual(figures('credit', 0, { bps: 180, fixed: 25 }), { fee: 0, settlement: 0 }, 'nothing moved, no fee');
});

test('counters: each broken rule is named; sound counters give none', () => {
  const ok = { authorized_amount: 1000, captured_amount: 600, voided_amount: 400, refunded_amount: 300, charged_back_amount: 300 };
  assert.deepEqual(counterViolations(ok), []);
  assert.equal(remainingAuthorization(ok), 0);
  assert.equal(refundable(ok), 0);
  assert.deepEqual(counterViolations({ ...ok, voided_amount: 401 }), ['captured 600 + voided 401 > authorized 1000']);
  assert.deepEqual(counterViolations({ ...ok, refunded_amount: 301 }), ['refunded 301 + charged back 300 > captured 600']);
  assert.deepEqual(counterViolations({ ...ok, voided_amount: -1 }), ['voided_amount -1 is negative']);
});

const auth = (over: Partial<Authorization> = {}): Authorization => ({
  status: 'accepted',
  capture_mode: 'manual',
  is_capturable: true,
  capture_before: new Date('2030-01-06T00:00:00Z'),
  authorized_amount: 1995,
  captured_amount: 0,
  voided_amount: 0,
  refunded_amount: 0,
  charged_back_amount: 0,
  ...over,
});
const NOW = new Date('2030-01-02T00:00:00Z');
const LATER = new Date('2030-01-07T00:00:00Z');

test('captureProblem: capturable once, only pre-authorizations, not after expiry or full void', () => {
  assert.equal(captureProblem(auth(), NOW), undefined);
  assert.equal(captureProblem(auth({ capture_mode: 'delayed' }), NOW), undefined);
  assert.equal(captureProblem(auth({ voided_amount: 1000 }), NOW), undefined, 'partial void leaves a remainder');
  assert.match(captureProblem(auth({ capture_mode: null, is_capturable: false }), NOW)!, /only a pre-authorization/);
  assert.match(captureProblem(auth({ status: 'completed', captured_amount: 1995, is_capturable: false }), NOW)!, /already been captured/);
  assert.match(captureProblem(auth({ status: 'expired', is_capturable: false }), NOW)!, /expired/);
  assert.match(captureProblem(auth(), LATER)!, /expired/, 'a manual window passed before the job ran');
  assert.equal(captureProblem(auth({ capture_mode: 'delayed' }), LATER), undefined, 'a due delayed capture may still be captured');
  assert.match(captureProblem(auth({ status: 'cancelled', voided_amount: 1995, is_capturable: false }), NOW)!, /voided in full/);
  assert.match(captureProblem(auth({ status: 'pending', is_capturable: false }), NOW)!, /status pending/);
});

test('voidProblem: before capture only, within the remainder, delayed only before its end', () => {
  assert.equal(voidProblem(auth(), NOW), undefined);
  assert.equal(voidProblem(auth(), NOW, 1995), undefined);
  assert.equal(voidProblem(auth({ voided_amount: 995 }), NOW, 1000), undefined);
  assert.match(voidProblem(auth({ voided_amount: 995 }), NOW, 1001)!, /above the remaining authorized amount 1000/);
  assert.match(voidProblem(auth({ capture_mode: null }), NOW)!, /use a refund/);
  assert.match(voidProblem(auth({ status: 'completed', captured_amount: 1995, is_capturable: false }), NOW)!, /captured; use a refund/);
  assert.match(voidProblem(auth({ status: 'expired', is_capturable: false }), NOW)!, /expired/);
  assert.match(voidProblem(auth(), LATER)!, /expired/);
  assert.match(voidProblem(auth({ capture_mode: 'delayed' }), LATER, 1)!, /only be voided before the end/);
  assert.equal(voidProblem(auth({ capture_mode: 'delayed' }), NOW, 1), undefined);
  assert.match(voidProblem(auth({ status: 'cancelled', voided_amount: 1995, is_capturable: false }), NOW)!, /already been voided/);
});

test('a CHECK violation from the database becomes the operation error, never a 500', async () => {
  const check = Object.assign(new Error('violates check constraint'), { code: '23514' });
  await assert.rejects(
    guarded('CanNotCaptureTransaction', async () => {
      throw check;
    }),
    (e: unknown) => e instanceof DomainError && e.kind === 'conflict' && e.type === 'CanNotCaptureTransaction',
  );
  await assert.rejects(
    guarded('RefundError', async () => {
      throw check;
    }),
    (e: unknown) => e instanceof DomainError && e.kind === 'refused',
  );
  const other = new Error('boom');
  await assert.rejects(
    guarded('RefundError', async () => {
      throw other;
    }),
    (e: unknown) => e === other,
  );
  assert.equal(await guarded('RefundError', async () => 7), 7);
});
