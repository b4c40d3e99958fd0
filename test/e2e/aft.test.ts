import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, validOrder, type TestService } from '../helpers/service.ts';
import { followBrowser, startPayment } from '../helpers/cards.ts';

// Account Funding Transactions: transaction_type aft needs a receiver and a complete billing address.
let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const receiver = { receiver_account_number: 'NL91ABNA0417164300', receiver_account_number_type: 'iban' };
const aft = (details: Record<string, unknown> = receiver) => ({ transaction_type: 'aft', payment_method_details: details });
const countOrders = async () => Number((await t.db.query('SELECT count(*)::int AS n FROM orders'))[0].n);

async function refused(body: unknown, status: number, type: string, field: string) {
  const before = await countOrders();
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.type, type);
  assert.equal(res.body.error.field, field);
  assert.equal(await countOrders(), before, 'a refused order stores nothing');
  return res;
}

test('missing receiver fields or billing address: 422 MissingInformationToCreateTransaction', async () => {
  const missing = 'MissingInformationToCreateTransaction';
  await refused(cardOrder({}, aft({})), 422, missing, 'transactions[0].payment_method_details.receiver_account_number');
  await refused(
    cardOrder({}, aft({ receiver_account_number_type: 'iban' })),
    422,
    missing,
    'transactions[0].payment_method_details.receiver_account_number',
  );
  await refused(
    cardOrder({}, aft({ receiver_account_number: 'NL91ABNA0417164300' })),
    422,
    missing,
    'transactions[0].payment_method_details.receiver_account_number_type',
  );
  await refused(cardOrder({}, { transaction_type: 'aft' }), 422, missing, 'transactions[0].payment_method_details.receiver_account_number');
  await refused(cardOrder({ customer: undefined }, aft()), 422, missing, 'customer.first_name');
  const { customer } = validOrder() as { customer: Record<string, unknown> };
  for (const f of ['last_name', 'address', 'postal_code', 'city', 'country', 'address_type']) {
    const res = await refused(cardOrder({ customer: { ...customer, [f]: undefined } }, aft()), 422, missing, `customer.${f}`);
    assert.match(res.body.error.value, new RegExp(f));
  }
  const noState = await t.api('POST', '/v1/orders/', cardOrder({ customer: { ...customer, country: 'US', postal_code: '10001' } }, aft()));
  assert.equal(noState.status, 400, 'a US address needs its state');
  assert.equal(noState.body.error.field, 'customer.state');
});

test('receiver fields are validated: 1-50 characters, a known type', async () => {
  await refused(
    cardOrder({}, aft({ ...receiver, receiver_account_number: 'x'.repeat(51) })),
    400,
    'ValidationError',
    'transactions[0].payment_method_details.receiver_account_number',
  );
  await refused(
    cardOrder({}, aft({ ...receiver, receiver_account_number: '' })),
    400,
    'ValidationError',
    'transactions[0].payment_method_details.receiver_account_number',
  );
  await refused(
    cardOrder({}, aft({ ...receiver, receiver_account_number_type: 'bank' })),
    400,
    'ValidationError',
    'transactions[0].payment_method_details.receiver_account_number_type',
  );
  for (const type of ['card-account', 'iban', 'email', 'phone-number', 'other']) {
    const res = await t.api(
      'POST',
      '/v1/orders/',
      cardOrder({}, aft({ receiver_account_number: 'x'.repeat(50), receiver_account_number_type: type })),
    );
    assert.equal(res.status, 201, `${type}: ${res.text}`);
  }
});

test('a complete AFT is created (201) and pays through the card flow', async () => {
  const p = await startPayment(t, '4111111111111111', { orderOver: { return_url: 'https://shop.example/r' }, txnOver: aft() });
  assert.equal(p.txn.transaction_type, 'aft');
  await followBrowser(p.redirect_url);
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body;
  const txn = order.transactions[0];
  assert.equal(order.status, 'completed');
  assert.equal(txn.status, 'accepted');
  assert.equal(txn.transaction_type, 'aft');
  assert.equal(txn.payment_method_details.receiver_account_number, receiver.receiver_account_number);
  assert.equal(txn.payment_method_details.receiver_account_number_type, 'iban');
  assert.equal(txn.payment_method_details.truncated_pan, '411111******1111');
});

test('starting an AFT on an order without a transaction follows the same rules', async () => {
  const created = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined }));
  assert.equal(created.status, 201);
  const path = `/v1/orders/${created.body.id}/transactions/`;
  const refusedStart = await t.api('POST', path, { payment_method: 'credit-card', ...aft() });
  assert.equal(refusedStart.status, 422);
  assert.equal(refusedStart.body.error.type, 'MissingInformationToCreateTransaction');
  assert.equal(refusedStart.body.error.field, 'customer.first_name');
  assert.deepEqual((await t.api('GET', `/v1/orders/${created.body.id}/`)).body.transactions, [], 'nothing started');

  const withBilling = await t.api('POST', '/v1/orders/', validOrder());
  const ok = await t.api('POST', `/v1/orders/${withBilling.body.id}/transactions/`, { payment_method: 'credit-card', ...aft() });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.transactions[0].transaction_type, 'aft');
});
