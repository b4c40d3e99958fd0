// The webshop plugins' payment methods in the sandbox (docs/payment-methods.md): created as the
// plugins send them, paid on their sandbox page over real HTTP (CSRF and all), the bank transfer
// completed by the test endpoint, BNPL authorized then captured, refunds, a retry on the same
// order, and each method's rules broken (status and error body).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { csrfIn, sandboxCustomer } from '../helpers/methods.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { PAYMENT_METHODS } from '../../src/domain/payment-methods.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { embeddedEnv, runTender } from '../helpers/cli.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let t: TestService;
before(async () => {
  t = await startTestService();
  await setActiveMethods(t.svc.ctx, t.project.project_id, 'all');
});
after(async () => t?.close());

const create = async (body: Record<string, unknown>) => {
  const res = await t.api('POST', '/v1/orders/', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
};
const order = (id: string) => t.api('GET', `/v1/orders/${id}/`).then((r) => r.body);
const outbox = async (id: string) =>
  (await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [id])).map((r) => r.status);

const { page, submit, choose } = sandboxCustomer({
  get url() {
    return t.url;
  },
});

const idealOrder = (details: Record<string, unknown> = { issuer_id: 'INGBNL2A' }) =>
  validOrder({
    customer: { ...validOrder().customer, locale: 'en_GB' },
    failure_url: 'https://shop.example/failed',
    transactions: [{ payment_method: 'ideal', payment_method_details: details }],
  });

test('iDEAL as the plugins send it: paid on its sandbox page, back to return_url, a webhook per change, refunded', async () => {
  const o = await create(idealOrder());
  const txn = o.transactions[0];
  assert.equal(txn.payment_method, 'ideal');
  assert.equal(txn.payment_method_details.issuer_id, 'INGBNL2A');
  assert.match(txn.payment_url, new RegExp(`/pay/${o.id}/transactions/${txn.id}/$`));
  const html = await page(txn.payment_url);
  for (const label of ['Paid', 'Cancelled', 'Expired', 'Failed', 'Still open']) assert.ok(html.includes(label), label);
  assert.ok(!html.includes('name="issuer_id"'), 'the bank was chosen in the shop');
  const back = await choose(o, 'paid');
  assert.match(back, /^https:\/\/shop\.example\/return\?order_id=/);
  const paid = await order(o.id);
  assert.equal(paid.status, 'completed');
  assert.deepEqual(
    paid.transactions[0].events.map((e: { event: string }) => e.event),
    ['new', 'accepted', 'completed'],
  );
  assert.deepEqual(await outbox(o.id), ['completed']);
  const refund = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 500, description: 'one mug' });
  assert.equal(refund.status, 201, refund.text);
  assert.equal((await order(o.id)).refunded_amount, 500);
});

test('iDEAL without an issuer: the page asks for the bank; still open, then expired, sends the customer to failure_url', async () => {
  const o = await create(idealOrder({ issuer_id: '' }));
  const html = await page(o.transactions[0].payment_url);
  assert.ok(html.includes('name="issuer_id"') && html.includes('RABONL2U'));
  assert.match(await choose(o, 'open', { issuer_id: 'RABONL2U' }), /shop\.example\/return/);
  const open = await order(o.id);
  assert.equal(open.status, 'processing');
  assert.equal(open.transactions[0].payment_method_details.issuer_id, 'RABONL2U');
  const exp = await choose(o, 'expired');
  assert.match(exp, /^https:\/\/shop\.example\/failed\?/);
  assert.equal((await order(o.id)).status, 'expired');
  assert.deepEqual(await outbox(o.id), ['processing', 'expired']);
});

test('a failed iDEAL attempt, then the customer tries again on the same order and pays', async () => {
  const o = await create(validOrder({ return_url: undefined }));
  const list = await page(`/pay/${o.id}/`);
  for (const m of ['ideal', 'bancontact', 'credit-card', 'bank-transfer']) assert.ok(list.includes(`data-method="${m}"`), m);
  // not usable for this order: Swish takes SEK, afterpay needs order lines
  for (const m of ['swish', 'afterpay']) assert.ok(!list.includes(`data-method="${m}"`), m);
  const go = (html: string, method: string) =>
    submit(`/pay/${o.id}/method/`, { csrf: csrfIn(html, `/pay/${o.id}/method/`), payment_method: method });
  const first = await go(list, 'ideal');
  assert.match(first, new RegExp(`/pay/${o.id}/transactions/`));
  await choose(await order(o.id), 'failed');
  // the page can still take a payment: the attempt failed, the order stays open (no final status)
  const failed = await order(o.id);
  assert.equal(failed.status, 'new');
  assert.equal(failed.transactions[0].status, 'error');
  const result = await page(`/pay/${o.id}/result/`);
  assert.ok(result.includes(`href="/pay/${o.id}/"`), 'the result page leads back to the order page');
  const again = await page(`/pay/${o.id}/`);
  assert.ok(again.includes('data-retry'));
  await go(again, 'ideal');
  await choose(await order(o.id), 'paid', { issuer_id: 'ABNANL2A' });
  const paid = await order(o.id);
  assert.equal(paid.status, 'completed');
  assert.deepEqual(
    paid.transactions.map((x: { status: string }) => x.status),
    ['error', 'completed'],
  );
  // no final-status webhook for the failed attempt, so a plugin does not close the cart
  assert.deepEqual(await outbox(o.id), ['completed']);
  // the API still holds an order to one attempt
  const api = await t.api('POST', `/v1/orders/${o.id}/transactions/`, { payment_method: 'ideal' });
  assert.equal(api.status, 409);
});

test('bank transfer: pending with what to pay, the exact amount completes it (test endpoint); viacash has no refunds', async () => {
  const o = await create(validOrder({ transactions: [{ payment_method: 'bank-transfer' }] }));
  assert.equal(o.status, 'processing');
  const d = o.transactions[0].payment_method_details;
  assert.equal(o.transactions[0].status, 'pending');
  assert.ok(d.reference && d.creditor_iban && d.creditor_bic && d.creditor_account_holder_name);
  const html = await page(o.transactions[0].payment_url);
  assert.ok(html.includes(d.creditor_iban) && html.includes(d.reference));
  const wrong = await t.api('POST', `/v1/test/orders/${o.id}/bank-transfer/`, { outcome: 'paid', amount: 1994 });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error.field, 'amount');
  assert.equal((await order(o.id)).status, 'processing');
  const ok = await t.api('POST', `/v1/test/orders/${o.id}/bank-transfer/`, { outcome: 'paid', amount: 1995 });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.status, 'completed');

  const v = await create(
    validOrder({ customer: { ...validOrder().customer, country: 'DE' }, transactions: [{ payment_method: 'viacash' }] }),
  );
  assert.ok(v.transactions[0].payment_method_details.slip_reference);
  await t.api('POST', `/v1/test/orders/${v.id}/bank-transfer/`, { outcome: 'paid', amount: 1995 });
  const refund = await t.api('POST', `/v1/orders/${v.id}/refunds/`, { amount: 100 });
  assert.equal(refund.status, 422);
  assert.equal(refund.body.error.type, 'RefundError');
  assert.match(refund.body.error.value, /viacash can not be refunded/);
  const expiring = await create(validOrder({ transactions: [{ payment_method: 'bank-transfer' }] }));
  const gone = await t.api('POST', `/v1/test/orders/${expiring.id}/bank-transfer/`, { outcome: 'expired' });
  assert.equal(gone.body.status, 'expired');
});

const lines = [
  { name: 'Mug', type: 'physical', amount: 1000, currency: 'EUR', quantity: 1, vat_percentage: 2100, merchant_order_line_id: '1' },
  { name: 'Tea', type: 'physical', amount: 995, currency: 'EUR', quantity: 1, vat_percentage: 900, merchant_order_line_id: '2' },
];

test('Klarna pay later: authorized on its page, captured (has-captures), refunded', async () => {
  const o = await create(validOrder({ order_lines: lines, transactions: [{ payment_method: 'klarna-pay-later' }] }));
  await choose(o, 'paid');
  const held = await order(o.id);
  assert.equal(held.status, 'completed');
  assert.equal(held.transactions[0].status, 'accepted');
  assert.equal(held.transactions[0].is_capturable, true);
  const cap = await t.api('POST', `/v1/orders/${o.id}/transactions/${o.transactions[0].id}/captures/`);
  assert.equal(cap.status, 201, cap.text);
  assert.ok((await order(o.id)).flags.includes('has-captures'));
  const refund = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 995, order_lines: [lines[1]] });
  assert.equal(refund.status, 201, refund.text);
  const report = await checkLedger(t.db, t.project.project_id);
  assert.deepEqual(report.violations, []);
});

test('each rule broken answers its status and names the field', async () => {
  const cases: [Record<string, unknown>, number, string, RegExp][] = [
    [validOrder({ transactions: [{ payment_method: 'ideal-x' }] }), 400, 'transactions[0].payment_method', /ideal-x is not known/],
    [
      validOrder({ currency: 'USD', transactions: [{ payment_method: 'ideal' }] }),
      403,
      'transactions[0].payment_method',
      /does not accept USD/,
    ],
    [
      validOrder({
        customer: { ...validOrder().customer, country: 'DE' },
        order_lines: lines,
        transactions: [{ payment_method: 'afterpay' }],
      }),
      400,
      'customer.country',
      /afterpay is not available in DE/,
    ],
    [validOrder({ currency: 'SEK', transactions: [{ payment_method: 'swish' }] }), 201, '', /^/],
    [
      validOrder({ currency: 'SEK', transactions: [{ payment_method: 'bancontact' }] }),
      403,
      'transactions[0].payment_method',
      /bancontact does not accept SEK/,
    ],
    [
      validOrder({ transactions: [{ payment_method: 'ideal', payment_method_details: { issuer_id: 'ING BANK N.V.' } }] }),
      400,
      'transactions[0].payment_method_details.issuer_id',
      /issuer_id ING BANK N\.V\. is not an iDEAL bank identifier/,
    ],
    [
      validOrder({ transactions: [{ payment_method: 'paypal', payment_method_details: { issuer_id: 'INGBNL2A' } }] }),
      400,
      'transactions[0].payment_method_details.issuer_id',
      /paypal takes no issuer_id/,
    ],
    [
      validOrder({ customer: { email_address: 'a@example.com' }, transactions: [{ payment_method: 'afterpay' }] }),
      400,
      'order_lines',
      /afterpay needs order_lines, customer\.first_name, customer\.last_name, customer\.address, customer\.postal_code, customer\.country/,
    ],
    [
      validOrder({ amount: 400, order_lines: [{ ...lines[0], amount: 400 }], transactions: [{ payment_method: 'afterpay' }] }),
      400,
      'amount',
      /takes amounts from 500/,
    ],
    [
      validOrder({ order_lines: lines.slice(0, 1), transactions: [{ payment_method: 'klarna-pay-later' }] }),
      400,
      'order_lines',
      /adding up to the amount 1995/,
    ],
    [
      validOrder({ transactions: [{ payment_method: 'ideal', capture_mode: 'manual' }] }),
      400,
      'transactions[0].capture_mode',
      /not supported for ideal/,
    ],
  ];
  for (const [body, status, field, value] of cases) {
    const res = await t.api('POST', '/v1/orders/', body);
    assert.equal(res.status, status, `${field}: ${res.text}`);
    if (status === 201) continue; // the control: the same shape within the rules is taken
    assert.equal(res.body.error.field, field);
    assert.match(res.body.error.value, value);
  }
  const live = await t.newProject('live');
  await assert.rejects(
    setActiveMethods(t.svc.ctx, live.project_id, ['credit-card', 'ideal']),
    /payment method ideal is available in test projects only/,
  );
  const liveAll = await setActiveMethods(t.svc.ctx, live.project_id, 'all');
  assert.ok(liveAll.payment_methods.includes('amex') && !liveAll.payment_methods.includes('ideal'));
  const other = await t.newProject();
  const inactive = await t.api('POST', '/v1/orders/', idealOrder(), { key: other.api_key });
  assert.equal(inactive.status, 403);
  assert.equal(inactive.body.error.value, 'payment method ideal is not active in this project');
});

test('a new test project takes every method at once (iDEAL first); project methods narrows it; a live project stays explicit', async () => {
  // as `npm start` and `tender project create` make it (the helper's projects are narrowed to the card)
  const sandbox = await createProject(t.svc.ctx, { name: 'Fresh shop', mode: 'test' });
  const key = { key: sandbox.api_key };
  const cur = await t.api('GET', '/v1/merchants/self/projects/self/currencies/', undefined, key);
  assert.deepEqual(Object.keys(cur.body.payment_methods), [...PAYMENT_METHODS]);
  assert.deepEqual(cur.body.payment_methods.ideal, { currencies: ['EUR'] });
  const ideal = await t.api('POST', '/v1/orders/', idealOrder(), key);
  assert.equal(ideal.status, 201, ideal.text);
  assert.match(ideal.body.transactions[0].payment_url, /\/pay\//);
  await setActiveMethods(t.svc.ctx, sandbox.project_id, ['credit-card', 'bancontact']);
  const narrowed = await t.api('POST', '/v1/orders/', idealOrder(), key);
  assert.equal(narrowed.status, 403);
  assert.equal(narrowed.body.error.value, 'payment method ideal is not active in this project');
  const live = await createProject(t.svc.ctx, { name: 'Fresh live shop', mode: 'live' });
  const liveCur = await t.api('GET', '/v1/merchants/self/projects/self/currencies/', undefined, { key: live.api_key });
  assert.deepEqual(Object.keys(liveCur.body.payment_methods), ['credit-card', 'wallet-a-pay', 'wallet-b-pay']);
});

test('the iDEAL banks, the currencies per method, and PUT of a stale copy', async () => {
  const issuers = await t.api('GET', '/v1/ideal/issuers/');
  assert.equal(issuers.status, 200);
  assert.ok(issuers.body.some((i: { id: string; name: string }) => i.id === 'INGBNL2A' && i.name === 'ING'));
  const cur = await t.api('GET', '/v1/merchants/self/projects/self/currencies/');
  assert.deepEqual(cur.body.payment_methods.ideal, { currencies: ['EUR'] });
  assert.deepEqual(cur.body.payment_methods.swish, { currencies: ['SEK'] });
  const sent = await create(idealOrder());
  await choose(sent, 'open');
  // the client's copy from creation, after the order moved on: its server fields are ignored
  const put = await t.api('PUT', `/v1/orders/${sent.id}/`, { ...sent, description: 'Two mugs, gift wrapped' });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.description, 'Two mugs, gift wrapped');
  assert.equal(put.body.status, 'processing');
  const amount = await t.api('PUT', `/v1/orders/${sent.id}/`, { ...sent, amount: 1 });
  assert.equal(amount.status, 400);
  assert.equal(amount.body.error.value, 'amount is read-only and can not be changed');
});

test('amex: a card payment that takes American Express only', async () => {
  const o = await create(validOrder({ transactions: [{ payment_method: 'amex' }] }));
  const txn = o.transactions[0];
  assert.equal(txn.payment_method, 'credit-card');
  assert.equal(txn.payment_method_details.card_brand_limit, 'amex');
  const html = await page(txn.payment_url);
  const action = `/pay/${o.id}/transactions/${txn.id}/card/`;
  const card = (pan: string, cvc: string) => ({ csrf: csrfIn(html, action), name: 'Ada Lovelace', pan, expiry: '12/39', cvc });
  assert.equal(await submit(action, card('4111111111111111', '123')), `/pay/${o.id}/transactions/${txn.id}/`);
  assert.equal((await order(o.id)).transactions[0].status, 'new', 'a Visa card starts nothing');
  const amex = await submit(action, card('378282246310005', '1234'));
  assert.match(amex, /\/pay\/3ds\//);
});

test('portal: Settings turns methods on and off (unknown refused by name); test tools complete a bank transfer', async () => {
  const shop = await t.newProject();
  const c = new PortalClient(t);
  const user = await portalUser(t, shop.merchant_id);
  await c.signIn(user.email, user.password);
  const settings = `/projects/${shop.project_id}/settings/`;
  const page = await c.get(settings);
  assert.match(page.text, /id="method-ideal" name="method" value="ideal"(?![^>]*checked)[^>]*>/, 'iDEAL is offered, off');
  const saved = await c.post(`${settings}methods`, { method: 'credit-card' }, {});
  assert.equal(saved.status, 303);
  await c.get(settings);
  const form = new URLSearchParams({ csrf: c.csrf });
  for (const m of ['credit-card', 'ideal', 'bank-transfer']) form.append('method', m);
  const res = await c.req('POST', `${settings}methods`, undefined, { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(res.status, 403, 'no token, nothing saved');
  const ok = await fetch(`${c.base}${settings}methods`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  assert.equal(ok.status, 303);
  const cur = await t.api('GET', '/v1/merchants/self/projects/self/currencies/', undefined, { key: shop.api_key });
  assert.deepEqual(Object.keys(cur.body.payment_methods).sort(), ['bank-transfer', 'credit-card', 'ideal']);
  await c.get(settings);
  const unknown = await c.post(`${settings}methods`, { method: 'tikkie' });
  assert.match(decodeURIComponent(unknown.location ?? ''), /payment method tikkie is not known/);

  const o = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'bank-transfer' }] }), { key: shop.api_key });
  assert.equal(o.status, 201, o.text);
  await c.get(`/projects/${shop.project_id}/test/`);
  const wrong = await c.post(`/projects/${shop.project_id}/test/bank-transfer`, { order_id: o.body.id, amount: '5', outcome: 'paid' });
  assert.match(decodeURIComponent(wrong.location ?? ''), /transfer_error=amount 5 is not the 1995/);
  await c.get(`/projects/${shop.project_id}/test/`);
  const done = await c.post(`/projects/${shop.project_id}/test/bank-transfer`, { order_id: o.body.id, amount: '1995', outcome: 'paid' });
  assert.match(done.location ?? '', /transfer=completed/);
  assert.equal((await t.api('GET', `/v1/orders/${o.body.id}/`, undefined, { key: shop.api_key })).body.status, 'completed');
});

test('search and the CSV report name each method', async () => {
  const shop = await t.newProject();
  await setActiveMethods(t.svc.ctx, shop.project_id, 'all');
  const made: Record<string, string> = {};
  for (const m of ['ideal', 'bancontact', 'bank-transfer']) {
    const res = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: m }] }), { key: shop.api_key });
    assert.equal(res.status, 201, res.text);
    made[m] = res.body.id;
  }
  const found = await t.api('POST', '/v1/search/orders/', { query: 'transactions.payment_method:ideal' }, { key: shop.api_key });
  assert.equal(found.status, 200, found.text);
  assert.deepEqual(
    found.body.orders.map((o: { id: string }) => o.id),
    [made.ideal],
  );
  const csv = await t.api('POST', '/v1/search/orders/?format=csv', { query: '*' }, { key: shop.api_key });
  assert.equal(csv.status, 200);
  for (const m of Object.keys(made)) assert.match(csv.text, new RegExp(`,${m},`), m);
});

test('CLI: project methods sets the methods by name, or all; an unknown name is refused by name', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tender-methods-'));
  const env = embeddedEnv(dir);
  try {
    const made = await runTender(['project', 'create', '--name', 'Shop', '--mode', 'test', '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    const { project_id } = JSON.parse(made.stdout);
    const set = await runTender(
      ['project', 'methods', '--project', project_id, '--methods', 'credit-card, ideal,bancontact', '--json'],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout).payment_methods, ['credit-card', 'ideal', 'bancontact']);
    const bad = await runTender(['project', 'methods', '--project', project_id, '--methods', 'ideal,tikkie'], env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /payment method tikkie is not known/);
    const all = await runTender(['project', 'methods', '--project', project_id, '--methods', 'all', '--json'], env);
    assert.equal(JSON.parse(all.stdout).payment_methods.length, 19);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pay-now: the transaction page lists the methods; the one chosen becomes that transaction', async () => {
  const o = await create(
    validOrder({ customer: { ...validOrder().customer, locale: 'en_GB' }, transactions: [{ payment_method: 'pay-now' }] }),
  );
  const txn = o.transactions[0];
  assert.equal(txn.payment_method, 'pay-now');
  const html = await page(txn.payment_url);
  assert.ok(html.includes('data-method="ideal"') && html.includes('data-method="credit-card"'));
  const action = `/pay/${o.id}/method/`;
  const form = html.split('<form').find((f) => f.includes(`action="${action}"`))!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(form)![1];
  const to = await submit(action, { csrf, transaction_id: txn.id, payment_method: 'ideal' });
  assert.equal(to, `/pay/${o.id}/transactions/${txn.id}/`);
  const chosen = await order(o.id);
  assert.equal(chosen.transactions.length, 1);
  assert.equal(chosen.transactions[0].payment_method, 'ideal');
  await choose(chosen, 'paid', { issuer_id: 'SNSBNL2A' });
  assert.equal((await order(o.id)).status, 'completed');
});
