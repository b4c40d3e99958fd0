// Acceptance of the orders API's validation: every rule of the spec's Order, Transaction,
// Customer and payment_method_details tables, the General types and DESIGN's "Values" and
// "Unknown fields". Each broken rule is a 400 ValidationError naming the field, and stores nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, cardOrder, basic, request, type TestService, type ApiResponse } from '../helpers/service.ts';
import { rotateKey } from '../../src/services/tenancy.ts';
import { moveTransaction } from '../../src/services/transitions.ts';
import * as orders from '../../src/store/orders.ts';

let t: TestService;
/** A test project whose settings deactivate wallet-a-pay and limit credit-card to EUR. */
let limited: { project_id: string; api_key: string };

before(async () => {
  t = await startTestService();
  limited = await t.newProject('test');
  const [row] = await t.db.query<{ settings: any }>('SELECT settings FROM projects WHERE id = $1', [limited.project_id]);
  const settings = row.settings;
  delete settings.payment_methods['wallet-a-pay'];
  settings.payment_methods['credit-card'] = { currencies: ['EUR'] };
  await t.db.query('UPDATE projects SET settings = $2 WHERE id = $1', [limited.project_id, JSON.stringify(settings)]);
});
after(async () => t?.close());

/** Rows a rejected request must not have added, in every project. */
async function stored() {
  const [r] = await t.db.query<{ orders: number; transactions: number; events: number; jobs: number }>(
    `SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM transactions) AS transactions,
            (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM jobs) AS jobs`,
  );
  return r;
}

interface Expect {
  status?: number;
  type?: string;
  /** the `field` the error names; null when the error concerns the whole body */
  field: string | null;
}

async function expectRejected(call: () => Promise<ApiResponse>, e: Expect) {
  const status = e.status ?? 400;
  const type = e.type ?? 'ValidationError';
  const before = await stored();
  const res = await call();
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('content-type')?.split(';')[0], 'application/json');
  assert.equal(res.body.error.status, status, res.text);
  assert.equal(res.body.error.type, type, res.text);
  assert.equal(typeof res.body.error.value, 'string');
  assert.ok(res.body.error.value.length > 0);
  if (e.field === null) assert.equal(res.body.error.field, undefined, res.text);
  else assert.equal(res.body.error.field, e.field, res.text);
  assert.deepEqual(await stored(), before, 'a rejected request stored nothing');
  return res;
}

const rejectsOrder = async (body: unknown, e: Expect, key?: string) => {
  await expectRejected(() => t.api('POST', '/v1/orders/', body, { key }), e);
};

/** validOrder with one customer field replaced (undefined removes it). */
function withCustomer(over: Record<string, unknown>) {
  const o = validOrder() as any;
  o.customer = { ...o.customer, ...over };
  for (const k of Object.keys(over)) if (over[k] === undefined) delete o.customer[k];
  return o;
}
function without(field: string) {
  const o = validOrder() as any;
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
  const res = await t.api('POST', '/v1/orders/', cardOrder({}, { payment_method_details: { receiver_account_number: long(50, '1'), receiver_account_number_type: 'card-account' } }));
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.transactions[0].payment_method_details.receiver_account_number, long(50, '1'));
  assert.equal(res.body.transactions[0].payment_method_details.receiver_account_number_type, 'card-account');
});

// ---- Payment methods active in the project ------------------------------------------------

test('payment_methods: a known method inactive in the project -> 403 Forbidden', () =>
  rejectsOrder(validOrder({ payment_methods: ['credit-card', 'wallet-a-pay'] }), { status: 403, type: 'Forbidden', field: 'payment_methods[1]' }, limited.api_key));

test('transaction: a known payment_method inactive in the project -> 403 Forbidden', () =>
  rejectsOrder(cardOrder({}, { payment_method: 'wallet-a-pay' }), { status: 403, type: 'Forbidden', field: 'transactions[0].payment_method' }, limited.api_key));

test('transaction: a currency the payment method does not accept in the project -> 403 Forbidden', () =>
  rejectsOrder(cardOrder({ currency: 'USD' }), { status: 403, type: 'Forbidden', field: 'transactions[0].payment_method' }, limited.api_key));

test('payment_methods: an unknown method is a 400 even where some methods are inactive', () =>
  rejectsOrder(validOrder({ payment_methods: ['bitcoin'] }), { field: 'payment_methods[0]' }, limited.api_key));

test('the project with wallet-a-pay inactive still takes the methods it has', async () => {
  const res = await t.api('POST', '/v1/orders/', validOrder({ payment_methods: ['credit-card', 'wallet-b-pay'] }), { key: limited.api_key });
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
// The spec's name pattern (unlike the address pattern) has no hyphen: ` -,` is the range space..comma.
customerCases.push(['first_name with a hyphen (outside the spec name pattern)', { first_name: 'Jean-Luc' }, 'customer.first_name']);
customerCases.push(
  ['postal_code lowercase', { postal_code: '1012 lg' }, 'customer.postal_code'],
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
  ['ip_address not an IP', { ip_address: 'localhost' }, 'customer.ip_address'],
  ['locale not a language tag', { locale: 'dutch please' }, 'customer.locale'],
  ['birthdate not a date', { birthdate: 'yesterday' }, 'customer.birthdate'],
  ['additional_addresses not an array', { additional_addresses: { city: 'Utrecht' } }, 'customer.additional_addresses'],
  ['merchant_customer_id not a string', { merchant_customer_id: 42 }, 'customer.merchant_customer_id'],
  ['unknown nested field', { favourite_colour: 'blue' }, 'customer.favourite_colour'],
);
for (const [name, over, field] of customerCases) {
  test(`customer: ${name} -> 400 ValidationError on ${field}`, () => rejectsOrder(withCustomer(over), { field }));
}
test('customer: not an object -> 400 ValidationError on customer', () => rejectsOrder(validOrder({ customer: 'Ada' }), { field: 'customer' }));
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

test('values: ids are UUID v4 and timestamps ISO 8601 with an offset', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const ts = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  const txn = o.transactions[0];
  for (const id of [o.id, txn.id, txn.events[0].id, txn.payment_method_details.setup_token]) assert.match(id, v4);
  for (const time of [o.created, o.modified, txn.created, txn.events[0].occurred, txn.events[0].noticed]) assert.match(time, ts);
  assert.ok(!Number.isNaN(Date.parse(o.created)));
});

test('amounts are whole minor units in every exponent (JPY 0, EUR 2, KWD 3), up to 2^53-1', async () => {
  for (const [currency, amount] of [['JPY', 1995], ['KWD', 1995], ['EUR', 0], ['EUR', Number.MAX_SAFE_INTEGER]] as const) {
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
    client: { user_agent: 'php-sdk/2.1', platform_name: 'WooCommerce', platform_version: '8.2', plugin_name: 'tender-woo', plugin_version: '1.4.0' },
    extra: { cart_id: 'c-9', nested: { deep: [1, 2, null] }, nothing: null },
  }) as any;
  Object.assign(body.customer, {
    gender: 'female',
    birthdate: '1815-12-10',
    additional_addresses: [{ address_type: 'shipping', address: 'Kalverstraat 2', city: 'Amsterdam' }],
    user_agent: 'Mozilla/5.0',
  });
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const got = await t.api('GET', `/v1/orders/${res.body.id}/`);
  for (const view of [res.body, got.body]) {
    assert.deepEqual(view.order_lines, body.order_lines);
    assert.deepEqual(view.client, body.client);
    assert.deepEqual(view.extra, body.extra, 'null inside extra is the merchant\'s data and is kept');
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
  }) as any;
  Object.assign(body.customer, { state: null, phone_numbers: null, ip_address: null, gender: null });
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const o = res.body;
  for (const f of ['description', 'merchant_name', 'return_url', 'failure_url', 'webhook_url', 'client', 'order_lines', 'payment_methods']) {
    assert.equal(o[f], undefined, `${f} absent`);
  }
  assert.equal(o.customer.state, undefined);
  assert.ok(o.order_url, 'transactions null means no transaction: order_url is present');
  assert.deepEqual(o.transactions, []);
  const txn = await t.api('POST', '/v1/orders/', cardOrder({}, { capture_mode: null, expiration_period: null, transaction_type: null, payment_method_details: null }));
  assert.equal(txn.status, 201, txn.text);
  assert.equal(txn.body.transactions[0].expiration_period, 'PT30M');
  assert.equal(txn.body.transactions[0].capture_mode, undefined);
});

test('a required transaction field that is null is missing', () =>
  rejectsOrder(cardOrder({}, { payment_method: null }), { field: 'transactions[0].payment_method' }));

// ---- Body that is not a JSON object ------------------------------------------------------

const bodyCases: Array<[name: string, raw: string | undefined, contentType: string | undefined]> = [
  ['malformed JSON', '{"currency": "EUR",', 'application/json'],
  ['JSON with a trailing comma', '{"currency": "EUR", "amount": 100,}', 'application/json'],
  ['empty body with a JSON content type', '', 'application/json'],
  ['no body at all', undefined, undefined],
  ['a JSON array', '[{"currency": "EUR", "amount": 100}]', 'application/json'],
  ['a JSON string', '"EUR 1.00"', 'application/json'],
  ['JSON null', 'null', 'application/json'],
  ['a text/plain body', '{"currency": "EUR", "amount": 100}', 'text/plain'],
  ['an XML body', '<order><currency>EUR</currency></order>', 'application/xml'],
  ['a form-encoded body', 'currency=EUR&amount=100', 'application/x-www-form-urlencoded'],
];
for (const [name, raw, contentType] of bodyCases) {
  test(`body: ${name} -> 400 ValidationError`, async () => {
    const before = await stored();
    const headers: Record<string, string> = { authorization: basic(t.project.api_key) };
    if (contentType) headers['content-type'] = contentType;
    const res = await request(`${t.url}/v1/orders/`, 'POST', undefined, headers, raw);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.type, 'ValidationError', res.text);
    assert.equal(res.body.error.status, 400);
    assert.equal(typeof res.body.error.value, 'string');
    assert.deepEqual(await stored(), before);
  });
}

// ---- uuid path parameters ----------------------------------------------------------------

const badIds = ['not-a-uuid', '12345', '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e1', '3b0c4f6e2f574f3f9a556a5d3c1c9e11x', 'urn:uuid:3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11'];
const idRoutes: Array<[method: string, path: (id: string) => string, body?: unknown]> = [
  ['GET', (id) => `/v1/orders/${id}/`],
  ['PUT', (id) => `/v1/orders/${id}/`, { description: 'x' }],
  ['DELETE', (id) => `/v1/orders/${id}/`],
  ['POST', (id) => `/v1/orders/${id}/transactions/`, { payment_method: 'credit-card' }],
];
for (const [method, path, body] of idRoutes) {
  for (const id of badIds) {
    test(`path: ${method} ${path(':order_id')} with malformed id ${JSON.stringify(id)} -> 400 on order_id`, () =>
      expectRejected(() => t.api(method, path(encodeURIComponent(id)), body), { field: 'order_id' }).then(() => {}));
  }
  test(`path: ${method} ${path(':order_id')} with an unknown id -> 404 NotFound`, () =>
    expectRejected(() => t.api(method, path('3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11'), body), { status: 404, type: 'NotFound', field: null }).then(() => {}));
}

test('path: an order id in capitals finds the order', async () => {
  const o = await t.api('POST', '/v1/orders/', validOrder());
  const res = await t.api('GET', `/v1/orders/${o.body.id.toUpperCase()}/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.id, o.body.id);
});

// ---- PUT /v1/orders/{id}/ ----------------------------------------------------------------

test('PUT updates the merchant fields of an open order', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const update = {
    description: 'Three mugs',
    merchant_order_id: 'shop-1002',
    return_url: 'https://shop.example/r2',
    failure_url: 'https://shop.example/f2',
    webhook_url: 'https://shop.example/hook',
    extra: { note: 'gift' },
  };
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, update);
  assert.equal(res.status, 200, res.text);
  const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  for (const view of [res.body, got]) {
    for (const [k, v] of Object.entries(update)) assert.deepEqual(view[k], v, k);
    assert.equal(view.amount, o.amount);
    assert.equal(view.status, 'new');
    assert.equal(view.customer.email_address, 'ada@example.com');
  }
  assert.ok(got.modified >= o.modified);
  assert.equal(got.transactions[0].payment_method_details.setup_token, undefined, 'setup_token is shown only on creation');
});

test('PUT with an empty body changes nothing', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, {});
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.description, o.description);
  assert.equal(res.body.merchant_order_id, o.merchant_order_id);
});

const putCases: Array<[name: string, body: unknown, field: string]> = [
  ['a field that cannot change (amount)', { amount: 1 }, 'amount'],
  ['a field that cannot change (currency)', { currency: 'USD' }, 'currency'],
  ['a field that cannot change (customer)', { customer: { first_name: 'Eve' } }, 'customer'],
  ['an unknown field', { descripton: 'typo' }, 'descripton'],
  ['return_url with a javascript: scheme', { return_url: 'javascript:alert(1)' }, 'return_url'],
  ['webhook_url not a uri', { webhook_url: 'not a uri' }, 'webhook_url'],
  ['failure_url not a string', { failure_url: 1 }, 'failure_url'],
  ['description not a string', { description: 5 }, 'description'],
  ['extra not an object', { extra: [1] }, 'extra'],
];
for (const [name, body, field] of putCases) {
  test(`PUT: ${name} -> 400 ValidationError on ${field} and the order is unchanged`, async () => {
    const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
    await expectRejected(() => t.api('PUT', `/v1/orders/${o.id}/`, body), { field });
    const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
    assert.deepEqual(got, o);
  });
}

test('PUT: malformed JSON -> 400 ValidationError', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, undefined, { raw: '{"description": ' });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.type, 'ValidationError');
});

test('PUT on a final (cancelled) order -> 409 and nothing changes', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  assert.equal((await t.api('DELETE', `/v1/orders/${o.id}/`)).status, 200);
  const res = await t.api('PUT', `/v1/orders/${o.id}/`, { description: 'too late' });
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.error.status, 409);
  assert.equal((await t.api('GET', `/v1/orders/${o.id}/`)).body.description, o.description);
});

test("PUT, DELETE and start-transaction on another project's order -> 404", async () => {
  const other = await t.newProject();
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  for (const [method, path, body] of [
    ['PUT', `/v1/orders/${o.id}/`, { description: 'x' }],
    ['DELETE', `/v1/orders/${o.id}/`, undefined],
    ['POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card' }],
  ] as const) {
    await expectRejected(() => t.api(method, path, body, { key: other.api_key }), { status: 404, type: 'NotFound', field: null });
  }
  const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  assert.equal(got.status, 'new');
  assert.equal(got.description, o.description);
});

// ---- POST /v1/orders/{id}/transactions/ --------------------------------------------------

test('start a transaction on an order created without one; a second is TransactionAlreadyStarted', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card', capture_mode: 'manual', expiration_period: 'PT10M' });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.id, o.id);
  assert.equal(res.body.transactions.length, 1);
  const [txn] = res.body.transactions;
  assert.equal(txn.status, 'new');
  assert.equal(txn.capture_mode, 'manual');
  assert.equal(txn.expiration_period, 'PT10M');
  assert.equal(txn.amount, o.amount);
  assert.match(txn.payment_method_details.setup_token, /^[0-9a-f-]{36}$/);
  assert.equal(txn.payment_url, `${t.url}/pay/${o.id}/transactions/${txn.id}/`);
  const again = await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card' }), {
    status: 409,
    type: 'TransactionAlreadyStarted',
    field: null,
  });
  assert.match(again.body.error.value, /transaction/);
  const got = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  assert.equal(got.transactions.length, 1);
  assert.equal(got.transactions[0].payment_method_details.setup_token, undefined);
});

test('start a transaction on an order created with one -> 409 TransactionAlreadyStarted', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions`, { payment_method: 'credit-card' }), {
    status: 409,
    type: 'TransactionAlreadyStarted',
    field: null,
  });
});

const startCases: Array<[name: string, body: unknown, e: Expect]> = [
  ['no payment_method', { capture_mode: 'manual' }, { field: 'payment_method' }],
  ['an unknown payment_method', { payment_method: 'bitcoin' }, { field: 'payment_method' }],
  ['a bad capture_mode', { payment_method: 'credit-card', capture_mode: 'later' }, { field: 'capture_mode' }],
  ['a zero expiration_period', { payment_method: 'credit-card', expiration_period: 'PT0S' }, { field: 'expiration_period' }],
  ['an unknown field', { payment_method: 'credit-card', amount: 5 }, { field: 'amount' }],
  [
    'AFT without receiver',
    { payment_method: 'credit-card', transaction_type: 'aft' },
    { status: 422, type: 'MissingInformationToCreateTransaction', field: 'payment_method_details.receiver_account_number' },
  ],
];
for (const [name, body, e] of startCases) {
  test(`start a transaction with ${name} -> ${e.status ?? 400} on ${e.field}`, async () => {
    const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
    await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions/`, body), e);
    // the order can still start a valid one afterwards
    assert.equal((await t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'credit-card' })).status, 201);
  });
}

test('start a transaction with a method inactive in the project -> 403 Forbidden', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder(), { key: limited.api_key })).body;
  await expectRejected(() => t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'wallet-a-pay' }, { key: limited.api_key }), {
    status: 403,
    type: 'Forbidden',
    field: 'payment_method',
  });
});

// ---- DELETE /v1/orders/{id}/ -------------------------------------------------------------

test('DELETE cancels an order without a transaction', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const res = await t.api('DELETE', `/v1/orders/${o.id}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'cancelled');
  assert.ok(res.body.completed, 'a final order has its completed time');
});

test('DELETE cancels an order whose transaction is pending', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const txn = (await orders.findTransaction(t.db, t.project.project_id, o.id, o.transactions[0].id))!;
  await t.db.tx((q) => moveTransaction(q, txn, 'pending', new Date()));
  const res = await t.api('DELETE', `/v1/orders/${o.id}/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'cancelled');
  assert.deepEqual(res.body.transactions[0].events.map((e: any) => e.event), ['new', 'pending', 'cancelled']);
});

for (const status of ['processing', 'accepted', 'declined', 'expired'] as const) {
  test(`DELETE an order whose transaction is ${status} -> 409 CanNotCancelTransaction`, async () => {
    const o = (await t.api('POST', '/v1/orders/', cardOrder())).body;
    const txn = (await orders.findTransaction(t.db, t.project.project_id, o.id, o.transactions[0].id))!;
    await t.db.tx((q) => moveTransaction(q, txn, status, new Date()));
    const before = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
    const res = await t.api('DELETE', `/v1/orders/${o.id}/`);
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.type, 'CanNotCancelTransaction');
    assert.deepEqual((await t.api('GET', `/v1/orders/${o.id}/`)).body, before);
  });
}

// ---- Paths without trailing slash --------------------------------------------------------

test('every orders and project route answers without its trailing slash, with no redirect', async () => {
  const o = await t.api('POST', '/v1/orders', validOrder());
  assert.equal(o.status, 201, o.text);
  const id = o.body.id;
  const calls: Array<[string, string, unknown, number]> = [
    ['GET', `/v1/orders/${id}`, undefined, 200],
    ['PUT', `/v1/orders/${id}`, { description: 'no slash' }, 200],
    ['POST', `/v1/orders/${id}/transactions`, { payment_method: 'credit-card' }, 201],
    ['DELETE', `/v1/orders/${id}`, undefined, 200],
    ['GET', '/v1/merchants/self/projects/self', undefined, 200],
    ['GET', '/v1/merchants/self/projects/self/currencies', undefined, 200],
    ['POST', '/v1/test/clock/run-due-jobs', {}, 200],
  ];
  for (const [method, path, body, status] of calls) {
    const res = await t.api(method, path, body);
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
    assert.equal(res.headers.get('location'), null);
  }
});

// ---- Authentication ----------------------------------------------------------------------

test('Basic auth: key as username with empty password, and the bare base64 of "key:"', async () => {
  const key = t.project.api_key;
  const forms = [
    `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
    `basic ${Buffer.from(`${key}:`).toString('base64')}`,
    `Basic ${Buffer.from(key).toString('base64')}`,
  ];
  for (const authorization of forms) {
    const res = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: null, headers: { authorization } });
    assert.equal(res.status, 200, `${authorization}: ${res.text}`);
    assert.equal(res.body.id, t.project.project_id);
  }
});

test('Basic auth: wrong forms -> 401 with the error body', async () => {
  const key = t.project.api_key;
  const forms = [
    `Bearer ${key}`,
    key,
    `Basic ${Buffer.from(`:${key}`).toString('base64')}`,
    `Basic ${Buffer.from(`${key.slice(0, -1)}:`).toString('base64')}`,
    'Basic !!!',
    'Basic ',
  ];
  for (const authorization of forms) {
    const res = await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: null, headers: { authorization } });
    assert.equal(res.status, 401, `${authorization}: ${res.text}`);
    assert.equal(res.body.error.type, 'Unauthorized');
    assert.equal(res.body.error.status, 401);
  }
});

test('a request without a key is 401 before its body is validated, and stores nothing', () =>
  expectRejected(() => t.api('POST', '/v1/orders/', { bad: true }, { key: null }), { status: 401, type: 'Unauthorized', field: null }).then(() => {}));

test('key rotation: the old key is 401 afterwards, the new key works, orders stay visible', async () => {
  const p = await t.newProject();
  const o = await t.api('POST', '/v1/orders/', validOrder(), { key: p.api_key });
  assert.equal(o.status, 201);
  const rotated = await rotateKey(t.svc.ctx, p.project_id);
  assert.equal(rotated.project_id, p.project_id);
  assert.match(rotated.api_key, /^test_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(rotated.api_key, p.api_key);
  const old = await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: p.api_key });
  assert.equal(old.status, 401);
  assert.equal(old.body.error.type, 'Unauthorized');
  const fresh = await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: rotated.api_key });
  assert.equal(fresh.status, 200);
  const twice = await rotateKey(t.svc.ctx, p.project_id);
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: rotated.api_key })).status, 401);
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: twice.api_key })).status, 200);
  const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1 AND revoked IS NULL', [p.project_id]);
  assert.equal(rows[0].n, 1);
});

test('API keys are stored only as hashes', async () => {
  const p = await t.newProject('live');
  assert.match(p.api_key, /^live_/);
  const rows = await t.db.query<{ key_hash: string; hint: string }>('SELECT key_hash, hint FROM api_keys WHERE project_id = $1', [p.project_id]);
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0].key_hash, p.api_key);
  assert.ok(!p.api_key.includes(rows[0].key_hash) && !rows[0].key_hash.includes(p.api_key));
  assert.ok(rows[0].hint.length < 12, 'the hint is a short prefix, never the key');
});
