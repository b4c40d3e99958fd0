import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startBrowserSuite, phonePage } from '../helpers/browser.ts';
import type { Browser } from 'playwright-core';
import { validOrder, type TestService } from '../helpers/service.ts';

/**
 * A customer in a real browser (Debian's headless Chromium) pays on the hosted page through
 * the sandbox wallet sheet of a test project: a device-bound card (CRYPTOGRAM_3DS, no 3-D
 * Secure), a card-only one through the 3-D Secure challenge (PAN_ONLY), and from a wallet
 * transaction's payment_url.
 */

let t: TestService;
let browser: Browser;
let shopUrl: string;
let suite: Awaited<ReturnType<typeof startBrowserSuite>>;

before(async () => {
  suite = await startBrowserSuite();
  ({ t, browser } = suite);
  shopUrl = suite.shop.url;
});
after(() => suite?.close());

const getOrder = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

const phone = () => phonePage(browser);

async function order(over: Record<string, unknown> = {}) {
  const res = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({ customer: { ...validOrder().customer, locale: 'en-GB' }, return_url: `${shopUrl}/return`, ...over }),
  );
  assert.equal(res.status, 201, res.text);
  return res.body;
}

test('pays an order through the sandbox wallet sheet: device-bound card, no 3-D Secure', { timeout: 120_000 }, async () => {
  const o = await order();
  const { page, cspErrors } = await phone();
  try {
    await page.goto(o.order_url);
    // a test project pays offline: the sheet, no device wallet and no wallet script
    assert.equal(await page.locator('[data-wallet="wallet-b-pay"]').count(), 0);
    assert.equal(await page.locator('script[src="/pay/assets/wallets.js"]').count(), 0);
    const sandbox = page.getByRole('button', { name: 'Wallet B Pay' });
    assert.equal(await sandbox.count(), 1);
    await sandbox.click();

    await page.waitForURL(/\/wallet-b-pay\/[0-9a-f-]{36}\/sheet\/$/);
    await page.getByRole('heading', { name: 'Wallet B Pay (sandbox)' }).waitFor();
    assert.equal(await page.getByLabel(/4111 1111 1111 1111/).isChecked(), true);
    assert.equal(await page.getByLabel(/CRYPTOGRAM_3DS/).isChecked(), true);
    await page.screenshot({ path: '/tmp/wallet-sheet.png', fullPage: true });
    await page.getByRole('button', { name: /^Pay / }).click();

    await page.waitForURL(`${shopUrl}/return**`);
    assert.equal(new URL(page.url()).searchParams.get('order_id'), o.id);
    const paid = await getOrder(o.id);
    assert.equal(paid.status, 'completed');
    const [txn] = paid.transactions;
    assert.equal(txn.payment_method, 'wallet-b-pay');
    assert.equal(txn.status, 'accepted');
    assert.equal(txn.payment_method_details.liability_shift, true);
    assert.equal(txn.payment_method_details.truncated_pan, '411111******1111');
    assert.deepEqual(cspErrors, []);
  } finally {
    await page.context().close();
  }
});

test('a live order page: the device wallet button stays hidden in a browser without that wallet', { timeout: 120_000 }, async () => {
  const live = await t.newProject('live');
  const res = await t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, locale: 'en-GB' } }), {
    key: live.api_key,
  });
  assert.equal(res.status, 201, res.text);
  const { page, cspErrors } = await phone();
  try {
    await page.goto(res.body.order_url);
    // wallets.js ran (script-src 'self'), asked the browser, and found no wallet
    await page.waitForFunction(() => (window as unknown as { __tenderWallets?: boolean }).__tenderWallets === true);
    await page.waitForLoadState('networkidle');
    assert.equal(await page.locator('[data-wallet="wallet-b-pay"]').count(), 1);
    assert.equal(await page.locator('[data-wallet="wallet-b-pay"]').isHidden(), true);
    assert.equal(await page.getByRole('button', { name: 'Wallet B Pay' }).count(), 0);
    assert.equal(await page.locator('[data-wallet-sandbox]').count(), 0, 'no sandbox sheet in live projects');
    assert.deepEqual(cspErrors, []);
  } finally {
    await page.context().close();
  }
});

test('a card-only wallet card (PAN_ONLY) passes the 3-D Secure challenge', { timeout: 120_000 }, async () => {
  const o = await order();
  const { page, cspErrors } = await phone();
  try {
    await page.goto(o.order_url);
    await page.getByRole('button', { name: 'Wallet B Pay' }).click();
    await page.getByLabel(/4000 0027 6000 3184/).check();
    await page.getByLabel(/PAN_ONLY/).check();
    await page.getByRole('button', { name: /^Pay / }).click();

    await page.getByLabel('Verification code').fill('1234');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${shopUrl}/return**`);
    const paid = await getOrder(o.id);
    assert.equal(paid.status, 'completed');
    assert.equal(paid.transactions[0].payment_method_details.liability_shift, true);
    assert.equal(paid.transactions[0].payment_method_details.truncated_pan, '400000******3184');
    assert.deepEqual(cspErrors, []);
  } finally {
    await page.context().close();
  }
});

test("a wallet transaction's payment_url offers the sheet; a declined card ends on the failure page", { timeout: 120_000 }, async () => {
  const o = await order({ transactions: [{ payment_method: 'wallet-b-pay' }], failure_url: `${shopUrl}/failed` });
  const { page } = await phone();
  try {
    await page.goto(o.transactions[0].payment_url);
    await page.getByRole('link', { name: 'Wallet B Pay' }).click();
    await page.getByLabel(/4000 0000 0000 0002/).check();
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(`${shopUrl}/failed**`);
    const failed = await getOrder(o.id);
    assert.equal(failed.status, 'error');
    assert.equal(failed.transactions[0].reason, 'declined');
  } finally {
    await page.context().close();
  }
});
