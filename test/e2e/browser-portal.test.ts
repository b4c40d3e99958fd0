import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { portalContext, portalUser, signInPage } from '../helpers/portal.ts';

/** The merchant portal's acceptance flows, in Debian's chromium. */

const run = promisify(execFile);
let t: TestService;
let browser: Browser;
let user: { email: string; password: string };
before(async () => {
  t = await startTestService();
  browser = await launchBrowser();
  user = await portalUser(t);
});
after(async () => {
  await browser?.close();
  await t?.close();
});

/** The HTTP status curl gets for the project's own resource with this key. */
async function curlStatus(key: string): Promise<string> {
  const { stdout } = await run('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '-u',
    `${key}:`,
    `${t.url}/v1/merchants/self/projects/self/`,
  ]);
  return stdout;
}

test('Settings > API Key: a key made in the portal works with curl (200) until it is revoked there (401)', async () => {
  const { context, page, problems } = await portalContext(browser);
  await signInPage(page, t, user);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  const section = page.getByRole('region', { name: 'API Key' });
  await section.getByRole('heading', { name: 'API Key' }).waitFor();
  await section.getByRole('button', { name: 'Create a new key' }).click();
  const shown = page.locator('#new-api-key');
  await shown.waitFor();
  const key = (await shown.innerText()).trim();
  assert.match(key, /^test_[A-Za-z0-9_-]{43}$/);
  assert.equal(await page.getByRole('button', { name: 'Copy: API Key' }).isVisible(), true, 'the copy button shows once the script runs');

  assert.equal(await curlStatus(key), '200');
  // the hint row of the new key: prefix and last characters, used just now
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'API Key' }).waitFor();
  assert.equal(await page.locator('#new-api-key').count(), 0, 'the key is shown only once');
  const hint = `${key.slice(0, 9)}…${key.slice(-4)}`;
  const row = page.getByRole('region', { name: 'API Key' }).getByRole('row').filter({ hasText: hint });
  assert.doesNotMatch(await row.innerText(), /Never/, 'last used is recorded');
  await row.getByRole('button', { name: /Revoke/ }).click();
  await page.getByText('The key is revoked.').waitFor();
  assert.equal(await curlStatus(key), '401');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Orders: find one by merchant_order_id, refund part of it; the refund is in its timeline and in the API', async () => {
  const paid = await payOrder(t, { merchant_order_id: 'portal-refund-1', amount: 5000 });
  await payOrder(t, { merchant_order_id: 'portal-other-2', amount: 700 });
  assert.equal(paid.status, 'completed');
  const { context, page, problems } = await portalContext(browser);
  await signInPage(page, t, user);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
  await page.getByRole('searchbox').fill('portal-refund-1');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('1 order', { exact: true }).waitFor();
  await page.getByRole('link', { name: 'portal-refund-1' }).click();
  await page.getByRole('heading', { name: 'Order portal-refund-1' }).waitFor();

  await page.getByLabel('Amount', { exact: true }).fill('12.34');
  await page.getByRole('button', { name: 'Refund', exact: true }).click();
  await page.getByRole('heading', { name: 'Confirm: Refund' }).waitFor();
  assert.match(await page.locator('main').innerText(), /Refund €12\.34 on order portal-refund-1\?/);
  await page.getByRole('button', { name: 'Confirm refund' }).click();
  await page.getByText('Refunded.').waitFor();

  const api = await t.api('GET', `/v1/orders/${paid.id}/`);
  assert.equal(api.body.refunded_amount, 1234);
  assert.equal(api.body.refund_orders.length, 1);
  const refundId = api.body.refund_orders[0];
  const refund = (await t.api('GET', `/v1/orders/${refundId}/`)).body;
  assert.equal(refund.amount, 1234);
  const timeline = page.getByRole('region', { name: 'Timeline' });
  const entry = timeline.getByRole('listitem').filter({ hasText: 'refund:' });
  assert.match(await entry.innerText(), /€12\.34/);
  assert.equal(await entry.getByRole('link').getAttribute('href'), `/portal/projects/${t.project.project_id}/orders/${refundId}/`);

  // the confirmation form sent again (back, resubmit) does not refund twice
  await page.goBack();
  await page.getByRole('button', { name: 'Confirm refund' }).click();
  await page.getByText('Refunded.').waitFor();
  assert.equal((await t.api('GET', `/v1/orders/${paid.id}/`)).body.refund_orders.length, 1);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a manual pre-authorization is captured from the portal; a second capture shows the API error', async () => {
  const auth = await payOrder(t, { merchant_order_id: 'portal-capture-1', amount: 2500 }, { capture_mode: 'manual' });
  assert.equal(auth.transactions[0].is_capturable, true);
  const { context, page, problems } = await portalContext(browser);
  await signInPage(page, t, user);
  const orderUrl = `${t.config.portalUrl}/projects/${t.project.project_id}/orders/${auth.id}/`;
  await page.goto(orderUrl);
  // a second tab on the same order, opened before the capture
  const stale = await context.newPage();
  await stale.goto(orderUrl);

  await page.getByRole('button', { name: 'Capture' }).click();
  await page.getByRole('button', { name: 'Confirm capture' }).click();
  await page.getByText('Captured.').waitFor();
  const after = (await t.api('GET', `/v1/orders/${auth.id}/`)).body;
  assert.equal(after.related_orders.length, 1);
  assert.equal(await page.getByRole('button', { name: 'Capture' }).count(), 0, 'nothing left to capture');

  await stale.getByRole('button', { name: 'Capture' }).click();
  await stale.getByRole('button', { name: 'Confirm capture' }).click();
  const error = stale.getByRole('alert');
  await error.waitFor();
  assert.match(await error.innerText(), /^CanNotCaptureTransaction: /);
  assert.equal((await t.api('GET', `/v1/orders/${auth.id}/`)).body.related_orders.length, 1, 'still one capture');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a payment link made in the portal is paid by a customer in another browser; the portal shows it completed', async () => {
  const { context, page, problems } = await portalContext(browser);
  await signInPage(page, t, user);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payment links' }).click();
  await page.getByLabel('Reference').fill('invoice-portal-1');
  await page.getByLabel('Amount').fill('42.50');
  await page.getByLabel('Description').fill('Portal invoice');
  await page.getByRole('button', { name: 'Create payment link' }).click();
  await page.getByText('Payment link created.').waitFor();
  const url = (await page.locator('#link-url').innerText()).trim();
  assert.match(url, /\/pay\/links\/[0-9a-f-]{36}\/$/);
  assert.equal(await page.locator('[data-link-status]').getAttribute('data-link-status'), 'new');

  const customer = await browser.newContext({ locale: 'en-GB' });
  const pay = await customer.newPage();
  await pay.goto(url);
  await pay.getByRole('button', { name: 'Pay with Card' }).click();
  await pay.getByLabel('Card number').fill('4111111111111111');
  await pay.getByLabel('Expiry date').fill('12/34');
  await pay.getByLabel('Security code').fill('123');
  await pay.getByLabel('Name on card').fill('Ada Lovelace');
  await pay.getByRole('button', { name: /^Pay / }).click();
  await pay.getByRole('heading', { name: 'Payment received' }).waitFor();
  await customer.close();

  await page.reload();
  assert.equal(await page.locator('[data-link-status]').getAttribute('data-link-status'), 'completed');
  const orders = page.getByRole('region', { name: 'Orders of this link' });
  assert.match(await orders.innerText(), /completed/);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payment links' }).click();
  assert.match(await page.getByRole('row').filter({ hasText: 'invoice-portal-1' }).innerText(), /Completed/);
  assert.deepEqual(problems, []);
  await context.close();
});
