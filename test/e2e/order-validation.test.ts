// Acceptance of the orders API's validation: every rule of the spec's Order, Transaction,
// Customer and payment_method_details tables, the General types and docs/design.md "Values"
// and "Unknown fields". Each broken rule is a 400 ValidationError naming the field, and stores nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { validOrder, cardOrder, basic, request, type TestService, type ApiResponse } from '../helpers/service.ts';
import { expectRejectedIn, limitedProject, ordersService, stored, type Expect } from '../helpers/rejects.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
/** A test project whose settings deactivate wallet-a-pay and limit credit-card to EUR. */
let limited: Awaited<ReturnType<typeof limitedProject>>;
before(async () => ({ t, limited } = await ordersService()));
after(async () => t?.close());

const expectRejected = (call: () => Promise<ApiResponse>, e: Expect) => expectRejectedIn(t.db, call, e);
const rejectsOrder = async (body: unknown, e: Expect, key?: string) => {
  await expectRejected(() => t.api('POST', '/v1/orders/', body, { key }), e);
};

/** validOrder with one customer field replaced (undefined removes it). */
function withCustomer(over: Record<string, unknown>) {
  const o = validOrder() as Json;
  o.customer = { ...o.customer, ...over };
  for (const k of Object.keys(over)) if (over[k] === undefined) delete o.customer[k];
  return o;
}
function without(field: string) {
  const o = validOrder() as Json;
  delete o[field];
  return o;
}
const long = (n: number, c = 'a') => c.repeat(n);

// ---- General types and Order fields -------------------------------------------------------

const orderCases: Array<[name: string, body: unknown, field: string]> = [
  ['currency missing', without('currency'), 'currency'],
  ['currency null (null means absent, and currency is required)', validOrder({ currency: null }), 'currency'],
  ['currency lowercase', validOrder({ currency: 'eur' }), 'currency'],
  ['currency not ISO 4217 (ABC)', validOrder({ currency: 'ABC' }), 'currency'],
  ['currency a precious metal (XAU)', validOrder({ currency: 'XAU' }), 'currency'],
  ['currency the ISO test code (XTS)', validOrder({ currency: 'XTS' }), 'currency'],
  ['currency of four letters', validOrder({ currency: 'EURO' }), 'currency'],
  ['currency a number', validOrder({ currency: 978 }), 'currency'],
  ['amount missing', without('amount'), 'amount'],
  ['amount negative', validOrder({ amount: -1 }), 'amount'],
  ['amount fractional', validOrder({ amount: 19.95 }), 'amount'],
  ['amount a numeric string', validOrder({ amount: '1995' }), 'amount'],
  ['amount a boolean', validOrder({ amount: true }), 'amount'],
  ['amount above 2^53-1', validOrder({ amount: 2 ** 53 }), 'amount'],
  ['amount 1e300', validOrder({ amount: 1e300 }), 'amount'],
  ['expiration_period not a duration', validOrder({ expiration_period: 'thirty minutes' }), 'expiration_period'],
  ['expiration_period zero (PT0S)', validOrder({ expiration_period: 'PT0S' }), 'expiration_period'],
  ['expiration_period zero (P0D)', validOrder({ expiration_period: 'P0D' }), 'expiration_period'],
  ['expiration_period negative (-PT30M)', validOrder({ expiration_period: '-PT30M' }), 'expiration_period'],
  ['expiration_period a bare P', validOrder({ expiration_period: 'P' }), 'expiration_period'],
  ['expiration_period a number', validOrder({ expiration_period: 1800 }), 'expiration_period'],
  ['expiration_period with text before it', validOrder({ expiration_period: 'xPT30M' }), 'expiration_period'],
  ['expiration_period with a trailing space', validOrder({ expiration_period: 'PT30M ' }), 'expiration_period'],
  ['expiration_period with a T and no time', validOrder({ expiration_period: 'P1DT' }), 'expiration_period'],
  ['expiration_period in lowercase', validOrder({ expiration_period: 'pt30m' }), 'expiration_period'],
  ['merchant_order_id not a string', validOrder({ merchant_order_id: 1001 }), 'merchant_order_id'],
  ['merchant_name not a string', validOrder({ merchant_name: { name: 'x' } }), 'merchant_name'],
  ['description not a string', validOrder({ description: ['Two mugs'] }), 'description'],
  ['payment_methods not an array', validOrder({ payment_methods: 'credit-card' }), 'payment_methods'],
  ['payment_methods with an unknown method', validOrder({ payment_methods: ['credit-card', 'bitcoin'] }), 'payment_methods[1]'],
  ['payment_methods with a null item', validOrder({ payment_methods: [null] }), 'payment_methods[0]'],
  ['payment_methods with a duplicate', validOrder({ payment_methods: ['credit-card', 'credit-card'] }), 'payment_methods'],
  ['client not an object', validOrder({ client: 'woocommerce' }), 'client'],
  ['extra not an object', validOrder({ extra: 'note' }), 'extra'],
  ['order_lines not an array', validOrder({ order_lines: { name: 'mug' } }), 'order_lines'],
  ['unknown top-level field (a typo of amount)', validOrder({ amout: 1995 }), 'amout'],
  ['unknown top-level field (status is read-only)', validOrder({ status: 'completed' }), 'status'],
  ['unknown top-level field (id is read-only)', validOrder({ id: '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11' }), 'id'],
];
for (const field of ['return_url', 'failure_url', 'webhook_url']) {
  orderCases.push(
    [`${field} not a uri`, validOrder({ [field]: 'not a uri' }), field],
    [`${field} with a javascript: scheme`, validOrder({ [field]: 'javascript:alert(1)' }), field],
    [`${field} with a data: scheme`, validOrder({ [field]: 'data:text/html,<b>hi</b>' }), field],
    [`${field} relative`, validOrder({ [field]: '/return' }), field],
    [`${field} not a string`, validOrder({ [field]: 42 }), field],
  );
}
for (const [name, body, field] of orderCases) {
  test(`order: ${name} -> 400 ValidationError on ${field}`, () => rejectsOrder(body, { field }));
}

// ---- Transactions -------------------------------------------------------------------------

const txnCases: Array<[name: string, body: unknown, field: string]> = [
  ['transactions not an array', validOrder({ transactions: { payment_method: 'credit-card' } }), 'transactions'],
  [
    'two transactions',
    validOrder({ transactions: [{ payment_method: 'credit-card' }, { payment_method: 'credit-card' }] }),
    'transactions',
  ],
  ['a transaction without payment_method', validOrder({ transactions: [{ capture_mode: 'manual' }] }), 'transactions[0].payment_method'],
  ['a transaction that is not an object', validOrder({ transactions: ['credit-card'] }), 'transactions[0]'],
  ['payment_method unknown', cardOrder({}, { payment_method: 'bitcoin' }), 'transactions[0].payment_method'],
  ['payment_method empty', cardOrder({}, { payment_method: '' }), 'transactions[0].payment_method'],
  ['capture_mode not manual or delayed', cardOrder({}, { capture_mode: 'auto' }), 'transactions[0].capture_mode'],
  ['capture_mode in capitals', cardOrder({}, { capture_mode: 'MANUAL' }), 'transactions[0].capture_mode'],
  ['transaction_type not aft', cardOrder({}, { transaction_type: 'payout' }), 'transactions[0].transaction_type'],
  ['transaction expiration_period not a duration', cardOrder({}, { expiration_period: 'soon' }), 'transactions[0].expiration_period'],
  ['transaction expiration_period zero', cardOrder({}, { expiration_period: 'PT0S' }), 'transactions[0].expiration_period'],
  ['transaction expiration_period negative', cardOrder({}, { expiration_period: '-P1D' }), 'transactions[0].expiration_period'],
  [
    'receiver_account_number of 51 characters',
    cardOrder({}, { payment_method_details: { receiver_account_number: long(51, '1'), receiver_account_number_type: 'card-account' } }),
    'transactions[0].payment_method_details.receiver_account_number',
  ],
  [
    'receiver_account_number empty',
    cardOrder({}, { payment_method_details: { receiver_account_number: '', receiver_account_number_type: 'card-account' } }),
    'transactions[0].payment_method_details.receiver_account_number',
  ],
  [
    'receiver_account_number not a string',
    cardOrder({}, { payment_method_details: { receiver_account_number: 4111111111111111 } }),
    'transactions[0].payment_method_details.receiver_account_number',
  ],
  [
    'receiver_account_number_type unknown',
    cardOrder({}, { payment_method_details: { receiver_account_number: 'NL91ABNA0417164300', receiver_account_number_type: 'bank' } }),
    'transactions[0].payment_method_details.receiver_account_number_type',
  ],
  [
    'payment_method_details with a read-only field (setup_token)',
    cardOrder({}, { payment_method_details: { setup_token: '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11' } }),
    'transactions[0].payment_method_details.setup_token',
  ],
  ['payment_method_details not an object', cardOrder({}, { payment_method_details: 'x' }), 'transactions[0].payment_method_details'],
  ['unknown field in a transaction', cardOrder({}, { amount: 10 }), 'transactions[0].amount'],
];
for (const [name, body, field] of txnCases) {
  test(`transaction: ${name} -> 400 ValidationError on ${field}`, () => rejectsOrder(body, { field }));
}

test('length limit: receiver_account_number of exactly 50 characters is accepted', async () => {
  const res = await t.api(
    'POST',
    '/v1/orders/',
    cardOrder({}, { payment_method_details: { receiver_account_number: long(50, '1'), receiver_account_number_type: 'card-account' } }),
  );
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.transactions[0].payment_method_details.receiver_account_number, long(50, '1'));
  assert.equal(res.body.transactions[0].payment_method_details.receiver_account_number_type, 'card-account');
});

// ---- Payment methods active in the project ------------------------------------------------

test('payment_methods: a known method inactive in the project -> 403 Forbidden', () =>
  rejectsOrder(
    validOrder({ payment_methods: ['credit-card', 'wallet-a-pay'] }),
    { status: 403, type: 'Forbidden', field: 'payment_methods[1]' },
    limited.api_key,
  ));

test('transaction: a known payment_method inactive in the project -> 403 Forbidden', () =>
  rejectsOrder(
    cardOrder({}, { payment_method: 'wallet-a-pay' }),
    { status: 403, type: 'Forbidden', field: 'transactions[0].payment_method' },
    limited.api_key,
  ));

test('transaction: a currency the payment method does not accept in the project -> 403 Forbidden', () =>
  rejectsOrder(
    cardOrder({ currency: 'USD' }),
    { status: 403, type: 'Forbidden', field: 'transactions[0].payment_method' },
    limited.api_key,
  ));

test('payment_methods: an unknown method is a 400 even where some methods are inactive', () =>
  rejectsOrder(validOrder({ payment_methods: ['bitcoin'] }), { field: 'payment_methods[0]' }, limited.api_key));

test('the project with wallet-a-pay inactive still takes the methods it has', async () => {
  const res = await t.api('POST', '/v1/orders/', validOrder({ payment_methods: ['credit-card', 'wallet-b-pay'] }), {
    key: limited.api_key,
  });
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.payment_methods, ['credit-card', 'wallet-b-pay']);
  const p = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: limited.api_key });
  assert.deepEqual(p.body.payment_methods, ['credit-card', 'wallet-b-pay']);
  const c = await t.api('GET', '/v1/merchants/self/projects/self/currencies/', undefined, { key: limited.api_key });
  assert.deepEqual(Object.keys(c.body.payment_methods), ['credit-card', 'wallet-b-pay']);
  assert.deepEqual(c.body.payment_methods['credit-card'].currencies, ['EUR']);
});

// ---- Customer ------------------------------------------------------------------------------

const customerCases: Array<[name: string, over: Record<string, unknown>, field: string]> = [];
for (const f of ['first_name', 'last_name', 'address', 'city']) {
  customerCases.push(
    [`${f} empty`, { [f]: '' }, `customer.${f}`],
    [`${f} of 121 characters`, { [f]: long(121) }, `customer.${f}`],
    [`${f} with a character outside the pattern (<)`, { [f]: 'Ada <script>' }, `customer.${f}`],
    [`${f} with a character outside the pattern (@)`, { [f]: 'ada@home' }, `customer.${f}`],
    [`${f} not a string`, { [f]: 7 }, `customer.${f}`],
  );
}
// White space is normalised before the pattern: nothing but spaces and line breaks is empty.
customerCases.push(['first_name of white space only', { first_name: ' \n\t ' }, 'customer.first_name']);
customerCases.push(
  ['postal_code of 11 characters', { postal_code: '12345678901' }, 'customer.postal_code'],
  ['postal_code empty', { postal_code: '' }, 'customer.postal_code'],
  ['postal_code with a hyphen', { postal_code: '1012-LG' }, 'customer.postal_code'],
  ['postal_code with two spaces', { postal_code: '1012 L G' }, 'customer.postal_code'],
  ['postal_code starting with a space', { postal_code: ' 1012' }, 'customer.postal_code'],
  ['state missing when country is US', { country: 'US', state: undefined }, 'customer.state'],
  ['state missing when country is CA', { country: 'CA', state: undefined }, 'customer.state'],
  ['state not a US state', { country: 'US', state: 'ON' }, 'customer.state'],
  ['state not a CA state', { country: 'CA', state: 'NY' }, 'customer.state'],
  ['state lowercase', { country: 'US', state: 'ny' }, 'customer.state'],
  ['state of three letters', { country: 'US', state: 'NYC' }, 'customer.state'],
  ['country not ISO 3166-1 (XX)', { country: 'XX' }, 'customer.country'],
  ['country lowercase', { country: 'nl' }, 'customer.country'],
  ['country alpha-3', { country: 'NLD' }, 'customer.country'],
  ['address_type not billing', { address_type: 'shipping' }, 'customer.address_type'],
  ['email_address invalid', { email_address: 'not-an-email' }, 'customer.email_address'],
  ['email_address without domain', { email_address: 'ada@' }, 'customer.email_address'],
  ['phone_numbers not an array', { phone_numbers: '+31201234567' }, 'customer.phone_numbers'],
  ['phone_numbers with letters', { phone_numbers: ['call me'] }, 'customer.phone_numbers[0]'],
  ['ip_address with a space', { ip_address: '10.0.0.1 proxy' }, 'customer.ip_address'],
  ['locale not a language tag', { locale: 'dutch please' }, 'customer.locale'],
  ['birthdate not a date', { birthdate: 'yesterday' }, 'customer.birthdate'],
  ['additional_addresses not an array', { additional_addresses: { city: 'Utrecht' } }, 'customer.additional_addresses'],
  ['merchant_customer_id not a string', { merchant_customer_id: 42 }, 'customer.merchant_customer_id'],
  ['unknown nested field', { favourite_colour: 'blue' }, 'customer.favourite_colour'],
);
for (const [name, over, field] of customerCases) {
  test(`customer: ${name} -> 400 ValidationError on ${field}`, () => rejectsOrder(withCustomer(over), { field }));
}
test('customer: not an object -> 400 ValidationError on customer', () =>
  rejectsOrder(validOrder({ customer: 'Ada' }), { field: 'customer' }));
test('client: unknown nested field -> 400 ValidationError naming it', () =>
  rejectsOrder(validOrder({ client: { platform_name: 'shop', os: 'linux' } }), { field: 'client.os' }));

test('customer: boundaries and patterns that are allowed', async () => {
  const ok = withCustomer({
    first_name: 'Zoë Anne',
    last_name: long(120, 'é'),
    address: "Rue de l'Église 12, bât. B",
    city: 'Saint-Étienne',
    postal_code: 'A1B2C3D4E5',
    country: 'CA',
    state: 'QC',
    phone_numbers: ['+31 20 123 4567'],
    ip_address: '2001:db8::1',
  });
  const res = await t.api('POST', '/v1/orders/', ok);
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.customer.last_name, long(120, 'é'));
  assert.equal(res.body.customer.state, 'QC');
  for (const pc of ['1012', '1012 LG', 'SW1A 1AA', 'A']) {
    const r = await t.api('POST', '/v1/orders/', withCustomer({ postal_code: pc }));
    assert.equal(r.status, 201, `${pc}: ${r.text}`);
  }
  const us = await t.api('POST', '/v1/orders/', withCustomer({ country: 'US', state: 'NY' }));
  assert.equal(us.status, 201, us.text);
  const noCountry = await t.api('POST', '/v1/orders/', withCustomer({ country: undefined, state: 'ZZ' }));
  assert.equal(noCountry.status, 201, 'state is free-form where the country has no list');
});

// ---- AFT: missing information is a 422 ---------------------------------------------------

const receiver = { receiver_account_number: '4111111111111111', receiver_account_number_type: 'card-account' };

test('AFT without receiver -> 422 MissingInformationToCreateTransaction', () =>
  rejectsOrder(cardOrder({}, { transaction_type: 'aft' }), {
    status: 422,
    type: 'MissingInformationToCreateTransaction',
    field: 'transactions[0].payment_method_details.receiver_account_number',
  }));

test('AFT without receiver_account_number_type -> 422', () =>
  rejectsOrder(cardOrder({}, { transaction_type: 'aft', payment_method_details: { receiver_account_number: '4111111111111111' } }), {
    status: 422,
    type: 'MissingInformationToCreateTransaction',
    field: 'transactions[0].payment_method_details.receiver_account_number_type',
  }));

test('AFT without customer -> 422 naming the first billing field', () =>
  rejectsOrder(cardOrder({ customer: undefined }, { transaction_type: 'aft', payment_method_details: receiver }), {
    status: 422,
    type: 'MissingInformationToCreateTransaction',
    field: 'customer.first_name',
  }));

for (const f of ['first_name', 'last_name', 'address_type', 'address', 'postal_code', 'city', 'country']) {
  test(`AFT with billing address missing ${f} -> 422`, () => {
    const body = withCustomer({ [f]: undefined });
    body.transactions = [{ payment_method: 'credit-card', transaction_type: 'aft', payment_method_details: receiver }];
    return rejectsOrder(body, { status: 422, type: 'MissingInformationToCreateTransaction', field: `customer.${f}` });
  });
}

test('AFT with receiver and complete billing address is created', async () => {
  const res = await t.api('POST', '/v1/orders/', cardOrder({}, { transaction_type: 'aft', payment_method_details: receiver }));
  assert.equal(res.status, 201, res.text);
  const [txn] = res.body.transactions;
  assert.equal(txn.transaction_type, 'aft');
  assert.equal(txn.payment_method_details.receiver_account_number, receiver.receiver_account_number);
});

test('an unknown field is named in the error value too', async () => {
  const res = await t.api('POST', '/v1/orders/', validOrder({ amout: 1995 }));
  assert.equal(res.status, 400);
  assert.match(res.body.error.value, /amout/);
  const nested = await t.api('POST', '/v1/orders/', withCustomer({ favourite_colour: 'blue' }));
  assert.match(nested.body.error.value, /customer\.favourite_colour/);
});

test('values: row ids are time-ordered UUIDs (v7), the setup_token a random one (v4), timestamps ISO 8601 with an offset', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const uuid = (version: number) => new RegExp(`^[0-9a-f]{8}-[0-9a-f]{4}-${version}[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);
  const ts = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  const txn = o.transactions[0];
  for (const id of [o.id, txn.id, txn.events[0].id]) assert.match(id, uuid(7));
  assert.match(txn.payment_method_details.setup_token, uuid(4));
  for (const time of [o.created, o.modified, txn.created, txn.events[0].occurred, txn.events[0].noticed]) assert.match(time, ts);
  assert.ok(!Number.isNaN(Date.parse(o.created)));
});

test('amounts are whole minor units in every exponent (JPY 0, EUR 2, KWD 3), up to 2^53-1', async () => {
  for (const [currency, amount] of [
    ['JPY', 1995],
    ['KWD', 1995],
    ['EUR', 0],
    ['EUR', Number.MAX_SAFE_INTEGER],
  ] as const) {
    const res = await t.api('POST', '/v1/orders/', cardOrder({ currency, amount }));
    assert.equal(res.status, 201, `${currency} ${amount}: ${res.text}`);
    assert.equal(res.body.amount, amount);
    assert.equal(res.body.transactions[0].amount, amount);
    assert.equal((await t.api('GET', `/v1/orders/${res.body.id}/`)).body.amount, amount, 'read back exactly');
  }
});

// ---- Extension fields, nulls --------------------------------------------------------------

test('SDK extension fields are accepted and returned', async () => {
  const body = validOrder({
    order_lines: [{ name: 'Mug', quantity: 2, amount: 995, vat: { rate: 21 } }],
    client: {
      user_agent: 'php-sdk/2.1',
      platform_name: 'WooCommerce',
      platform_version: '8.2',
      plugin_name: 'tender-woo',
      plugin_version: '1.4.0',
    },
    extra: { cart_id: 'c-9', nested: { deep: [1, 2, null] }, nothing: null },
  }) as Json;
  Object.assign(body.customer, {
    gender: 'female',
    birthdate: '1815-12-10',
    additional_addresses: [{ address_type: 'delivery', address: 'Kalverstraat 2', city: 'Amsterdam' }],
    user_agent: 'Mozilla/5.0',
  });
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const got = await t.api('GET', `/v1/orders/${res.body.id}/`);
  for (const view of [res.body, got.body]) {
    assert.deepEqual(view.order_lines, body.order_lines);
    assert.deepEqual(view.client, body.client);
    assert.deepEqual(view.extra, body.extra, "null inside extra is the merchant's data and is kept");
    assert.equal(view.customer.gender, 'female');
    assert.equal(view.customer.birthdate, '1815-12-10');
    assert.deepEqual(view.customer.additional_addresses, body.customer.additional_addresses);
    assert.equal(view.customer.user_agent, 'Mozilla/5.0');
  }
});

test('null optional fields are treated as absent', async () => {
  const body = validOrder({
    description: null,
    merchant_name: null,
    expiration_period: null,
    return_url: null,
    failure_url: null,
    webhook_url: null,
    payment_methods: null,
    transactions: null,
    client: null,
    order_lines: null,
  }) as Json;
  Object.assign(body.customer, { state: null, phone_numbers: null, ip_address: null, gender: null });
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const o = res.body;
  for (const f of [
    'description',
    'merchant_name',
    'return_url',
    'failure_url',
    'webhook_url',
    'client',
    'order_lines',
    'payment_methods',
  ]) {
    assert.equal(o[f], undefined, `${f} absent`);
  }
  assert.equal(o.customer.state, undefined);
  assert.ok(o.order_url, 'transactions null means no transaction: order_url is present');
  assert.deepEqual(o.transactions, []);
  const txn = await t.api(
    'POST',
    '/v1/orders/',
    cardOrder({}, { capture_mode: null, expiration_period: null, transaction_type: null, payment_method_details: null }),
  );
  assert.equal(txn.status, 201, txn.text);
  assert.equal(txn.body.transactions[0].expiration_period, 'PT30M');
  assert.equal(txn.body.transactions[0].capture_mode, undefined);
});

test('a required transaction field that is null is missing', () =>
  rejectsOrder(cardOrder({}, { payment_method: null }), { field: 'transactions[0].payment_method' }));

// ---- Body that is not a JSON object ------------------------------------------------------

const bodyCases: Array<[name: string, raw: string | undefined, contentType: string | undefined, status?: number]> = [
  ['malformed JSON', '{"currency": "EUR",', 'application/json'],
  ['JSON with a trailing comma', '{"currency": "EUR", "amount": 100,}', 'application/json'],
  ['empty body with a JSON content type', '', 'application/json'],
  ['no body at all', undefined, undefined],
  ['a JSON array', '[{"currency": "EUR", "amount": 100}]', 'application/json'],
  ['a JSON string', '"EUR 1.00"', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['a text/plain body', '{"currency": "EUR", "amount": 100}', 'text/plain', 415],
  ['an XML body', '<order><currency>EUR</currency></order>', 'application/xml', 415],
  ['a form-encoded body', 'currency=EUR&amount=100', 'application/x-www-form-urlencoded', 415],
];
for (const [name, raw, contentType, status = 400] of bodyCases) {
  test(`body: ${name} -> ${status} ValidationError`, async () => {
    const before = await stored(t.db);
    const headers: Record<string, string> = { authorization: basic(t.project.api_key) };
    if (contentType) headers['content-type'] = contentType;
    const res = await request(`${t.url}/v1/orders/`, 'POST', undefined, headers, raw);
    assert.equal(res.status, status, res.text);
    assert.equal(res.body.error.type, 'ValidationError', res.text);
    assert.equal(res.body.error.status, status);
    assert.equal(typeof res.body.error.value, 'string');
    assert.deepEqual(await stored(t.db), before);
  });
}
