import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, phonePage, startBrowserSuite } from '../helpers/browser.ts';
import { portalUser, signInPage } from '../helpers/portal.ts';
import { validOrder, type TestService } from '../helpers/service.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';

/**
 * The plugins' payment methods in Debian's Chromium, phone-sized, axe clean: the hosted page with
 * every method, a declined card then iDEAL on the same order, iDEAL cancelled and expired, Klarna
 * pay later authorized, captured and refunded, a bank transfer completed from the portal's test tools.
 */

let t: TestService;
let browser: Browser;
let shopUrl: string;
let suite: Awaited<ReturnType<typeof startBrowserSuite>>;

before(async () => {
  suite = await startBrowserSuite();
  ({ t, browser } = suite);
  shopUrl = suite.shop.url;
  await setActiveMethods(t.svc.ctx, t.project.project_id, 'all');
});
after(() => suite?.close());

const english = { ...validOrder().customer, locale: 'en-GB' };
async function createOrder(over: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/v1/orders/', validOrder({ customer: english, return_url: `${shopUrl}/return`, ...over }));
  assert.equal(res.status, 201, res.text);
  return res.body;
}
const getOrder = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

async function clean(page: Page, what: string) {
  assert.deepEqual(await axeViolations(page), [], what);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${what}: nothing wider than the phone`);
}

test(
  'every method on a phone; a past expiry refused in the browser; a declined card, then iDEAL on the same order',
  { timeout: 180_000 },
  async () => {
    const order = await createOrder({ return_url: undefined });
    const { page, cspErrors, pageErrors } = await phonePage(browser);
    try {
      await page.goto(order.order_url);
      const listed = await page.locator('li.method').count();
      assert.ok(listed >= 10, `ten methods or more (${listed})`);
      await page.getByRole('button', { name: /iDEAL/ }).waitFor();
      await page.getByRole('button', { name: /Bank transfer/ }).waitFor();
      await clean(page, 'the order page with every method');

      await page.locator('li[data-method="credit-card"] summary').click();
      await page.getByLabel('Expiry date').fill('01/20');
      await page.getByLabel('Security code').focus();
      await page.getByText('This card has expired').first().waitFor();
      await page.getByLabel('Card number').fill('4000 0000 0000 0002');
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('Security code').fill('123');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`**/pay/${order.id}/result/`);
      await page.getByRole('heading', { name: 'Payment failed' }).waitFor();
      await clean(page, 'the failed attempt');

      await page.getByRole('link', { name: /try again/i }).click();
      await page.locator('[data-retry]').waitFor();
      await page.getByRole('button', { name: /iDEAL/ }).click();
      await page.getByLabel('Choose your bank').selectOption('RABONL2U');
      await clean(page, 'the iDEAL sandbox page');
      await page.getByRole('button', { name: 'Paid' }).click();
      await page.waitForURL(`**/pay/${order.id}/result/`);
      await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      const o = await getOrder(order.id);
      assert.equal(o.status, 'completed');
      assert.deepEqual(
        o.transactions.map((x: { payment_method: string; status: string }) => `${x.payment_method} ${x.status}`),
        ['credit-card declined', 'ideal completed'],
      );
      assert.equal(o.transactions[1].payment_method_details.issuer_id, 'RABONL2U');
      assert.deepEqual(cspErrors, []);
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.context().close();
    }
  },
);

test('iDEAL cancelled and expired go back to the shop; Klarna pay later authorized, captured, refunded', { timeout: 180_000 }, async () => {
  const { page } = await phonePage(browser);
  try {
    for (const [button, status] of [
      ['Cancelled', 'cancelled'],
      ['Expired', 'expired'],
    ] as const) {
      const o = await createOrder({
        failure_url: `${shopUrl}/failed`,
        transactions: [{ payment_method: 'ideal', payment_method_details: { issuer_id: 'INGBNL2A' } }],
      });
      await page.goto(o.transactions[0].payment_url);
      await page.getByRole('button', { name: button }).click();
      await page.waitForURL(`${shopUrl}/failed?**`);
      assert.equal((await getOrder(o.id)).status, status);
    }

    const lines = [
      { name: 'Mug', type: 'physical', amount: 1000, currency: 'EUR', quantity: 1, vat_percentage: 2100, merchant_order_line_id: '1' },
      { name: 'Tea', type: 'physical', amount: 995, currency: 'EUR', quantity: 1, vat_percentage: 900, merchant_order_line_id: '2' },
    ];
    const k = await createOrder({ order_lines: lines, transactions: [{ payment_method: 'klarna-pay-later' }] });
    await page.goto(k.transactions[0].payment_url);
    await clean(page, 'the Klarna sandbox page');
    await page.getByRole('button', { name: 'Authorized' }).click();
    await page.waitForURL(`${shopUrl}/return?**`);
    assert.equal((await getOrder(k.id)).transactions[0].status, 'accepted');
    const cap = await t.api('POST', `/v1/orders/${k.id}/transactions/${k.transactions[0].id}/captures/`);
    assert.equal(cap.status, 201, cap.text);
    const refund = await t.api('POST', `/v1/orders/${k.id}/refunds/`, { amount: 995, order_lines: [lines[1]] });
    assert.equal(refund.status, 201, refund.text);
    const after = await getOrder(k.id);
    assert.ok(after.flags.includes('has-captures'));
    assert.equal(after.refunded_amount, 995);
  } finally {
    await page.context().close();
  }
});

test('a bank transfer: its details on the page, completed from the portal test tools', { timeout: 180_000 }, async () => {
  const o = await createOrder({ transactions: [{ payment_method: 'bank-transfer' }] });
  const { page } = await phonePage(browser);
  try {
    await page.goto(o.transactions[0].payment_url);
    await page.getByText(o.transactions[0].payment_method_details.creditor_iban).waitFor();
    await clean(page, 'the bank transfer page');
    await signInPage(page, t, await portalUser(t));
    await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/test/`);
    await page.getByLabel('Order id').fill(o.id);
    await page.getByLabel('Amount received (minor units)').fill('1995');
    await page.getByRole('button', { name: 'Money arrived' }).click();
    await page.getByText('The order is now completed.').waitFor();
    assert.equal((await getOrder(o.id)).status, 'completed');
  } finally {
    await page.context().close();
  }
});
