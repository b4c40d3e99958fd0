import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, desktopPage, phonePage, startBrowserSuite } from '../helpers/browser.ts';
import { validOrder, type TestService } from '../helpers/service.ts';

/**
 * The checkout a customer trusts (issue 19), in a real browser (Debian's Chromium) with axe-core
 * on every page visited: wallets on payment links pay to completion (their sheet asks for the
 * billing address the link does not have), and orders without customer data offer both wallets.
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

