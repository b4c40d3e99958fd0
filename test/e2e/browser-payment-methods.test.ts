import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, phonePage, startBrowserSuite } from '../helpers/browser.ts';
import { portalUser, signInPage } from '../helpers/portal.ts';
import { validOrder, type TestService } from '../helpers/service.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { METHOD_TABLE, SANDBOX_METHODS } from '../../src/domain/payment-methods.ts';
import { bnplLines } from '../helpers/methods.ts';
import { payInBrowser } from '../helpers/methods-browser.ts';

/**
 * The plugins' payment methods in Debian's Chromium, phone-sized, axe clean: the hosted page with
 * every method, a declined card then iDEAL on the same order, iDEAL cancelled and expired, Klarna
 * pay later authorized, captured per order line (two captures) and refunded, a bank transfer
 * completed from the portal's test tools, and every method paid in the browser, one page reused.
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
      // the order page takes another attempt: the customer stays on it, with every method again
      await page.waitForURL(`**/pay/${order.id}/`);
      await page.locator('[data-retry]').waitFor();
      await clean(page, 'the failed attempt');
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

    const k = await createOrder({ amount: 2995, order_lines: bnplLines, transactions: [{ payment_method: 'klarna-pay-later' }] });
    await page.goto(k.transactions[0].payment_url);
    await clean(page, 'the Klarna sandbox page');
    await page.getByRole('button', { name: 'Authorized' }).click();
    await page.waitForURL(`${shopUrl}/return?**`);
    assert.equal((await getOrder(k.id)).transactions[0].status, 'accepted');
    // two shipments: one mug, then the other mug and the tea
    const captures = `/v1/orders/${k.id}/transactions/${k.transactions[0].id}/captures/`;
    const first = await t.api('POST', captures, { order_lines: [{ merchant_order_line_id: 'mug', quantity: 1 }] });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.amount, 1000);
    assert.equal((await getOrder(k.id)).transactions[0].is_capturable, true, 'the rest is still capturable');
    const second = await t.api('POST', captures, { order_lines: [{ merchant_order_line_id: 'mug' }, { merchant_order_line_id: 'tea' }] });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.amount, 1995);
    const refund = await t.api('POST', `/v1/orders/${k.id}/refunds/`, { amount: 995, order_lines: [bnplLines[1]] });
    assert.equal(refund.status, 201, refund.text);
    const after = await getOrder(k.id);
    assert.ok(after.flags.includes('has-captures'));
    assert.equal(after.transactions[0].status, 'completed');
    assert.equal(after.related_orders.length, 3, 'two captures and a refund');
    assert.equal(after.refunded_amount, 995);
    assert.deepEqual((await checkLedger(t.db, t.project.project_id)).violations, []);
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

test(
  'every method paid in the browser: its page axe clean, the order completed (BNPL authorized), refunded where it can be',
  { timeout: 300_000 },
  async () => {
    const { page, cspErrors, pageErrors } = await phonePage(browser);
    try {
      for (const method of SANDBOX_METHODS) {
        const info = METHOD_TABLE[method];
        const bnpl = info.kind === 'bnpl';
        const o = await createOrder({
          amount: 2995,
          currency: info.currencies[0],
          customer: { ...english, country: method === 'viacash' ? 'DE' : 'NL' },
          ...(bnpl ? { order_lines: bnplLines } : {}),
          transactions: [{ payment_method: method }],
        });
        const txn = o.transactions[0];
        if (info.kind === 'transfer' || info.kind === 'voucher') {
          // nothing to click: the page shows what to pay; the money arrives later (test endpoint)
          await page.goto(txn.payment_url);
          await page.getByText(txn.payment_method_details.reference).first().waitFor();
          await clean(page, `the ${method} page`);
          const paid = await t.api('POST', `/v1/test/orders/${o.id}/bank-transfer/`, { outcome: 'paid', amount: 2995 });
          assert.equal(paid.status, 200, paid.text);
        } else {
          await payInBrowser(page, txn.payment_url, {
            returnTo: `${shopUrl}/return`,
            via: method === 'pay-now' ? /iDEAL/ : undefined,
            check: (p) => clean(p, `the ${method} page`),
          });
        }
        const got = await getOrder(o.id);
        assert.equal(got.status, 'completed', method);
        // authorized (BNPL), or a card sale until it settles; the sandbox methods' sales are completed at once
        assert.equal(got.transactions[0].status, bnpl || info.kind === 'card' ? 'accepted' : 'completed', method);
        if (bnpl) assert.equal((await t.api('POST', `/v1/orders/${o.id}/transactions/${txn.id}/captures/`)).status, 201, method);
        const refund = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 995 });
        assert.equal(refund.status, info.refundable ? 201 : 422, `${method}: ${refund.text}`);
      }
      assert.deepEqual(cspErrors, []);
      assert.deepEqual(pageErrors, []);
      assert.deepEqual((await checkLedger(t.db, t.project.project_id)).violations, []);
    } finally {
      await page.context().close();
    }
  },
);
