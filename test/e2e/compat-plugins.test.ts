// Orders as the webshop plugins build them (docs/compatibility.md): the EMS WooCommerce plugin's
// array, the OXID plugin's (through the plugin SDK's entities), PHP's `[]` for empty objects, and
// real customers' names and addresses. Each is sent as such and checked as GET returns it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService, type ApiResponse } from '../helpers/service.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { expectRejectedIn, type Expect } from '../helpers/rejects.ts';

let t: TestService;
before(async () => {
  t = await startTestService({ env: { PAYMENT_METHOD_ALIASES: 'apple-pay=wallet-a-pay, google-pay=wallet-b-pay' } });
});
after(async () => t?.close());

const expectRejected = (call: () => Promise<ApiResponse>, e: Expect) => expectRejectedIn(t.db, call, e);
const get = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

/** A guest's card order as the WooCommerce plugin builds it: array_filter drops the empty members, not `[""]`. */
const wooOrder = (customer: Record<string, unknown> = {}, method = 'credit-card') => ({
  merchant_order_id: '1234',
  customer: {
    address_type: 'customer',
    email_address: 'anne-marie@example.nl',
    first_name: 'Anne-Marie',
    last_name: 'van den Berg',
    // address_1, address_2 (empty), the postcode without spaces and the city, joined by spaces
    address: 'Kerkstraat 12/3  1012ab Amsterdam',
    postal_code: '1012ab',
    country: 'NL',
    phone_numbers: [''],
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
    ip_address: '203.0.113.7',
    locale: 'nl_NL',
    additional_addresses: [{ address_type: 'billing', address: 'Kerkstraat 12/3  Amsterdam', country: 'NL', postal_code: '1012ab' }],
    ...customer,
  },
  currency: 'EUR',
  client: {
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
    platform_name: 'WooCommerce',
    platform_version: '8.9.3',
    plugin_name: 'emspay-online-woocommerce',
    plugin_version: '1.4.3',
  },
  amount: 2915,
  description: 'Your order 1234 at Tender Test Shop',
  return_url: 'https://shop.example/?wc-api=woocommerce_ginger',
  webhook_url: 'https://shop.example/?wc-api=woocommerce_ginger',
  order_lines: [
    {
      url: 'https://shop.example/product/mug/',
      name: 'Mug',
      type: 'physical',
      amount: 1210,
      currency: 'EUR',
      quantity: 2,
      vat_percentage: 2100,
      merchant_order_line_id: '17',
    },
    {
      name: 'Flat rate',
      type: 'shipping_fee',
      amount: 495,
      currency: 'EUR',
      vat_percentage: 2100,
      quantity: 1,
      merchant_order_line_id: '2',
    },
  ],
  transactions: [{ payment_method: method }],
});

/** An order as the OXID plugin builds it with the plugin SDK: a customer with billing and delivery addresses. */
const oxidOrder = (method = 'credit-card', details?: Record<string, unknown>) => ({
  currency: 'EUR',
  amount: 4990,
  transactions: [{ payment_method: method, ...(details ? { payment_method_details: details } : {}) }],
  customer: {
    additional_addresses: [
      { address_type: 'billing', postal_code: '80331', country: 'DE', address: 'Marienplatz 8 80331 München' },
      { address_type: 'delivery', postal_code: '10117', country: 'DE', address: 'Unter den Linden 77 10117 Berlin' },
    ],
    first_name: 'Jürgen',
    last_name: 'Groß-Schäfer',
    email_address: 'jurgen@example.de',
    gender: 'male',
    phone_numbers: [],
    country: 'DE',
    ip_address: '198.51.100.4',
    locale: 'de',
    merchant_customer_id: 'a7c40f631fc920687.20179984',
    address: 'Marienplatz 8 80331 München',
    address_type: 'customer',
  },
  order_lines: [
    {
      type: 'physical',
      merchant_order_line_id: '6b6efaa3',
      name: 'Kite',
      quantity: 1,
      amount: 4490,
      vat_percentage: 1900,
      currency: 'EUR',
      discount_rate: 0,
      url: 'https://oxid.example/kite',
    },
    {
      type: 'shipping_fee',
      merchant_order_line_id: 'oxidstandard',
      name: 'Shipping',
      quantity: 1,
      amount: 500,
      vat_percentage: 0,
      currency: 'EUR',
    },
  ],
  client: {
    user_agent: 'Mozilla/5.0',
    platform_name: 'OXID',
    platform_version: '7.0.1',
    plugin_name: 'ginger-oxid',
    plugin_version: '1.0.0',
  },
  webhook_url: 'https://oxid.example/index.php?cl=gingerwebhook',
  return_url: 'https://oxid.example/index.php?cl=order&fnc=return',
  merchant_order_id: '0f1b2c3d4e',
  description: 'Oxid order 0f1b2c3d4e at shop 1',
});

test('WooCommerce: a guest card order is accepted and stored as sent, normalised (cases 1 and 2)', async () => {
  const body = wooOrder();
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const o = await get(res.body.id);
  assert.equal(o.customer.address_type, 'customer');
  assert.equal(o.customer.first_name, 'Anne-Marie');
  assert.equal(o.customer.address, 'Kerkstraat 12/3 1012ab Amsterdam', 'runs of spaces become one');
  assert.equal(o.customer.postal_code, '1012AB', 'postcodes are upper-cased');
  assert.equal(o.customer.phone_numbers, undefined, 'a guest without a phone has no phone numbers');
  assert.deepEqual(o.customer.additional_addresses, [
    { address_type: 'billing', address: 'Kerkstraat 12/3 Amsterdam', country: 'NL', postal_code: '1012AB' },
  ]);
  assert.deepEqual(o.client, body.client);
  assert.deepEqual(o.order_lines, body.order_lines);
  assert.equal(o.webhook_url, body.webhook_url);
  assert.equal(o.transactions[0].payment_method, 'credit-card');
  assert.equal(o.order_url, `${t.url}/pay/${o.id}/`, 'the plugin redirects hosted-page orders to order_url');
});

test('WooCommerce: empty phone numbers are dropped, real ones kept (case 2)', async () => {
  const res = await t.api('POST', '/v1/orders/', wooOrder({ phone_numbers: ['', '+31 6 1234 5678', '  '] }));
  assert.equal(res.status, 201, res.text);
  assert.deepEqual((await get(res.body.id)).customer.phone_numbers, ['+31 6 1234 5678']);
});

for (const type of ['customer', 'billing', 'delivery']) {
  test(`address_type ${type} is accepted on the customer and on additional_addresses (case 1)`, async () => {
    const res = await t.api(
      'POST',
      '/v1/orders/',
      wooOrder({ address_type: type, additional_addresses: [{ address_type: type, address: 'Damrak 1', country: 'NL' }] }),
    );
    assert.equal(res.status, 201, res.text);
    const o = await get(res.body.id);
    assert.equal(o.customer.address_type, type);
    assert.equal(o.customer.additional_addresses[0].address_type, type);
  });
}

test('address_type outside customer, billing and delivery is still refused, on both', async () => {
  await expectRejected(() => t.api('POST', '/v1/orders/', wooOrder({ address_type: 'shipping' })), { field: 'customer.address_type' });
  await expectRejected(() => t.api('POST', '/v1/orders/', wooOrder({ additional_addresses: [{ address_type: 'home' }] })), {
    field: 'customer.additional_addresses[0].address_type',
  });
});

test("PHP's [] for an empty object counts as {} (case 4)", async () => {
  const body = {
    ...validOrder(),
    extra: [],
    client: [],
    customer: [],
    transactions: [{ payment_method: 'credit-card', payment_method_details: [] }],
  };
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const o = await get(res.body.id);
  assert.deepEqual(o.extra, {});
  assert.deepEqual(o.client, {});
  assert.deepEqual(o.customer, {});
  assert.equal(o.transactions[0].payment_method, 'credit-card');
  assert.deepEqual(Object.keys(o.transactions[0].payment_method_details), []);
});

test('[] inside extra is the merchant data and stays an array; a non-empty array is no object', async () => {
  const res = await t.api('POST', '/v1/orders/', validOrder({ extra: { tags: [], nested: { list: [] } } }));
  assert.equal(res.status, 201, res.text);
  assert.deepEqual((await get(res.body.id)).extra, { tags: [], nested: { list: [] } });
  await expectRejected(() => t.api('POST', '/v1/orders/', validOrder({ extra: ['cart'] })), { field: 'extra' });
  await expectRejected(() => t.api('POST', '/v1/orders/', validOrder({ customer: ['Ada'] })), { field: 'customer' });
});

const people: Array<[name: string, customer: Record<string, unknown>, stored: Record<string, unknown>]> = [
  ['Polish name', { first_name: 'Lech', last_name: 'Wałęsa', city: 'Gdańsk' }, { last_name: 'Wałęsa', city: 'Gdańsk' }],
  ['Czech name', { first_name: 'Antonín', last_name: 'Dvořák', city: 'Nelahozeves' }, { first_name: 'Antonín', last_name: 'Dvořák' }],
  ['Vietnamese name (precomposed)', { first_name: 'Văn Anh', last_name: 'Nguyễn' }, { last_name: 'Nguyễn' }],
  ['Vietnamese name (combining marks)', { last_name: 'Nguye\u0302\u0303n' }, { last_name: 'Nguye\u0302\u0303n' }],
  ['hyphenated names', { first_name: 'Anne-Marie', last_name: 'Smith-Jones' }, { first_name: 'Anne-Marie', last_name: 'Smith-Jones' }],
  ['apostrophe', { last_name: "O'Brien" }, { last_name: "O'Brien" }],
  [
    'Greek and Cyrillic',
    { first_name: 'Δημήτρης', last_name: 'Соколов', city: 'Αθήνα' },
    { first_name: 'Δημήτρης', last_name: 'Соколов', city: 'Αθήνα' },
  ],
  ['address with a slash', { address: 'Kerkstraat 12/3' }, { address: 'Kerkstraat 12/3' }],
  ['address with a line break', { address: 'Damrak 1\r\nApartment 4' }, { address: 'Damrak 1 Apartment 4' }],
  ['names and city with stray white space', { first_name: '  Ada\t', city: 'Den\nHaag ' }, { first_name: 'Ada', city: 'Den Haag' }],
  ['lower-case postcode', { postal_code: '1234ab' }, { postal_code: '1234AB' }],
  ['lower-case postcode with a space', { postal_code: 'sw1a 1aa', country: 'GB' }, { postal_code: 'SW1A 1AA' }],
];
for (const [name, customer, stored] of people) {
  test(`real customers: ${name} is accepted and stored (case 8)`, async () => {
    const res = await t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, ...customer } }));
    assert.equal(res.status, 201, res.text);
    const o = await get(res.body.id);
    for (const [k, v] of Object.entries(stored)) assert.equal(o.customer[k], v, k);
  });
}

const stillRefused: Array<[name: string, customer: Record<string, unknown>, field: string]> = [
  ['a name with <', { first_name: 'Ada <b>' }, 'customer.first_name'],
  ['a name with a slash (names take no /)', { last_name: 'Smith/Jones' }, 'customer.last_name'],
  ['a city with an emoji', { city: 'Amsterdam 🌷' }, 'customer.city'],
  ['a postcode with a hyphen', { postal_code: '80-827' }, 'customer.postal_code'],
  [
    'an additional address with an unknown field',
    { additional_addresses: [{ address_type: 'billing', stret: 'Damrak' }] },
    'customer.additional_addresses[0].stret',
  ],
  [
    'an additional address with a line of <',
    { additional_addresses: [{ address: '<script>' }] },
    'customer.additional_addresses[0].address',
  ],
  ['an additional address street with <', { additional_addresses: [{ street: 'Damrak <1>' }] }, 'customer.additional_addresses[0].street'],
  [
    'an additional address city of 121 characters',
    { additional_addresses: [{ city: 'a'.repeat(121) }] },
    'customer.additional_addresses[0].city',
  ],
  [
    'an additional address postcode with a hyphen',
    { additional_addresses: [{ postal_code: '80-827' }] },
    'customer.additional_addresses[0].postal_code',
  ],
  [
    'an additional address country in lower case',
    { additional_addresses: [{ country: 'nl' }] },
    'customer.additional_addresses[0].country',
  ],
  ['an additional address state of three letters', { additional_addresses: [{ state: 'NYC' }] }, 'customer.additional_addresses[0].state'],
  [
    'an additional address housenumber of 33 characters',
    { additional_addresses: [{ housenumber: '1'.repeat(33) }] },
    'customer.additional_addresses[0].housenumber',
  ],
  [
    'an additional address housenumber not a string',
    { additional_addresses: [{ housenumber: 10 }] },
    'customer.additional_addresses[0].housenumber',
  ],
  ['an additional address that is no object', { additional_addresses: ['Damrak 1'] }, 'customer.additional_addresses[0]'],
  [
    'eleven additional addresses',
    { additional_addresses: Array.from({ length: 11 }, () => ({ address_type: 'delivery' })) },
    'customer.additional_addresses',
  ],
  ['phone_numbers with a number and letters', { phone_numbers: ['', 'call me'] }, 'customer.phone_numbers[0]'],
];
for (const [name, customer, field] of stillRefused) {
  test(`still refused: ${name} -> 400 on ${field}`, async () => {
    await expectRejected(() => t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, ...customer } })), {
      field,
    });
  });
}

test('still strict: an unknown top-level field and a wrong type are refused by name', async () => {
  await expectRejected(() => t.api('POST', '/v1/orders/', { ...wooOrder(), shop_id: 7 }), { field: 'shop_id' });
  await expectRejected(() => t.api('POST', '/v1/orders/', { ...wooOrder(), amount: '29.15' }), { field: 'amount' });
  await expectRejected(() => t.api('POST', '/v1/orders/', { ...wooOrder(), client: { ...wooOrder().client, plugin_version: 143 } }), {
    field: 'client.plugin_version',
  });
});

test('OXID: an order built with the plugin SDK, billing and delivery addresses, no phone', async () => {
  const body = oxidOrder();
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  const o = await get(res.body.id);
  assert.deepEqual(o.customer.additional_addresses, body.customer.additional_addresses);
  assert.equal(o.customer.address_type, 'customer');
  assert.equal(o.customer.last_name, 'Groß-Schäfer');
  assert.equal(o.customer.phone_numbers, undefined, 'an empty list of phone numbers is no phone numbers');
  assert.deepEqual(o.order_lines, body.order_lines);
  assert.deepEqual(o.client, body.client);
  assert.equal(o.webhook_url, body.webhook_url);
});

test('OXID: an iDEAL order (issuer_id "") is refused for its method while iDEAL is off, and has a payment_url once it is on (case 6)', async () => {
  const other = await t.newProject();
  const off = await expectRejected(() => t.api('POST', '/v1/orders/', oxidOrder('ideal', { issuer_id: '' }), { key: other.api_key }), {
    field: 'transactions[0].payment_method',
    status: 403,
    type: 'Forbidden',
  });
  assert.match(off.body.error.value, /payment method ideal is not active in this project/);
  await setActiveMethods(t.svc.ctx, other.project_id, ['credit-card', 'ideal']);
  const on = await t.api('POST', '/v1/orders/', oxidOrder('ideal', { issuer_id: '' }), { key: other.api_key });
  assert.equal(on.status, 201, on.text);
  const page = await fetch(on.body.transactions[0].payment_url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /name="issuer_id"/);
});

test('payment method aliases: listed by GET currencies and turned into the method they stand for', async () => {
  const cur = await t.api('GET', '/v1/merchants/self/projects/self/currencies/');
  assert.equal(cur.status, 200, cur.text);
  assert.deepEqual(cur.body.payment_methods['apple-pay'], cur.body.payment_methods['wallet-a-pay']);
  assert.deepEqual(cur.body.payment_methods['google-pay'], cur.body.payment_methods['wallet-b-pay']);
  assert.ok(cur.body.payment_methods['apple-pay'].currencies.includes('EUR'));
  const res = await t.api('POST', '/v1/orders/', wooOrder({ city: 'Amsterdam' }, 'apple-pay'));
  assert.equal(res.status, 201, res.text);
  assert.equal((await get(res.body.id)).transactions[0].payment_method, 'wallet-a-pay');
  const hpp = await t.api('POST', '/v1/orders/', validOrder({ payment_methods: ['google-pay', 'credit-card'] }));
  assert.equal(hpp.status, 201, hpp.text);
  assert.deepEqual((await get(hpp.body.id)).payment_methods, ['wallet-b-pay', 'credit-card']);
  const link = await t.api('POST', '/v1/paymentlinks/', {
    merchant_order_id: 'l-1',
    amount: 500,
    currency: 'EUR',
    payment_methods: ['apple-pay'],
  });
  assert.equal(link.status, 201, link.text);
  assert.deepEqual(link.body.payment_methods, ['wallet-a-pay']);
});

test('payment method aliases: an alias of an inactive method is refused naming that method', async () => {
  const limited = await t.newProject('test');
  const [row] = await t.db.query<{ settings: { payment_methods: Record<string, unknown> } }>(
    'SELECT settings FROM projects WHERE id = $1',
    [limited.project_id],
  );
  delete row.settings.payment_methods['wallet-a-pay'];
  await t.db.query('UPDATE projects SET settings = $2 WHERE id = $1', [limited.project_id, JSON.stringify(row.settings)]);
  const cur = await t.api('GET', '/v1/merchants/self/projects/self/currencies/', undefined, { key: limited.api_key });
  assert.equal(cur.body.payment_methods['apple-pay'], undefined, 'no alias of an inactive method is listed');
  const res = await expectRejected(
    () => t.api('POST', '/v1/orders/', wooOrder({ city: 'Amsterdam' }, 'apple-pay'), { key: limited.api_key }),
    {
      status: 403,
      type: 'Forbidden',
      field: 'transactions[0].payment_method',
    },
  );
  assert.match(res.body.error.value, /wallet-a-pay is not active/);
});

/**
 * The WooCommerce plugin's gateways (WC_Ginger_BankConfig::$BANK_PAYMENT_METHODS), each order as
 * its order builder makes it: the gateway id without the bank prefix as payment_method,
 * payment_method_details only for afterpay's accepted terms (array_filter drops an empty one), and
 * no transaction at all for the hosted payment page (pay-now). Each gets a payment page that opens.
 */
test('WooCommerce: every gateway creates an order with a working payment_url (payment methods)', async () => {
  const shop = await t.newProject();
  await setActiveMethods(t.svc.ctx, shop.project_id, 'all');
  const send = (body: Record<string, unknown>) => t.api('POST', '/v1/orders/', body, { key: shop.api_key });
  const open = async (url: string) => {
    const res = await fetch(url);
    await res.arrayBuffer();
    return res.status;
  };
  const gateways = [
    'ideal',
    'bank-transfer',
    'credit-card',
    'bancontact',
    'klarna-pay-now',
    'paypal',
    'klarna-pay-later',
    'payconiq',
    'afterpay',
    'apple-pay',
    'amex',
    'klarna-direct-debit',
    'google-pay',
    'sofort',
  ];
  for (const gateway of gateways) {
    const body = wooOrder({ city: 'Amsterdam' }, gateway);
    if (gateway === 'afterpay')
      Object.assign(body, {
        transactions: [{ payment_method: 'afterpay', payment_method_details: { verified_terms_of_service: true } }],
        customer: { ...body.customer, gender: 'female', birthdate: '1990-04-01' },
      });
    const res = await send(body);
    assert.equal(res.status, 201, `${gateway}: ${res.text}`);
    const url = res.body.transactions[0].payment_url;
    assert.equal(await open(url), 200, `${gateway}: ${url}`);
  }
  // the hosted payment page gateway sends no transaction: the customer chooses on order_url
  const { transactions: _none, ...hpp } = wooOrder({}, 'pay-now');
  const paynow = await send(hpp);
  assert.equal(paynow.status, 201, paynow.text);
  assert.equal(await open(paynow.body.order_url), 200);
  // the gateways Tender does not have are refused by name
  for (const gateway of ['tikkie-payment-request', 'wechat']) {
    const res = await send(wooOrder({}, gateway));
    assert.equal(res.status, 400);
    assert.equal(res.body.error.value, `payment method ${gateway} is not known`);
  }
});
