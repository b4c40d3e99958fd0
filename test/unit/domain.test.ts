// Pure rules of src/domain: money, durations, state machines, customer rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { currencyExponent, feeFor, formatMinor, isCurrency, isValidAmount } from '../../src/domain/currency.ts';
import { addDuration, durationMs, isPositiveDuration, parseDuration } from '../../src/domain/duration.ts';
import {
  canMove,
  deriveOrderStatus,
  FINAL_ORDER_STATUSES,
  isCancellable,
  isFinalOrder,
  ORDER_STATUSES,
  TRANSACTION_STATUSES,
  type OrderStatus,
  type TransactionStatus,
} from '../../src/domain/status.ts';
import { customerProblem, isCountry, missingBilling, STATES } from '../../src/domain/customer.ts';

// ---- money --------------------------------------------------------------------------------

test('currencyExponent follows ISO 4217 minor units', () => {
  assert.equal(currencyExponent('JPY'), 0);
  assert.equal(currencyExponent('EUR'), 2);
  assert.equal(currencyExponent('USD'), 2);
  assert.equal(currencyExponent('KWD'), 3);
  assert.equal(currencyExponent('BHD'), 3);
  assert.equal(currencyExponent('ISK'), 0);
});

test('currencyExponent refuses codes that are not payable money, unknown and lowercase codes', () => {
  for (const code of ['XAU', 'XAG', 'XPT', 'XPD', 'XTS', 'XXX', 'XDR', 'ABC', 'eur', 'Eur', 'EURO', 'EU', '', '978']) {
    assert.equal(currencyExponent(code), undefined, code);
    assert.equal(isCurrency(code), false, code);
  }
  assert.equal(isCurrency('CHF'), true);
});

test('isValidAmount: safe integers from 0', () => {
  for (const ok of [0, 1, 1995, Number.MAX_SAFE_INTEGER]) assert.equal(isValidAmount(ok), true, String(ok));
  for (const bad of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity, '100', null, undefined])
    assert.equal(isValidAmount(bad), false, String(bad));
});

test('formatMinor writes minor units in the currency exponent', () => {
  assert.equal(formatMinor(1234, 'EUR'), '12.34');
  assert.equal(formatMinor(995, 'EUR'), '9.95');
  assert.equal(formatMinor(5, 'EUR'), '0.05');
  assert.equal(formatMinor(0, 'EUR'), '0.00');
  assert.equal(formatMinor(-5, 'EUR'), '-0.05');
  assert.equal(formatMinor(-1234, 'EUR'), '-12.34');
  assert.equal(formatMinor(1234, 'JPY'), '1234');
  assert.equal(formatMinor(0, 'JPY'), '0');
  assert.equal(formatMinor(1234, 'KWD'), '1.234');
  assert.equal(formatMinor(7, 'KWD'), '0.007');
  assert.equal(formatMinor(Number.MAX_SAFE_INTEGER, 'EUR'), '90071992547409.91');
});

test('feeFor: basis points rounded half up, plus the fixed part', () => {
  assert.equal(feeFor(1995, 180, 25), 36 + 25); // 35.91 -> 36
  assert.equal(feeFor(10000, 180, 25), 180 + 25);
  assert.equal(feeFor(0, 180, 25), 25);
  assert.equal(feeFor(25, 200, 0), 1); // 0.5 -> 1 (half up)
  assert.equal(feeFor(125, 200, 0), 3); // 2.5 -> 3
  assert.equal(feeFor(124, 200, 0), 2); // 2.48 -> 2
  assert.equal(feeFor(74, 200, 0), 1); // 1.48 -> 1
  assert.equal(feeFor(1, 4999, 0), 0); // 0.4999 -> 0
  assert.equal(feeFor(1, 5000, 0), 1); // 0.5 -> 1
  assert.equal(feeFor(1995, 0, 0), 0);
});

test('feeFor stays exact where amount x bps is beyond 2^53', () => {
  const exact = (a: number, bps: number, fixed: number) => Number((BigInt(a) * BigInt(bps) + 5000n) / 10000n) + fixed;
  for (const a of [Number.MAX_SAFE_INTEGER, 9007199254740000, 5555555555555555, 123456789012345]) {
    for (const bps of [180, 9999, 1]) assert.equal(feeFor(a, bps, 25), exact(a, bps, 25), `${a} x ${bps}`);
  }
});

// ---- durations ----------------------------------------------------------------------------

test('parseDuration takes whole ISO 8601 durations only', () => {
  assert.deepEqual(parseDuration('PT30M'), { minutes: 30 });
  assert.deepEqual(parseDuration('P1DT12H'), { days: 1, hours: 12 });
  assert.deepEqual(parseDuration('P2W'), { weeks: 2 });
  for (const bad of ['', 'P', 'PT', 'P1DT', 'PT30M ', ' PT30M', 'xPT30M', 'PT30Mx', '30M', 'pt30m', 'P1H', 'PT1D', 'P-1D']) {
    assert.equal(parseDuration(bad), undefined, JSON.stringify(bad));
  }
});

test('isPositiveDuration: positive ISO 8601 durations only', () => {
  for (const ok of ['PT30M', 'PT1H', 'P7D', 'P1M', 'P1Y', 'P1W', 'PT1S', 'PT0.5S', 'P1DT0H', 'P0DT1M'])
    assert.equal(isPositiveDuration(ok), true, ok);
  for (const bad of ['PT0S', 'P0D', 'P0Y0M0DT0H0M0S', '-PT30M', '-P1D', 'P', 'PT', 'thirty minutes', '', 'P99999999Y', 'PT30M ']) {
    assert.equal(isPositiveDuration(bad), false, JSON.stringify(bad));
  }
});

test('addDuration: months land on the last day of shorter months', () => {
  const at = (s: string) => new Date(s);
  assert.equal(addDuration(at('2023-01-31T10:00:00Z'), 'P1M').toISOString(), '2023-02-28T10:00:00.000Z');
  assert.equal(addDuration(at('2024-01-31T10:00:00Z'), 'P1M').toISOString(), '2024-02-29T10:00:00.000Z');
  assert.equal(addDuration(at('2024-03-31T00:00:00Z'), 'P1M').toISOString(), '2024-04-30T00:00:00.000Z');
  assert.equal(addDuration(at('2024-02-29T00:00:00Z'), 'P1Y').toISOString(), '2025-02-28T00:00:00.000Z');
  assert.equal(addDuration(at('2024-01-31T00:00:00Z'), 'P1M1D').toISOString(), '2024-03-01T00:00:00.000Z');
  assert.equal(addDuration(at('2023-12-31T00:00:00Z'), 'P2M').toISOString(), '2024-02-29T00:00:00.000Z');
  assert.equal(addDuration(at('2024-03-31T00:00:00Z'), '-P1M').toISOString(), '2024-02-29T00:00:00.000Z');
  assert.equal(addDuration(at('2024-01-15T00:00:00Z'), 'P1M').toISOString(), '2024-02-15T00:00:00.000Z');
});

test('addDuration: days, weeks and times are exact, in UTC', () => {
  const from = new Date('2024-03-30T12:00:00Z');
  assert.equal(addDuration(from, 'PT30M').toISOString(), '2024-03-30T12:30:00.000Z');
  assert.equal(addDuration(from, 'P1D').toISOString(), '2024-03-31T12:00:00.000Z');
  assert.equal(addDuration(from, 'P1W').toISOString(), '2024-04-06T12:00:00.000Z');
  assert.equal(addDuration(from, 'PT36H').toISOString(), '2024-04-01T00:00:00.000Z');
  assert.equal(addDuration(from, 'PT0.5S').toISOString(), '2024-03-30T12:00:00.500Z');
  assert.equal(addDuration(from, { minutes: 5 }).toISOString(), '2024-03-30T12:05:00.000Z');
  assert.throws(() => addDuration(from, 'soon'));
  assert.equal(from.toISOString(), '2024-03-30T12:00:00.000Z', 'the argument is not changed');
  assert.equal(durationMs('PT30M'), 1_800_000);
  assert.equal(durationMs('P1D'), 86_400_000);
});

// ---- status -------------------------------------------------------------------------------

const single: Array<[TransactionStatus, OrderStatus]> = [
  ['new', 'new'],
  ['pending', 'processing'],
  ['processing', 'processing'],
  ['accepted', 'completed'],
  ['completed', 'completed'],
  ['declined', 'error'],
  ['error', 'error'],
  ['cancelled', 'cancelled'],
  ['expired', 'expired'],
];
for (const [txn, order] of single) {
  test(`deriveOrderStatus: one ${txn} transaction -> order ${order}`, () => {
    assert.equal(deriveOrderStatus('new', [txn]), order);
    assert.equal(deriveOrderStatus('processing', [txn]), order);
    assert.equal(deriveOrderStatus('see-transactions', [txn]), order);
  });
}

test('deriveOrderStatus: no transactions -> new', () => {
  assert.equal(deriveOrderStatus('new', []), 'new');
});

test('deriveOrderStatus: transactions that agree give their status, disagreeing ones see-transactions', () => {
  assert.equal(deriveOrderStatus('new', ['accepted', 'completed']), 'completed');
  assert.equal(deriveOrderStatus('new', ['declined', 'error']), 'error');
  assert.equal(deriveOrderStatus('new', ['pending', 'processing']), 'processing');
  assert.equal(deriveOrderStatus('new', ['new', 'declined']), 'see-transactions');
  assert.equal(deriveOrderStatus('new', ['accepted', 'declined']), 'see-transactions');
  assert.equal(deriveOrderStatus('processing', ['expired', 'cancelled']), 'see-transactions');
  // a failed or cancelled attempt before a later one (a retry on the hosted page) is history
  assert.equal(deriveOrderStatus('processing', ['cancelled', 'expired']), 'expired');
  assert.equal(deriveOrderStatus('new', ['declined', 'error', 'accepted']), 'completed');
  assert.equal(deriveOrderStatus('new', ['declined', 'new']), 'new');
  assert.equal(deriveOrderStatus('see-transactions', ['accepted', 'accepted']), 'completed');
});

for (const final of FINAL_ORDER_STATUSES) {
  test(`deriveOrderStatus: a ${final} order never changes again`, () => {
    for (const txn of TRANSACTION_STATUSES) assert.equal(deriveOrderStatus(final, [txn]), final, txn);
    assert.equal(deriveOrderStatus(final, []), final);
    assert.equal(deriveOrderStatus(final, ['accepted', 'declined']), final);
  });
}

test('final order states are completed, cancelled, expired and error', () => {
  assert.deepEqual([...FINAL_ORDER_STATUSES].sort(), ['cancelled', 'completed', 'error', 'expired']);
  for (const s of ORDER_STATUSES) assert.equal(isFinalOrder(s), ['completed', 'cancelled', 'expired', 'error'].includes(s), s);
});

test('canMove: terminal transaction states never move; a pre-authorization moves on from accepted', () => {
  for (const terminal of ['completed', 'declined', 'error', 'cancelled', 'expired'] as const) {
    for (const to of TRANSACTION_STATUSES) assert.equal(canMove(terminal, to), false, `${terminal} -> ${to}`);
  }
  assert.equal(canMove('new', 'pending'), true);
  assert.equal(canMove('pending', 'accepted'), true);
  assert.equal(canMove('processing', 'declined'), true);
  assert.equal(canMove('accepted', 'completed'), true);
  assert.equal(canMove('accepted', 'cancelled'), true);
  assert.equal(canMove('accepted', 'expired'), true);
  assert.equal(canMove('accepted', 'pending'), false);
  assert.equal(canMove('accepted', 'new'), false);
  assert.equal(canMove('processing', 'pending'), false);
  assert.equal(canMove('processing', 'cancelled'), false, 'once at the acquirer, a cancel is not possible');
  for (const s of TRANSACTION_STATUSES) assert.equal(canMove(s, s), false, `${s} -> itself`);
});

test('isCancellable: only before the transaction reaches the acquirer', () => {
  for (const s of TRANSACTION_STATUSES) assert.equal(isCancellable(s), s === 'new' || s === 'pending', s);
});

// ---- customer -----------------------------------------------------------------------------

const billing = {
  first_name: 'Ada',
  last_name: 'Lovelace',
  address_type: 'billing',
  address: 'Damrak 1',
  postal_code: '1012 LG',
  city: 'Amsterdam',
  country: 'NL',
};

test('isCountry: ISO 3166-1 alpha-2 only', () => {
  for (const ok of ['NL', 'US', 'CA', 'DE', 'JP']) assert.equal(isCountry(ok), true, ok);
  for (const bad of ['XX', 'nl', 'NLD', 'N', '', 'UK', 'EU']) assert.equal(isCountry(bad), false, bad);
});

test('customerProblem: country and state rules', () => {
  assert.equal(customerProblem(billing), undefined);
  assert.equal(customerProblem({}), undefined);
  assert.deepEqual(customerProblem({ ...billing, country: 'XX' })?.field, 'customer.country');
  assert.deepEqual(customerProblem({ ...billing, country: 'US' })?.field, 'customer.state');
  assert.deepEqual(customerProblem({ ...billing, country: 'CA' })?.field, 'customer.state');
  assert.deepEqual(customerProblem({ ...billing, country: 'US', state: 'QC' })?.field, 'customer.state');
  assert.deepEqual(customerProblem({ ...billing, country: 'CA', state: 'CA' })?.field, 'customer.state');
  assert.equal(customerProblem({ ...billing, country: 'US', state: 'NY' }), undefined);
  assert.equal(customerProblem({ ...billing, country: 'CA', state: 'QC' }), undefined);
  assert.equal(customerProblem({ ...billing, country: 'NL', state: 'NH' }), undefined, 'no state list outside US and CA');
});

test('STATES lists the spec values', () => {
  assert.deepEqual(STATES.CA, 'AB BC MB NB NL NS NT NU ON PE QC SK YT'.split(' '));
  assert.deepEqual(
    STATES.US,
    'AA AE AK AL AP AR AZ CA CO CT DC DE FL GA HI IA ID IL IN KS KY LA MA MD ME MI MN MO MS MT NC ND NE NH NJ NM NV NY OH OK OR PA RI SC SD TN TX UT VA VT WA WI WV WY'.split(
      ' ',
    ),
  );
});

test('missingBilling: the fields a complete billing address lacks', () => {
  assert.deepEqual(missingBilling(billing), []);
  assert.deepEqual(missingBilling(undefined), ['first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'country']);
  assert.deepEqual(missingBilling(null), ['first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'country']);
  assert.deepEqual(missingBilling({ ...billing, city: '' }), ['city']);
  assert.deepEqual(missingBilling({ ...billing, address_type: undefined }), ['address_type']);
  assert.deepEqual(missingBilling({ ...billing, country: 'US' }), ['state']);
  assert.deepEqual(missingBilling({ ...billing, country: 'US', state: 'NY' }), []);
});
