import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, desktopPage, phonePage, startBrowserSuite } from '../helpers/browser.ts';
import { validOrder, type TestService } from '../helpers/service.ts';

/**
 * The checkout a customer trusts, in a real browser (Debian's Chromium) with axe-core on every
 * page: wallets on payment links pay to completion, wallets on orders without customer data,
 * POST/redirect/GET after form errors (Back never resubmits), help while typing with scripting
 * on and a working form with scripting off, American Express with 4 digits, and no
 * accessibility violation on any hosted page or on /docs, phone and desktop.
 */

let t: TestService;
let browser: Browser;
let shopUrl: string;
let suite: Awaited<ReturnType<typeof startBrowserSuite>>;

before(async () => {
  // a late decline waits for the test clock (run-due-jobs), not for real seconds
  suite = await startBrowserSuite(undefined, { env: { LATE_DECLINE_MS: '600000' } });
  ({ t, browser } = suite);
  shopUrl = suite.shop.url;
});
after(() => suite?.close());

const getOrder = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;
const viewports = { phone: phonePage, desktop: desktopPage } as const;

async function newOrder(over: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, return_url: `${shopUrl}/return`, ...over }));
  assert.equal(res.status, 201, res.text);
  return res.body as { id: string; order_url: string; transactions: { id: string }[] };
}

/** axe on the page as it is now; the violations are collected and asserted empty. */
async function audit(page: Page, found: string[], label: string) {
  for (const v of await axeViolations(page)) found.push(`${label}: ${v}`);
}

/** Opens each URL in a fresh phone and desktop page and runs axe on it. */
async function auditAll(urls: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const [name, open] of Object.entries(viewports)) {
    const { page, cspErrors, pageErrors } = await open(browser);
    try {
      for (const url of urls) {
        await page.goto(url);
        await audit(page, found, name);
      }
      assert.deepEqual([...cspErrors, ...pageErrors], [], `${name}: no CSP complaint, no script error`);
    } finally {
      await page.context().close();
    }
  }
  return found;
}

/** The sandbox sheet of an order without a billing address: the address, then pay. */
async function fillBilling(page: Page) {
  await page.getByLabel('First name').fill('Ada');
  await page.getByLabel('Last name').fill('Lovelace');
  await page.getByLabel('Street and number').fill('Damrak 1');
  await page.getByLabel('Postal code').fill('1012 LG');
  await page.getByLabel('City').fill('Amsterdam');
  await page.getByLabel('Country').selectOption('NL');
}

test('on a payment link, each wallet pays to completion and the link ends completed', { timeout: 240_000 }, async () => {
  const found: string[] = [];
  for (const [wallet, label, viewport] of [
    ['wallet-a-pay', 'Wallet A Pay', 'phone'],
    ['wallet-b-pay', 'Wallet B Pay', 'desktop'],
  ] as const) {
    const link = await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: `inv-${wallet}`, amount: 4250, currency: 'EUR', return_url: `${shopUrl}/return` });
    assert.equal(link.status, 201, link.text);
    const { page, cspErrors, pageErrors } = await viewports[viewport](browser);
    try {
      await page.goto(link.body.payment_url);
      await audit(page, found, viewport);
      await page.getByRole('button', { name: `Pay with ${label}` }).click();
      // the link has no billing address: the wallet's sheet asks for it (no dead end)
      await page.getByRole('button', { name: label }).click();
      await page.getByRole('heading', { name: `${label} (sandbox)` }).waitFor();
      await audit(page, found, viewport);
      // a missing field comes back next to it
      await fillBilling(page);
      await page.getByLabel('City').fill('');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.locator('#city-error').waitFor();
      await audit(page, found, viewport);
      await page.getByLabel('City').fill('Amsterdam');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${shopUrl}/return**`);
      const orderId = new URL(page.url()).searchParams.get('order_id')!;
      const o = await getOrder(orderId);
      assert.equal(o.status, 'completed');
      assert.equal(o.transactions[0].payment_method, wallet);
      assert.equal(o.customer.city, 'Amsterdam');
      const after = (await t.api('GET', `/v1/paymentlinks/${link.body.id}/`)).body;
      assert.equal(after.status, 'completed');
      assert.equal(after.completed_order_id, orderId);
      assert.deepEqual([...cspErrors, ...pageErrors], []);
    } finally {
      await page.context().close();
    }
  }
  assert.deepEqual(found, []);
});

test('an order without customer data offers the card and both wallets', { timeout: 120_000 }, async () => {
  const o = await newOrder();
  const found = await auditAll([o.order_url]);
  const { page } = await phonePage(browser);
  try {
    await page.goto(o.order_url);
    assert.deepEqual(await page.locator('li.method').evaluateAll((els) => els.map((e) => e.getAttribute('data-method'))), ['credit-card', 'wallet-a-pay', 'wallet-b-pay']);
    assert.equal(await page.getByRole('button', { name: 'Wallet A Pay' }).isVisible(), true);
    assert.equal(await page.getByRole('button', { name: 'Wallet B Pay' }).isVisible(), true);
  } finally {
    await page.context().close();
  }
  assert.deepEqual(found, []);
});

test('submit the card form empty, fix it, pay, go Back: the order page again, never a resubmission', { timeout: 180_000 }, async () => {
  const found: string[] = [];
  for (const [viewport, open] of Object.entries(viewports)) {
    const o = await newOrder();
    const { page } = await open(browser);
    try {
      await page.goto(o.order_url);
      await page.locator('li[data-method="credit-card"] summary').click();
      // past the page's own checks, as a browser without scripting sends it
      await page.locator('form[data-card-form]').evaluate((f) => (f as HTMLFormElement).submit());
      // POST/redirect/GET: the errors are on the order page's own URL
      await page.locator('#pan-error').waitFor();
      assert.equal(page.url(), o.order_url);
      assert.match(await page.getByRole('alert').innerText(), /Please correct the fields/);
      await audit(page, found, viewport);
      await page.getByLabel('Card number').fill('4111111111111111');
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('Security code').fill('123');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${shopUrl}/return**`);
      assert.equal((await getOrder(o.id)).status, 'completed');
      const back = await page.goBack();
      assert.equal(back?.status(), 200, 'a page, not "Confirm Form Resubmission"');
      assert.equal(page.url(), o.order_url);
      await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      assert.doesNotMatch(await page.locator('body').innerText(), /4111 1111 1111 1111/, 'no test-card hint once paid');
      await audit(page, found, viewport);
    } finally {
      await page.context().close();
    }
  }
  assert.deepEqual(found, []);
});

test('scripting off: the form still works: errors from the server, then 4111111111111111 pays', { timeout: 120_000 }, async () => {
  const o = await newOrder();
  const { page } = await desktopPage(browser, { javaScriptEnabled: false });
  await page.setViewportSize({ width: 375, height: 740 });
  try {
    await page.goto(o.order_url);
    await page.locator('li[data-method="credit-card"] summary').click();
    await page.getByLabel('Card number').fill('4111 1111 1111 1112');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.locator('#pan-error').waitFor();
    assert.equal(page.url(), o.order_url);
    await page.getByLabel('Card number').fill('4111111111111111');
    await page.getByLabel('Expiry date').fill('12/34');
    await page.getByLabel('Security code').fill('123');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(`${shopUrl}/return**`);
    assert.equal((await getOrder(o.id)).status, 'completed');
    await page.goBack();
    assert.equal(page.url(), o.order_url);
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
  } finally {
    await page.context().close();
  }
});

test('scripting on: the number is grouped and its brand shown, errors follow the typing, Pay turns busy', { timeout: 120_000 }, async () => {
  const o = await newOrder();
  const { page, cspErrors, pageErrors } = await phonePage(browser);
  const found: string[] = [];
  try {
    await page.goto(o.order_url);
    await page.locator('li[data-method="credit-card"] summary').click();
    const pan = page.getByLabel('Card number');
    await pan.pressSequentially('4111111111111111');
    assert.equal(await pan.inputValue(), '4111 1111 1111 1111');
    assert.equal(await page.locator('#pan-brand').innerText(), 'Visa');
    const expiry = page.getByLabel('Expiry date');
    await expiry.pressSequentially('1234');
    assert.equal(await expiry.inputValue(), '12/34');
    await audit(page, found, 'phone, typing');

    // checked on leaving a field; the error goes as soon as the field is right
    await pan.fill('');
    await pan.pressSequentially('4111111111111112');
    await page.getByLabel('Name on card').focus();
    await page.locator('#pan-error').waitFor();
    assert.match(await page.locator('#pan-error').innerText(), /not valid/);
    assert.equal(await pan.getAttribute('aria-invalid'), 'true');
    await audit(page, found, 'phone, field error');
    await pan.fill('4111111111111111');
    assert.equal(await page.locator('#pan-error').count(), 0);
    assert.equal(await pan.getAttribute('aria-invalid'), null);

    // American Express: 4-digit code, and the hint says where it is
    await pan.fill('');
    await pan.pressSequentially('378282246310005');
    assert.equal(await pan.inputValue(), '3782 822463 10005');
    assert.equal(await page.locator('#pan-brand').innerText(), 'American Express');
    assert.equal(await page.getByLabel('Security code').getAttribute('maxlength'), '4');
    assert.match(await page.locator('#cvc-hint').innerText(), /4 digits on the front/);

    await page.getByLabel('Security code').fill('1234');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    // Pay is busy and disabled while the payment goes: a listener after the page's own reports it
    const seen: string[] = [];
    page.on('console', (m) => seen.push(m.text()));
    await page.locator('form[data-card-form]').evaluate((f) =>
      f.addEventListener('submit', () => {
        const b = f.querySelector('button[type=submit]') as HTMLButtonElement;
        console.log(`pay button: disabled=${b.disabled} text=${b.textContent}`);
      }),
    );
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(`${shopUrl}/return**`);
    assert.ok(seen.includes('pay button: disabled=true text=Paying…'), seen.join('\n'));
    const paid = await getOrder(o.id);
    assert.equal(paid.status, 'completed', 'an Amex card pays with a 4-digit code');
    assert.equal(paid.transactions[0].payment_method_brand, 'amex');
    assert.deepEqual([...cspErrors, ...pageErrors], []);
  } finally {
    await page.context().close();
  }
  assert.deepEqual(found, []);
});

test('axe-core: no violation on any hosted page nor on /docs, phone and desktop', { timeout: 300_000 }, async () => {
  const urls: string[] = [];
  // the link page and the sheets of an order without a billing address
  const link = (await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'inv-axe', amount: 123456789, currency: 'USD' })).body;
  urls.push(link.payment_url);
  const bare = await newOrder({ customer: { locale: 'nl-NL' }, currency: 'USD', amount: 123456789 });
  urls.push(bare.order_url, `${t.url}/pay/${bare.id}/wallet-a-pay/sheet/`, `${t.url}/pay/${bare.id}/wallet-b-pay/sheet/`);
  // a wallet transaction's page and its sheet
  const walletOrder = (await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'wallet-b-pay' }] }))).body;
  urls.push(walletOrder.transactions[0].payment_url, `${t.url}/pay/${walletOrder.id}/wallet-b-pay/${walletOrder.transactions[0].id}/sheet/`);
  // the 3-D Secure challenge, the processing page (late decline) and the result pages
  const pay = async (pan: string) => {
    const o = await newOrder({ return_url: undefined });
    const { page } = await phonePage(browser);
    try {
      await page.goto(o.order_url);
      await page.locator('li[data-method="credit-card"] summary').click();
      await page.getByLabel('Card number').fill(pan);
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('Security code').fill('123');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForLoadState('load');
      return { o, url: page.url() };
    } finally {
      await page.context().close();
    }
  };
  const challenge = await pay('4000002760003184');
  urls.push(challenge.url, challenge.o.order_url);
  urls.push((await pay('4111111111111111')).url, (await pay('4000000000000002')).url);
  const cancelled = await newOrder();
  await t.api('DELETE', `/v1/orders/${cancelled.id}/`);
  urls.push(`${t.url}/pay/${cancelled.id}/result/`);
  // the pages of nothing
  const nobody = '01a210f4-0000-7000-8000-000000000000';
  urls.push(`${t.url}/pay/${nobody}/`, `${t.url}/pay/3ds/${nobody}/`, `${t.url}/pay/links/${nobody}/`);
  urls.push(`${t.url}/docs`);

  // the processing page (a late decline): no meta refresh, it says what it waits for, our script
  // asks for the outcome and the page updates when it is known
  const late = await pay('4000000000000341');
  assert.match(late.url, /\/result\/$/);
  assert.deepEqual(await auditAll([late.url]), []);
  const { page } = await phonePage(browser);
  try {
    await page.goto(late.url);
    assert.equal(await page.locator('meta[http-equiv="refresh"]').count(), 0);
    await page.getByText('We are waiting for the bank').waitFor();
    await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' });
    await page.getByRole('heading', { name: 'Payment failed' }).waitFor({ timeout: 30_000 });
  } finally {
    await page.context().close();
  }

  const found = await auditAll(urls);
  assert.deepEqual(found, []);

  // an order that expired without a transaction
  const expired = await newOrder({ expiration_period: 'PT1M' });
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT2M' });
  assert.equal((await getOrder(expired.id)).status, 'expired');
  assert.deepEqual(await auditAll([expired.order_url]), []);
});
