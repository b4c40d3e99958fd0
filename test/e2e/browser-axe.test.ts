import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostedSuite } from '../helpers/hosted-suite.ts';
import { phonePage } from '../helpers/browser.ts';
import { validOrder } from '../helpers/service.ts';

/**
 * axe-core on every hosted page (order, link, wallet sheets, 3-D Secure, processing, results,
 * not found), phone and desktop (/docs: browser-axe-docs.test.ts): zero violations of any impact. The processing
 * page polls with our script instead of a meta refresh.
 */

const h = hostedSuite();

test('axe-core: no violation on any hosted page, phone and desktop', { timeout: 290_000 }, async () => {
  const urls: string[] = [];
  // the link page and the sheets of an order without a billing address
  const link = (await h.t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'inv-axe', amount: 123456789, currency: 'USD' })).body;
  urls.push(link.payment_url);
  const bare = await h.newOrder({ customer: { locale: 'nl-NL' }, currency: 'USD', amount: 123456789 });
  urls.push(bare.order_url, `${h.t.url}/pay/${bare.id}/wallet-a-pay/sheet/`, `${h.t.url}/pay/${bare.id}/wallet-b-pay/sheet/`);
  // a wallet transaction's page and its sheet
  const walletOrder = (await h.t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'wallet-b-pay' }] }))).body;
  urls.push(
    walletOrder.transactions[0].payment_url,
    `${h.t.url}/pay/${walletOrder.id}/wallet-b-pay/${walletOrder.transactions[0].id}/sheet/`,
  );
  // the 3-D Secure challenge, the processing page (late decline) and the result pages
  const pay = async (pan: string) => {
    const o = await h.newOrder({ return_url: undefined });
    const { page } = await phonePage(h.browser);
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
  const cancelled = await h.newOrder();
  await h.t.api('DELETE', `/v1/orders/${cancelled.id}/`);
  urls.push(`${h.t.url}/pay/${cancelled.id}/result/`);
  // the pages of nothing
  const nobody = '01a210f4-0000-7000-8000-000000000000';
  urls.push(`${h.t.url}/pay/${nobody}/`, `${h.t.url}/pay/3ds/${nobody}/`, `${h.t.url}/pay/links/${nobody}/`);

  // the processing page (a late decline): no meta refresh, it says what it waits for, our script
  // asks for the outcome and the page updates when it is known
  const late = await pay('4000000000000341');
  assert.match(late.url, /\/result\/$/);
  assert.deepEqual(await h.auditAll([late.url]), []);
  const { page } = await phonePage(h.browser);
  try {
    await page.goto(late.url);
    assert.equal(await page.locator('meta[http-equiv="refresh"]').count(), 0);
    await page.getByText('We are waiting for the bank').waitFor();
    await h.t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' });
    await page.getByRole('heading', { name: 'Payment failed' }).waitFor({ timeout: 30_000 });
  } finally {
    await page.context().close();
  }

  const found = await h.auditAll(urls);
  assert.deepEqual(found, []);

  // an order that expired without a transaction
  const expired = await h.newOrder({ expiration_period: 'PT1M' });
  await h.t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT2M' });
  assert.equal((await h.getOrder(expired.id)).status, 'expired');
  assert.deepEqual(await h.auditAll([expired.order_url]), []);
});

test('a large amount in Dutch (USD 1.234.567,89) fits a phone: no horizontal scrolling on the order and link pages', async () => {
  const order = await h.newOrder({ customer: { locale: 'nl-NL' }, currency: 'USD', amount: 123456789 });
  const link = (await h.t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'inv-wide', amount: 123456789, currency: 'USD' })).body;
  for (const url of [order.order_url, link.payment_url]) {
    const { page } = await phonePage(h.browser);
    try {
      await page.goto(url);
      // the order speaks its customer's Dutch; the link page the browser's language
      assert.match(await page.locator('[data-amount]').innerText(), url === order.order_url ? /1\.234\.567,89/ : /1[.,]234[.,]567[.,]89/);
      const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
      assert.ok(width.page <= width.viewport, `${url}: ${width.page} px wide on a ${width.viewport} px phone`);
    } finally {
      await page.context().close();
    }
  }
});
