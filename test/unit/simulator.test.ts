import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  detectBrands,
  eciFor,
  expiryEnd,
  isExpired,
  liabilityShift,
  luhnValid,
  truncatePan,
  type TransStatus,
} from '../../src/domain/card.ts';
import type { OrderStatus } from '../../src/domain/status.ts';
import {
  createSimulator,
  decideAuthentication,
  decideAuthorization,
  decideChallenge,
  decideInquiry,
} from '../../src/acquirer/simulator/index.ts';
import { TEST_CARDS, testCard } from '../../src/acquirer/simulator/cards.ts';
import { authenticationFailed } from '../../src/services/payments/connectors.ts';
import { open, seal } from '../../src/services/platform/crypto-envelope.ts';
import { returnUrlFor } from '../../src/services/payments/card.ts';
import { loadConfig } from '../../src/config.ts';

const NOW = new Date('2025-06-15T12:00:00Z');

test('Luhn', () => {
  for (const pan of ['4111111111111111', '378282246310005', '2223003122003222', '4000002500001001', '79927398713'])
    assert.ok(luhnValid(pan), pan);
  for (const pan of ['4111111111111112', '378282246310006', '79927398710', '', '4111-1111', 'abcd']) assert.ok(!luhnValid(pan), pan);
});

test('brand detection, lengths and the co-badge table', () => {
  assert.deepEqual(detectBrands('4111111111111111'), { brand: 'visa', brands: ['visa'] });
  assert.deepEqual(detectBrands('378282246310005'), { brand: 'amex', brands: ['amex'] });
  assert.deepEqual(detectBrands('2223003122003222'), { brand: 'mastercard', brands: ['mastercard'] });
  assert.deepEqual(detectBrands('4000002500001001'), { brand: 'cartes_bancaires', brands: ['cartes_bancaires', 'visa'] });
  assert.equal(detectBrands('36227206271667')?.brand, 'diners');
  assert.equal(detectBrands('9912345678901234'), undefined, 'no scheme');
  assert.equal(detectBrands('37828224631000'), undefined, 'amex prefix with a length amex does not have');
});

test('every test card has the brands its table row says', () => {
  for (const c of TEST_CARDS) {
    assert.ok(luhnValid(c.pan), c.pan);
    assert.deepEqual(detectBrands(c.pan)?.brands, c.brands, c.pan);
  }
});

test('truncation shows at most the first six and last four digits', () => {
  assert.equal(truncatePan('4111111111111111'), '411111******1111');
  assert.equal(truncatePan('378282246310005'), '378282*****0005');
  assert.equal(truncatePan('4111111111111111111'), '411111*********1111');
  assert.equal(truncatePan('123456789012'), '********9012');
});

test('a card is valid through the last day of its expiry month', () => {
  assert.equal(expiryEnd('022024').toISOString(), '2024-03-01T00:00:00.000Z');
  assert.equal(expiryEnd('122025').toISOString(), '2026-01-01T00:00:00.000Z');
  assert.ok(!isExpired('062025', NOW));
  assert.ok(!isExpired('062025', new Date('2025-06-30T23:59:59Z')));
  assert.ok(isExpired('062025', new Date('2025-07-01T00:00:00Z')));
  assert.ok(isExpired('052025', NOW));
});

test('ECI by scheme and liability shift by transStatus', () => {
  const visaLike = ['visa', 'amex', 'cartes_bancaires', 'jcb'];
  for (const b of visaLike)
    assert.deepEqual(
      ['Y', 'A', 'N', 'U', 'R'].map((s) => eciFor(b, s as TransStatus)),
      ['05', '06', '07', '07', '07'],
      b,
    );
  for (const b of ['mastercard', 'maestro'])
    assert.deepEqual(
      ['Y', 'A', 'N', 'U', 'R'].map((s) => eciFor(b, s as TransStatus)),
      ['02', '01', '00', '00', '00'],
      b,
    );
  assert.deepEqual(
    ['Y', 'A', 'N', 'U', 'R', 'C'].map((s) => liabilityShift(s as TransStatus)),
    [true, true, false, false, false, false],
  );
});

test('3-D Secure decisions follow the table; unknown cards are frictionless Y', () => {
  const expect: Record<string, string> = {
    '4000002760003184': 'C',
    '4000008260003178': 'C',
    '4000000000003055': 'U',
    '4000000000003063': 'R',
  };
  for (const c of TEST_CARDS) {
    const r = decideAuthentication({ pan: c.pan, brand: c.brands[0] });
    assert.equal(r.trans_status, expect[c.pan] ?? 'Y', c.pan);
  }
  assert.deepEqual(decideAuthentication({ pan: '5105105105105100', brand: 'mastercard' }), {
    trans_status: 'Y',
    eci: '02',
    liability_shift: true,
  });
  assert.deepEqual(decideAuthentication({ pan: '4000000000003055', brand: 'visa' }), {
    trans_status: 'U',
    eci: '07',
    liability_shift: false,
  });
  assert.deepEqual(decideAuthentication({ pan: '4000000000003063', brand: 'visa' }), {
    trans_status: 'R',
    eci: '07',
    liability_shift: false,
  });
  assert.deepEqual(decideChallenge({ brand: 'visa' }, '1234'), { trans_status: 'Y', eci: '05', liability_shift: true });
  assert.deepEqual(decideChallenge({ brand: 'mastercard' }, '1235'), { trans_status: 'N', eci: '00', liability_shift: false });
  assert.equal(decideChallenge({ brand: 'visa' }, '').trans_status, 'N');
});

test('authorization decisions: the table, response codes, and the expiry rule first', () => {
  const expiry = '122030';
  const want: Record<string, [string, string | undefined, string]> = {
    '4000000000000002': ['declined', 'declined', '05'],
    '4000000000009995': ['declined', 'insufficient_funds', '51'],
    '4000000000000069': ['declined', 'expired_card', '54'],
    '4000000000000127': ['declined', 'incorrect_cvc', 'N7'],
    '4000000000000119': ['error', 'processing_error', '96'],
    '4000000000000341': ['processing', undefined, '09'],
    '4000008260003178': ['declined', 'insufficient_funds', '51'],
  };
  for (const c of TEST_CARDS) {
    if (c.three_ds === 'R') continue; // never authorized
    const o = decideAuthorization({ pan: c.pan, expiry }, NOW);
    const [status, reason, code] = want[c.pan] ?? ['accepted', undefined, '00'];
    assert.equal(o.status, status, c.pan);
    assert.equal(o.reason, reason, c.pan);
    assert.equal(o.response_code, code, c.pan);
    assert.ok(o.response_code_description.length > 3);
  }
  const expired = decideAuthorization({ pan: '4111111111111111', expiry: '052025' }, NOW);
  assert.deepEqual([expired.status, expired.reason, expired.response_code], ['declined', 'expired_card', '54']);
  assert.equal(decideAuthorization({ pan: '4111111111111112', expiry }, NOW).status, 'declined', 'not a valid number');
  assert.equal(decideAuthorization({ pan: '6011111111111117', expiry }, NOW).status, 'accepted', 'any valid card of a known brand');
});

test('the late decline answers declined when asked again; other references stay approved', () => {
  const late = decideAuthorization({ pan: '4000000000000341', expiry: '122030' }, NOW);
  assert.equal(late.status, 'processing');
  const after = decideInquiry(late.reference!);
  assert.deepEqual([after.status, after.reason, after.response_code], ['declined', 'declined', '05']);
  const ok = decideAuthorization({ pan: '4111111111111111', expiry: '122030' }, NOW);
  assert.equal(decideInquiry(ok.reference!).status, 'accepted');
});

test('an operation asked about or reversed before it arrived is refused when it comes late, and moves nothing', async () => {
  const sim = createSimulator({ settleMs: 0 });
  const ref = (id: string, amount = 1000) => ({
    operation_id: id,
    idempotency_key: id,
    project_id: 'p',
    transaction_id: 't',
    amount,
    currency: 'EUR',
    now: NOW,
  });
  const card = { pan: '4111111111111111', expiry: '122030', cvc: '123', holder: 'A', brand: 'visa' } as never;
  const sale = await sim.authorize({ ...ref('auth-1'), card, three_ds: { trans_status: 'Y', liability_shift: true }, capture: false });
  assert.equal(sale.status, 'accepted');

  // a capture asked about before it arrived: not found, and refused when it comes after all
  const asked = await sim.inquire({ operation_id: 'cap-1', idempotency_key: 'cap-1', kind: 'capture', project_id: 'p', now: NOW });
  assert.equal(asked.status, 'not_found');
  const late = await sim.capture({ ...ref('cap-1'), reference: sale.reference! });
  assert.deepEqual([late.status, late.response_code], ['error', '12']);
  assert.equal(sim.operations.has('cap-1'), false, 'nothing moved');
  const again = await sim.inquire({ operation_id: 'cap-1', idempotency_key: 'cap-1', kind: 'capture', project_id: 'p', now: NOW });
  assert.equal(again.status, 'not_found', 'what the inquiry said stays true');

  // an authorization reversed before it arrived is refused too
  const reversal = await sim.reverse({ ...ref('rev-1'), original_operation_id: 'auth-2' });
  assert.equal(reversal.status, 'accepted');
  const lateAuth = await sim.authorize({ ...ref('auth-2'), card, three_ds: { trans_status: 'Y', liability_shift: true }, capture: true });
  assert.equal(lateAuth.status, 'error');
  assert.equal(sim.operations.has('auth-2'), false);

  // an operation that arrived first is answered as before: the inquiry finds it, and it is never closed
  const captured = await sim.capture({ ...ref('cap-2'), reference: sale.reference! });
  assert.equal(captured.status, 'accepted');
  const found = await sim.inquire({ operation_id: 'cap-2', idempotency_key: 'cap-2', kind: 'capture', project_id: 'p', now: NOW });
  assert.equal(found.status, 'accepted');
  assert.equal((await sim.capture({ ...ref('cap-2'), reference: sale.reference! })).status, 'accepted');
});

test('a refused 3-D Secure is declined authentication_failed without authorization', () => {
  assert.deepEqual(authenticationFailed('R'), {
    status: 'declined',
    reason: 'authentication_failed',
    response_code: '3DS-R',
    response_code_description: '3-D Secure authentication rejected by the issuer',
  });
  assert.equal(authenticationFailed('N').response_code, '3DS-N');
  assert.equal(testCard('4000000000003063')?.reason, 'authentication_failed');
});

test('sealed fields open only with their key and associated data', () => {
  const key = randomBytes(32);
  const s = seal(key, Buffer.from('4111111111111111'), 'p\nr\npan');
  assert.ok(!s.includes('4111111111111111'));
  assert.notEqual(s, seal(key, Buffer.from('4111111111111111'), 'p\nr\npan'), 'random IV');
  assert.equal(open(key, s, 'p\nr\npan').toString(), '4111111111111111');
  assert.throws(() => open(key, s, 'p\nother\npan'), 'another record');
  assert.throws(() => open(randomBytes(32), s, 'p\nr\npan'), 'another key');
  const raw = Buffer.from(s, 'base64');
  raw[raw.length - 1] ^= 1;
  assert.throws(() => open(key, raw.toString('base64'), 'p\nr\npan'), 'tampered');
});

test('return redirect: failure_url for cancelled, expired and error; ids appended to the own query', () => {
  const config = loadConfig({}, { publicBaseUrl: 'https://pay.example' });
  const o = (status: string, body: Record<string, unknown>) => ({ id: 'o1', project_id: 'p1', status: status as OrderStatus, body });
  const both = { return_url: 'https://s.example/ok?x=1', failure_url: 'https://s.example/fail' };
  assert.equal(returnUrlFor(config, o('completed', both)), 'https://s.example/ok?x=1&order_id=o1&project_id=p1');
  assert.equal(returnUrlFor(config, o('processing', both)), 'https://s.example/ok?x=1&order_id=o1&project_id=p1');
  for (const s of ['cancelled', 'expired', 'error'])
    assert.equal(returnUrlFor(config, o(s, both)), 'https://s.example/fail?order_id=o1&project_id=p1');
  assert.equal(returnUrlFor(config, o('error', { return_url: 'https://s.example/ok' })), 'https://s.example/ok?order_id=o1&project_id=p1');
  assert.equal(returnUrlFor(config, o('completed', { failure_url: 'https://s.example/fail' })), 'https://pay.example/pay/o1/result/');
  assert.equal(returnUrlFor(config, o('completed', {})), 'https://pay.example/pay/o1/result/');
  assert.equal(
    returnUrlFor(config, o('completed', { return_url: 'https://s.example/p?flag#h' })),
    'https://s.example/p?flag&order_id=o1&project_id=p1#h',
  );
});
