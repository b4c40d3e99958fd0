import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, desktopPage, phonePage, startBrowserSuite } from '../helpers/browser.ts';
import { validOrder, type TestService } from '../helpers/service.ts';

/**
 * axe-core on every hosted page (order, link, wallet sheets, 3-D Secure, processing, results,
 * not found), phone and desktop (/docs: browser-axe-docs.test.ts): zero violations of any impact. The processing
 * page polls with our script instead of a meta refresh.
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

test('axe-core: no violation on any hosted page, phone and desktop', { timeout: 290_000 }, async () => {
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
