import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostedSuite, viewports } from '../helpers/hosted-suite.ts';
import { phonePage } from '../helpers/browser.ts';

/**
 * The checkout a customer trusts (issue 19), in a real browser (Debian's Chromium) with axe-core
 * on every page visited: wallets on payment links pay to completion (their sheet asks for the
 * billing address the link does not have), and orders without customer data offer both wallets.
 */

const h = hostedSuite();

test('on a payment link, each wallet pays to completion and the link ends completed', { timeout: 240_000 }, async () => {
  const found: string[] = [];
  for (const [wallet, label, viewport] of [
    ['wallet-a-pay', 'Wallet A Pay', 'phone'],
    ['wallet-b-pay', 'Wallet B Pay', 'desktop'],
  ] as const) {
    const link = await h.t.api('POST', '/v1/paymentlinks/', {
      merchant_order_id: `inv-${wallet}`,
      amount: 4250,
      currency: 'EUR',
      return_url: `${h.shopUrl}/return`,
    });
    assert.equal(link.status, 201, link.text);
    const { page, cspErrors, pageErrors } = await viewports[viewport](h.browser);
    try {
      await page.goto(link.body.payment_url);
      await h.audit(page, found, viewport);
      await page.getByRole('button', { name: `Pay with ${label}` }).click();
      // the link has no billing address: the wallet's sheet asks for it (no dead end)
      await page.getByRole('button', { name: label }).click();
      await page.getByRole('heading', { name: `${label} (sandbox)` }).waitFor();
      await h.audit(page, found, viewport);
      // a missing field comes back next to it
      await h.fillBilling(page);
      await page.getByLabel('City').fill('');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.locator('#city-error').waitFor();
      await h.audit(page, found, viewport);
      await page.getByLabel('City').fill('Amsterdam');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${h.shopUrl}/return**`);
      const orderId = new URL(page.url()).searchParams.get('order_id')!;
      const o = await h.getOrder(orderId);
      assert.equal(o.status, 'completed');
      assert.equal(o.transactions[0].payment_method, wallet);
      assert.equal(o.customer.city, 'Amsterdam');
      const after = (await h.t.api('GET', `/v1/paymentlinks/${link.body.id}/`)).body;
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
  const o = await h.newOrder();
  const found = await h.auditAll([o.order_url]);
  const { page } = await phonePage(h.browser);
  try {
    await page.goto(o.order_url);
    assert.deepEqual(await page.locator('li.method').evaluateAll((els) => els.map((e) => e.getAttribute('data-method'))), [
      'credit-card',
      'wallet-a-pay',
      'wallet-b-pay',
    ]);
    assert.equal(await page.getByRole('button', { name: 'Wallet A Pay' }).isVisible(), true);
    assert.equal(await page.getByRole('button', { name: 'Wallet B Pay' }).isVisible(), true);
  } finally {
    await page.context().close();
  }
  assert.deepEqual(found, []);
});
