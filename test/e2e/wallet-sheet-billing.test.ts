// The sandbox wallet sheet of an order without a billing address asks for it, as a real wallet
// sheet hands it over: refused fields come back next to their field (POST/redirect/GET) and
// start nothing; a complete address is stored on the order and the wallet pays.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { checkBilling } from '../../src/services/wallets/pay.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

interface Res {
  status: number;
  location: string;
  cookie: string;
  html: string;
}
async function call(path: string, init: { method?: string; form?: Record<string, string>; cookie?: string } = {}): Promise<Res> {
  const res = await fetch(new URL(path, t.url), {
    method: init.method ?? (init.form ? 'POST' : 'GET'),
    redirect: 'manual',
    headers: {
      'accept-language': 'en',
      ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(init.cookie ? { cookie: init.cookie } : {}),
    },
    body: init.form ? new URLSearchParams(init.form).toString() : undefined,
  });
  return {
    status: res.status,
    location: res.headers.get('location') ?? '',
    cookie: (res.headers.get('set-cookie') ?? '').split(';')[0],
    html: await res.text(),
  };
}
const csrfOf = (html: string, action: string) =>
  new RegExp(`action="${action}"[^>]*>\\s*<input type="hidden" name="csrf" value="([^"]+)"`).exec(html)?.[1] ?? '';
const order = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

for (const wallet of ['wallet-b-pay', 'wallet-a-pay'] as const) {
  test(`${wallet}: an order without a customer is paid through the sheet, which collects the billing address`, async () => {
    const o = (await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, return_url: 'https://shop.example/return' }))).body;
    const page = await call(`/pay/${o.id}/`);
    assert.match(page.html, new RegExp(`data-method="${wallet}"`), 'offered without a billing address');
    const start = await call(`/pay/${o.id}/${wallet}/sheet/`, { form: { csrf: csrfOf(page.html, `/pay/${o.id}/${wallet}/sheet/`) } });
    assert.equal(start.status, 303);
    assert.equal(start.location, `/pay/${o.id}/${wallet}/sheet/`, 'the sheet first, no transaction yet');
    assert.deepEqual((await order(o.id)).transactions, []);

    const sheet = await call(start.location);
    assert.equal(sheet.status, 200);
    assert.match(sheet.html, /<legend>Billing address<\/legend>/);
    for (const f of ['first_name', 'last_name', 'address', 'postal_code', 'city', 'country', 'state'])
      assert.match(sheet.html, new RegExp(`<label for="${f}">`));
    assert.match(sheet.html, /<option value="NL">Netherlands<\/option>/);
    const csrf = csrfOf(sheet.html, `/pay/${o.id}/${wallet}/sheet/pay/`);

    // incomplete and wrong: back to the sheet with each error at its field, nothing started
    const bad = await call(`/pay/${o.id}/${wallet}/sheet/pay/`, {
      form: {
        csrf,
        card: '0',
        first_name: 'Ada',
        last_name: '',
        address: 'Damrak 1',
        postal_code: '1012 lg',
        city: 'Amsterdam',
        country: 'US',
        state: 'XX',
      },
    });
    assert.equal(bad.status, 303);
    assert.equal(bad.location, `/pay/${o.id}/${wallet}/sheet/`);
    const shown = await call(bad.location, { cookie: bad.cookie });
    assert.match(shown.html, /id="last_name-error">Fill in this field/);
    assert.match(shown.html, /id="state-error">This is not a state of the chosen country/);
    assert.match(shown.html, /<input type="text" id="last_name" name="last_name" aria-describedby="last_name-error" aria-invalid="true"/);
    assert.match(shown.html, /id="first_name"[^>]*value="Ada"/, 'what was typed is kept');
    assert.match(shown.html, /<option value="US" selected>/);
    assert.deepEqual((await order(o.id)).transactions, []);

    // complete: stored on the order, and the wallet pays
    const good = await call(`/pay/${o.id}/${wallet}/sheet/pay/`, {
      form: {
        csrf,
        card: '0',
        auth_method: 'CRYPTOGRAM_3DS',
        first_name: 'Ada',
        last_name: 'Lovelace',
        address: 'Damrak 1',
        postal_code: '1012 lg',
        city: 'Amsterdam',
        country: 'NL',
        state: '',
      },
    });
    assert.equal(good.status, 303, good.html);
    assert.match(good.location, /^https:\/\/shop\.example\/return\?order_id=/);
    const paid = await order(o.id);
    assert.equal(paid.status, 'completed');
    assert.equal(paid.transactions[0].payment_method, wallet);
    assert.deepEqual(
      { ...paid.customer },
      {
        first_name: 'Ada',
        last_name: 'Lovelace',
        address: 'Damrak 1',
        postal_code: '1012 LG',
        city: 'Amsterdam',
        country: 'NL',
        address_type: 'billing',
      },
    );
  });
}

test('an order that has its billing address goes straight to the transaction sheet', async () => {
  const o = (await t.api('POST', '/v1/orders/', validOrder())).body;
  const page = await call(`/pay/${o.id}/`);
  const start = await call(`/pay/${o.id}/wallet-b-pay/sheet/`, { form: { csrf: csrfOf(page.html, `/pay/${o.id}/wallet-b-pay/sheet/`) } });
  const txn = (await order(o.id)).transactions[0];
  assert.equal(start.location, `/pay/${o.id}/wallet-b-pay/${txn.id}/sheet/`);
  assert.doesNotMatch((await call(start.location)).html, /Billing address/);
});

test("billing rules of the sheet: the order's own", () => {
  const all = ['first_name', 'last_name', 'address', 'postal_code', 'city', 'country', 'state'] as const;
  const ok = checkBilling(all, {
    first_name: ' Ada ',
    last_name: 'Lovelace',
    address: 'Main St 1',
    postal_code: '10001',
    city: 'New York',
    country: 'us',
    state: 'ny',
  });
  assert.deepEqual(ok.billing, {
    first_name: 'Ada',
    last_name: 'Lovelace',
    address: 'Main St 1',
    postal_code: '10001',
    city: 'New York',
    country: 'US',
    state: 'NY',
  });
  assert.equal(checkBilling(all, { ...ok.billing, state: '' }).errors.state, 'state_required');
  assert.equal(checkBilling(all, { ...ok.billing, country: 'XX' }).errors.country, 'billing_format');
  assert.equal(checkBilling(all, { ...ok.billing, postal_code: '1012-LG' }).errors.postal_code, 'billing_format');
  assert.equal(checkBilling(all, { ...ok.billing, first_name: 'x'.repeat(121) }).errors.first_name, 'billing_format');
  assert.equal(checkBilling(all, { ...ok.billing, city: '' }).errors.city, 'billing_required');
  // a state where the country has none is dropped, not refused
  assert.deepEqual(checkBilling(all, { ...ok.billing, country: 'NL', state: 'NY' }).billing?.state, undefined);
});
