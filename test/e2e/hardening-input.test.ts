// Input that used to break Tender (issue 22): NUL and unpaired surrogates in any text, deep
// nesting, bodies that are not JSON, and compressed bodies. Each is a 4xx with the error body that
// stores nothing; hosted pages keep taking their form posts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { validOrder, cardOrder, request, basic, type TestService, type ApiResponse } from '../helpers/service.ts';
import { expectRejectedIn, ordersService, type Expect } from '../helpers/rejects.ts';

let t: TestService;
before(async () => ({ t } = await ordersService()));
after(async () => t?.close());

const rejected = (call: () => Promise<ApiResponse>, e: Expect) => expectRejectedIn(t.db, call, e);
const postOrder = (body: unknown, headers: Record<string, string> = {}) => t.api('POST', '/v1/orders/', body, { headers });

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';
const aft = { transaction_type: 'aft', payment_method_details: { receiver_account_number: 'X', receiver_account_number_type: 'iban' } };

/** The free-text fields the issue found reaching PostgreSQL, each set to `text`, and the field the error must name. */
function textCases(text: string): Array<[body: unknown, field: string]> {
  const customer = (over: Record<string, unknown>) => ({ customer: { ...(validOrder().customer as object), ...over } });
  return [
    [validOrder({ merchant_order_id: text }), 'merchant_order_id'],
    [validOrder({ merchant_name: text }), 'merchant_name'],
    [validOrder({ description: text }), 'description'],
    [validOrder({ client: { user_agent: text } }), 'client.user_agent'],
    [validOrder({ client: { platform_name: text } }), 'client.platform_name'],
    [validOrder({ client: { plugin_version: text } }), 'client.plugin_version'],
    [validOrder({ extra: { note: text } }), 'extra.note'],
    [validOrder({ extra: { [text]: 'x' } }), 'extra'],
    [validOrder({ order_lines: [{ name: text }] }), 'order_lines[0].name'],
    [validOrder(customer({ merchant_customer_id: text })), 'customer.merchant_customer_id'],
    [validOrder(customer({ gender: text })), 'customer.gender'],
    [validOrder(customer({ user_agent: text })), 'customer.user_agent'],
    [validOrder(customer({ additional_addresses: [{ street: text }] })), 'customer.additional_addresses[0].street'],
    [
      cardOrder({}, { ...aft, payment_method_details: { ...aft.payment_method_details, receiver_account_number: text } }),
      'transactions[0].payment_method_details.receiver_account_number',
    ],
  ];
}

for (const [name, text] of [
  ['NUL', NUL],
  ['an unpaired surrogate', LONE],
  ['a lone low surrogate', 'x\udc00'],
] as const) {
  test(`${name} in any free-text field of an order is a ValidationError naming the field`, async () => {
    for (const [body, field] of textCases(text)) await rejected(() => postOrder(body), { field });
  });

  test(`${name} in a payment link, an order update, a query parameter or a path is refused the same way`, async () => {
    await rejected(() => t.api('POST', '/v1/paymentlinks/', { merchant_order_id: text, amount: 100, currency: 'EUR' }), {
      field: 'merchant_order_id',
    });
    const order = await postOrder(validOrder());
    assert.equal(order.status, 201, order.text);
    await rejected(() => t.api('PUT', `/v1/orders/${order.body.id}/`, { description: text }), { field: 'description' });
  });
}

test('NUL in a query parameter or a path segment, or percent-encoding that is not UTF-8, is a 400 with the error body', async () => {
  await rejected(() => t.api('POST', '/v1/search/orders/?format=a%00b', { query: '*' }), { field: 'format' });
  await rejected(() => t.api('GET', '/v1/orders/a%00b/'), { field: 'order_id' });
  await rejected(() => t.api('POST', '/v1/search/orders/?format=a%ED%A0%80', { query: '*' }), { field: 'format' });
  await rejected(() => t.api('GET', '/v1/orders/a%ED%A0%80/'), { field: null });
  await rejected(() => t.api('GET', '/v1/orders/%E0%A4%A/'), { field: null });
});

test('a surrogate pair (an emoji) is ordinary text and accepted', async () => {
  const res = await postOrder(validOrder({ description: 'mug \u{1F375}', extra: { '\u{1F600}': '\u{1F600}' } }));
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.description, 'mug \u{1F375}');
});

/** `levels` nested arrays (or objects) around `inner`, as JSON text, built without recursion. */
const nested = (levels: number, inner = '1', kind: 'array' | 'object' = 'array') =>
  kind === 'array' ? '['.repeat(levels) + inner + ']'.repeat(levels) : '{"a":'.repeat(levels) + inner + '}'.repeat(levels);

test('10,000 levels of nesting in extra, in order_lines or as the body are a 400, with or without an Idempotency-Key', async () => {
  const order = JSON.stringify(validOrder());
  const withExtra = (json: string) => order.replace(/}$/, `,"extra":{"deep":${json}}}`);
  for (const headers of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
    for (const raw of [
      withExtra(nested(10_000)),
      withExtra(nested(10_000, '1', 'object')),
      order.replace(/}$/, `,"order_lines":[${nested(10_000, '{}')}]}`),
    ])
      await rejected(() => t.api('POST', '/v1/orders/', undefined, { raw, headers }), { field: null });
    await rejected(() => t.api('POST', '/v1/orders/', undefined, { raw: nested(10_000), headers }), { field: null });
    await rejected(() => t.api('POST', '/v1/orders/', undefined, { raw: nested(10_000, '{}', 'object'), headers }), { field: null });
  }
});

test('the nesting limit is 32 levels: 32 are taken (and replayed by an Idempotency-Key), 33 are not', async () => {
  // the body is level 1, extra level 2, so 30 more levels inside extra make 32
  const body = JSON.stringify(validOrder()).replace(/}$/, `,"extra":{"deep":${nested(29, '{}')}}}`);
  const headers = { 'idempotency-key': 'nest-32' };
  const first = await t.api('POST', '/v1/orders/', undefined, { raw: body, headers });
  assert.equal(first.status, 201, first.text);
  const again = await t.api('POST', '/v1/orders/', undefined, { raw: body, headers });
  assert.equal(again.text, first.text);
  const deeper = JSON.stringify(validOrder()).replace(/}$/, `,"extra":{"deep":${nested(30, '{}')}}}`);
  await rejected(() => t.api('POST', '/v1/orders/', undefined, { raw: deeper }), { field: null });
});

test('JSON endpoints take application/json only: a form-encoded or text body is a 415 with the error body', async () => {
  const auth = { authorization: basic(t.project.api_key) };
  const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };
  await rejected(() => request(`${t.url}/v1/orders/`, 'POST', undefined, form, 'currency=EUR&amount=100'), {
    status: 415,
    field: 'Content-Type',
  });
  await rejected(() => request(`${t.url}/v1/search/orders/`, 'POST', undefined, form, 'query=*'), { status: 415, field: 'Content-Type' });
  await rejected(
    () => request(`${t.config.vaultUrl}/v1/cards/`, 'POST', undefined, form, 'pan=4111111111111111&expiry=122030&setup_token=x'),
    {
      status: 415,
      field: 'Content-Type',
    },
  );
  await rejected(
    () => request(`${t.url}/v1/orders/`, 'POST', undefined, { ...auth, 'content-type': 'text/plain' }, JSON.stringify(validOrder())),
    {
      status: 415,
      field: 'Content-Type',
    },
  );
});

test('a body with a Content-Encoding (gzip, or anything else but identity) is a 415', async () => {
  const auth = { authorization: basic(t.project.api_key), 'content-type': 'application/json' };
  for (const encoding of ['gzip', 'br', 'x-unknown'])
    await rejected(
      () => request(`${t.url}/v1/orders/`, 'POST', undefined, { ...auth, 'content-encoding': encoding }, JSON.stringify(validOrder())),
      {
        status: 415,
        field: 'Content-Encoding',
      },
    );
  const plain = await request(
    `${t.url}/v1/orders/`,
    'POST',
    undefined,
    { ...auth, 'content-encoding': 'identity' },
    JSON.stringify(validOrder()),
  );
  assert.equal(plain.status, 201, plain.text);
});

test("the hosted pages' form posts still take urlencoded bodies", async () => {
  const order = await postOrder(cardOrder());
  const res = await request(
    `${t.url}/pay/${order.body.id}/card/`,
    'POST',
    undefined,
    { 'content-type': 'application/x-www-form-urlencoded' },
    'pan=4111&csrf=x',
  );
  // without a valid CSRF token the page sends the customer back to the form (POST/redirect/GET): read as a form, not refused as a media type
  assert.equal(res.status, 303, res.text);
  assert.equal(res.headers.get('location'), `/pay/${order.body.id}/`);
  const nul = await request(
    `${t.url}/pay/${order.body.id}/card/`,
    'POST',
    undefined,
    { 'content-type': 'application/x-www-form-urlencoded' },
    'name=a%00b&csrf=x',
  );
  assert.equal(nul.status, 400); // the page's error page: the pages answer in HTML
  assert.match(nul.headers.get('content-type') ?? '', /text\/html/);
});
