import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let t: TestService;
let browser: Browser;
before(async () => {
  t = await startTestService();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** On the link page: choose the card, fill in the hosted card form and pay. */
async function payByCard(page: Page, pan: string) {
  await page.getByRole('button', { name: 'Pay with Card' }).click();
  await page.waitForURL(/\/pay\/[0-9a-f-]{36}\/transactions\/[0-9a-f-]{36}\/$/);
  await page.getByLabel('Card number').fill(pan);
  await page.getByLabel('Expiry date').fill('12/34');
  await page.getByLabel('Security code').fill('123');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
  await page.getByRole('button', { name: /^Pay / }).click();
  await page.waitForLoadState('load');
}

test('a customer pays a link: declined first, then paid on retry; the link is then completed', async () => {
  const created = await t.api('POST', '/v1/paymentlinks/', {
    merchant_order_id: 'invoice-1',
    amount: 4250,
    currency: 'EUR',
    description: 'Invoice 1',
    payment_methods: ['credit-card'],
  });
  assert.equal(created.status, 201, created.text);
  const link = created.body;

  const context = await browser.newContext({ locale: 'en-GB' });
  const page = await context.newPage();
  await page.goto(link.payment_url);
  await page.getByText('Test shop').waitFor();
  assert.match(await page.locator('body').innerText(), /€42\.50/);

  // 1. a declined card: the order's failure_url brings the customer back to the link, which says why
  await payByCard(page, '4000000000000002');
  await page.waitForURL((u) => u.href.startsWith(link.payment_url) && u.searchParams.has('order_id'));
  const failure = page.getByRole('alert');
  await failure.waitFor();
  assert.match(await failure.innerText(), /Your payment did not succeed/);
  assert.match(await failure.innerText(), /The bank declined the payment/);

  // 2. retry with a good card
  await payByCard(page, '4111111111111111');
  await page.waitForURL(/\/pay\/[0-9a-f-]{36}\/result\/$/);
  await page.getByRole('heading', { name: 'Payment received' }).waitFor();

  const after = (await t.api('GET', `/v1/paymentlinks/${link.id}/`)).body;
  assert.equal(after.status, 'completed', JSON.stringify(after));
  assert.equal(after.orders.error?.length, 1);
  assert.equal(after.orders.completed?.length, 1);
  assert.equal(after.completed_order_id, after.orders.completed[0]);
  assert.deepEqual(Object.keys(after.orders).sort(), ['completed', 'error']);
  const paid = (await t.api('GET', `/v1/orders/${after.completed_order_id}/`)).body;
  assert.equal(paid.related_payment_link_id, link.id);
  assert.equal(paid.transactions[0].status, 'accepted');
  const failed = (await t.api('GET', `/v1/orders/${after.orders.error[0]}/`)).body;
  assert.equal(failed.transactions[0].status, 'declined');
  assert.equal(failed.transactions[0].reason, 'declined');

  // 3. a second visit: already paid, nothing to press
  const again = await context.newPage();
  await again.goto(link.payment_url);
  await again.getByRole('heading', { name: 'Already paid' }).waitFor();
  assert.equal(await again.getByRole('button', { name: /Pay with/ }).count(), 0);
  assert.equal(Object.values((await t.api('GET', `/v1/paymentlinks/${link.id}/`)).body.orders).flat().length, 2);
  await context.close();
});
