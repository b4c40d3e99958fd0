// Pure rules for real clients: the readings of the customer patterns, body shaping (PHP's [],
// customers), read-only comparison on PUT, customer messages, payment method aliases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADDRESS_PATTERN, NAME_PATTERN, POSTAL_CODE_PATTERN, normaliseCustomer, normaliseSpace } from '../../src/domain/customer.ts';
import { shapeBody } from '../../src/domain/schemas/shape.ts';
import { OrderInput, OrderUpdate } from '../../src/domain/schemas/order.ts';
import { unchanged } from '../../src/domain/read-only.ts';
import { customerMessage, messageLocale } from '../../src/domain/customer-message.ts';
import { parseMethodAliases, resolveMethod } from '../../src/domain/project.ts';
import { loadConfig } from '../../src/config.ts';

// Ajv compiles JSON Schema patterns with the u flag
const matches = (pattern: string, s: string) => new RegExp(pattern, 'u').test(s);

test('name pattern: Unicode letters and marks, hyphens, apostrophes; not <, /, @ or emoji', () => {
  for (const ok of [
    'Wałęsa',
    'Dvořák',
    'Nguyễn',
    'Nguye\u0302\u0303n',
    'Anne-Marie',
    'Smith-Jones',
    "O'Brien",
    'Zoë',
    'Δημήτρης',
    'Jr.',
    'Ada, 2nd',
  ])
    assert.ok(matches(NAME_PATTERN, ok), ok);
  for (const bad of ['Ada <b>', 'Smith/Jones', 'ada@home', 'Ada 🙂', 'Ada\nLovelace', ''])
    assert.ok(!matches(NAME_PATTERN, bad), JSON.stringify(bad));
});

test('address pattern: also slashes; postcode pattern unchanged (upper case)', () => {
  for (const ok of ['Kerkstraat 12/3', 'ul. Długa 5', 'Rue de l’Église'.replace('’', "'"), 'Calle 5º', '#12 (rear)'])
    assert.ok(matches(ADDRESS_PATTERN, ok), ok);
  for (const bad of ['Damrak 1\nApt 4', '<script>', 'Damrak 1 | 2']) assert.ok(!matches(ADDRESS_PATTERN, bad), JSON.stringify(bad));
  assert.ok(matches(POSTAL_CODE_PATTERN, '1012 LG'));
  assert.ok(!matches(POSTAL_CODE_PATTERN, '1012 lg'));
});

test('normaliseSpace: line breaks and runs of white space become one space, ends trimmed', () => {
  assert.equal(normaliseSpace('  Damrak 1\r\n\tApt  4 '), 'Damrak 1 Apt 4');
  assert.equal(normaliseSpace('\u00a0Den\u2003Haag'), 'Den Haag');
});

test('normaliseCustomer: text, postcode case, empty phone numbers, additional addresses; anything else as it is', () => {
  assert.deepEqual(
    normaliseCustomer({
      first_name: ' Ada ',
      city: 'Den\nHaag',
      postal_code: '1012 lg',
      phone_numbers: ['', '+31 20 123', ' '],
      email_address: ' kept@example.com',
      additional_addresses: [{ address: 'A\nB', postal_code: 'ab1', street: ' S ' }, 'not an object'],
    }),
    {
      first_name: 'Ada',
      city: 'Den Haag',
      postal_code: '1012 LG',
      phone_numbers: ['+31 20 123'],
      email_address: ' kept@example.com',
      additional_addresses: [{ address: 'A B', postal_code: 'AB1', street: 'S' }, 'not an object'],
    },
  );
  assert.deepEqual(normaliseCustomer({ phone_numbers: [''] }), {});
  assert.deepEqual(normaliseCustomer({ phone_numbers: [] }), {});
  assert.deepEqual(normaliseCustomer({ phone_numbers: [5, ''] }), { phone_numbers: [5] }, 'a wrong type is left for the schema to refuse');
  assert.equal(normaliseCustomer('Ada'), 'Ada');
  assert.deepEqual(normaliseCustomer(['x']), ['x']);
});

test("shapeBody: PHP's [] where the schema wants an object, nowhere else", () => {
  const body = {
    currency: 'EUR',
    amount: 1,
    extra: [],
    client: [],
    customer: [],
    transactions: [{ payment_method: 'credit-card', payment_method_details: [] }],
    order_lines: [],
  };
  assert.deepEqual(shapeBody(OrderInput, body), {
    ...body,
    extra: {},
    client: {},
    customer: {},
    transactions: [{ payment_method: 'credit-card', payment_method_details: {} }],
  });
  assert.deepEqual(shapeBody(OrderInput, { extra: { list: [] } }), { extra: { list: [] } }, "extra's members are the merchant's data");
  assert.deepEqual(shapeBody(OrderInput, { extra: [1] }), { extra: [1] }, 'a non-empty array is left for the schema to refuse');
  assert.deepEqual(shapeBody(OrderUpdate, { customer: { postal_code: 'ab1' }, transactions: [] }), {
    customer: { postal_code: 'AB1' },
    transactions: [],
  });
  assert.deepEqual(shapeBody(undefined, { a: [] }), { a: [] }, 'a route without a body schema');
});

test('unchanged: members left out, [] and {}, the one-time setup_token; anything else is a change', () => {
  const held = { a: 1, list: [{ id: 'x', details: {}, events: [1] }], empty: {} };
  assert.ok(unchanged(held, held));
  assert.ok(unchanged({ list: [{ id: 'x' }] }, held), 'members left out');
  assert.ok(unchanged({ list: [{ id: 'x', details: [] }], empty: [] }, held), '[] is {}');
  assert.ok(unchanged({ list: [{ id: 'x', details: { setup_token: 'u' } }] }, held), 'setup_token');
  assert.ok(unchanged([], undefined));
  assert.ok(!unchanged({ a: 2 }, held));
  assert.ok(!unchanged({ b: 1 }, held), 'a member the service does not show');
  assert.ok(!unchanged({ list: [] }, held), 'an item removed');
  assert.ok(!unchanged({ list: [{ id: 'x' }, { id: 'y' }] }, held), 'an item added');
  assert.ok(!unchanged('1', 1), 'types are not coerced');
  assert.ok(!unchanged({ a: 1 }, 'string'));
});

test('customerMessage: declined and error only, by reason, in the language of the locale', () => {
  assert.equal(customerMessage('accepted', null, 'nl'), undefined);
  assert.equal(customerMessage('new', null, 'nl'), undefined);
  assert.match(customerMessage('declined', 'declined', 'nl_NL')!, /^Je betaling is geweigerd/);
  assert.match(customerMessage('declined', 'insufficient_funds', 'en')!, /^Your payment was declined/);
  assert.match(customerMessage('declined', 'expired_card', 'de-DE')!, /^Ihre Karte/);
  assert.match(customerMessage('declined', 'authentication_failed', 'fr')!, /banque/);
  assert.match(customerMessage('error', 'processing_error', 'NL')!, /^Je betaling kon niet worden voltooid/);
  assert.match(customerMessage('error', null, undefined)!, /^Your payment could not be completed/);
  assert.equal(messageLocale('pt-BR'), 'en');
  assert.equal(messageLocale(42), 'en');
});

test('parseMethodAliases: alias=method pairs; each mistake stops with the entry named', () => {
  assert.deepEqual(parseMethodAliases(undefined), {});
  assert.deepEqual(parseMethodAliases(' apple-pay = wallet-a-pay ,google-pay=wallet-b-pay,'), {
    'apple-pay': 'wallet-a-pay',
    'google-pay': 'wallet-b-pay',
  });
  const bad: Array<[string, RegExp]> = [
    ['apple-pay', /"apple-pay" is not alias=method/],
    ['a=b=c', /"a=b=c" is not alias=method/],
    ['=wallet-a-pay', /is not alias=method/],
    ['Apple Pay=wallet-a-pay', /alias "Apple Pay" must be/],
    ['credit-card=wallet-a-pay', /"credit-card" is already a payment method/],
    ['tikkie=bank', /"bank" is not a payment method/],
    ['ideal=wallet-a-pay', /"ideal" is already a payment method/],
    ['x=wallet-a-pay,x=wallet-b-pay', /alias "x" is given twice/],
  ];
  for (const [setting, message] of bad) assert.throws(() => parseMethodAliases(setting), message, setting);
  assert.throws(() => loadConfig({ PAYMENT_METHOD_ALIASES: 'ideal=bank' }), /PAYMENT_METHOD_ALIASES/);
  assert.deepEqual(loadConfig({}).paymentMethodAliases, {});
  assert.equal(resolveMethod({ 'apple-pay': 'wallet-a-pay' }, 'apple-pay'), 'wallet-a-pay');
  assert.equal(resolveMethod({ 'apple-pay': 'wallet-a-pay' }, 'credit-card'), 'credit-card');
  assert.equal(resolveMethod({}, 'constructor'), 'constructor', 'no inherited members');
});

test('a wallet sheet takes the billing names and addresses the order takes (Unicode letters, hyphens, /)', async () => {
  const { checkBilling } = await import('../../src/services/wallets/pay.ts');
  const body = {
    first_name: 'Anne-Marie',
    last_name: 'Wałęsa',
    address: 'Dvořákova 12/3',
    postal_code: '1012 lg',
    city: 'Nguyễn',
    country: 'NL',
  };
  const r = checkBilling(['first_name', 'last_name', 'address', 'postal_code', 'city', 'country'], body);
  assert.deepEqual(r.errors, {});
  assert.equal(r.billing?.postal_code, '1012 LG');
  assert.deepEqual(checkBilling(['first_name'], { first_name: 'Ada <b>' }).errors, { first_name: 'billing_format' });
});
