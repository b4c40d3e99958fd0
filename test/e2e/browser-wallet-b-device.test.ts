import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser, phonePage } from '../helpers/browser.ts';
import { validOrder, type TestService } from '../helpers/service.ts';
import { prodRoot, startWalletBService, walletBClient } from '../helpers/wallet-b.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';
import { assertPaidByDevice, reported } from '../helpers/wallets.ts';
import type { Json } from '../helpers/json.ts';

/**
 * A customer in a real browser (Debian's headless Chromium) pays a live order without a
 * customer with the wallet-b-pay device button of wallets.js, driven by a stand-in for the
 * browser's Payment Request API that answers as the wallet does: the token, and the billing
 * address the payment request asked for (paymentMethodData.info.billingAddress).
 */

const simulatedLive = new Set<string>();
const liveConnector = (project: { id: string }) => (simulatedLive.has(project.id) ? simulator : undefined);

let t: TestService;
let browser: Browser;
before(async () => {
  t = await startWalletBService({ liveConnector });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await t?.close();
});

const { sealed } = walletBClient(() => t);
const LIVE_SHOP = 'https://shop.example';

/** The Payment Request API as a device with the wallet offers it; window.__billingAddress is what its sheet hands over. */
const standIn = (token: string, billingAddress: unknown) => `(() => {
  const token = ${JSON.stringify(token)};
  window.__billingAddress = ${JSON.stringify(billingAddress)};
  class PaymentRequest {
    constructor(methods, details) { window.__walletB('created', { methods, details }); }
    canMakePayment() { return Promise.resolve(true); }
    show() {
      const info = { cardNetwork: 'VISA', cardDetails: '1111', billingAddress: window.__billingAddress };
      return Promise.resolve({
        details: { apiVersion: 2, apiVersionMinor: 0, paymentMethodData: { type: 'CARD', description: 'Visa 1111', info, tokenizationData: { type: 'DIRECT', token } } },
        complete: (result) => { window.__walletB('completed', result); return Promise.resolve(); },
      });
    }
  }
  window.PaymentRequest = PaymentRequest;
})();`;

test(
  'a live order without a customer: the wallet is asked for the billing address; an incomplete one is refused in the page, a complete one is stored and paid',
  { timeout: 120_000 },
  async () => {
    const live = await t.newProject('live');
    const created = await t.api('POST', '/v1/orders/', validOrder({ customer: undefined, return_url: `${LIVE_SHOP}/return` }), {
      key: live.api_key,
    });
    assert.equal(created.status, 201, created.text);
    const o = created.body;
    const token = await sealed({}, { root: prodRoot, key: live.api_key });
    const address = {
      name: 'Ada Lovelace',
      address1: 'Damrak 1',
      address2: '',
      address3: '',
      locality: 'Amsterdam',
      postalCode: '1012 lg',
      countryCode: 'NL',
      administrativeArea: '',
      sortingCode: '',
    };

    const events: [string, Json][] = [];
    const { page, cspErrors, pageErrors } = await phonePage(browser);
    simulatedLive.add(live.project_id);
    try {
      await page.route(`${LIVE_SHOP}/**`, (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>Shop</title><h1>Thank you for your order</h1>' }),
      );
      await page.exposeFunction('__walletB', (kind: string, value: unknown) => void events.push([kind, value]));
      await page.addInitScript(standIn(token, { ...address, name: 'Ada' }));
      await page.goto(o.order_url);
      const button = page.locator('[data-wallet="wallet-b-pay"] button');
      await button.waitFor({ state: 'visible' });
      await reported(() => events.length > 0);
      const [kind, request] = events[0];
      assert.equal(kind, 'created');
      const parameters = request.methods[0].data.allowedPaymentMethods[0].parameters;
      assert.deepEqual(
        [parameters.billingAddressRequired, parameters.billingAddressParameters],
        [true, { format: 'FULL' }],
        'the wallet is asked for the billing address',
      );

      // one word of name: no last name, refused; the page says what is missing, nothing starts
      await button.click();
      const alert = page.locator('[data-wallet="wallet-b-pay"] [data-wallet-error]');
      await alert.waitFor({ state: 'visible' });
      assert.equal(
        await alert.textContent(),
        'The wallet did not hand over the complete billing address this payment needs (Name). Add it in the wallet, or choose another method.',
      );
      await reported(() => events.at(-1)?.[0] === 'completed');
      assert.deepEqual(events.at(-1), ['completed', 'fail']);
      await page.waitForFunction(() => !document.querySelector<HTMLButtonElement>('[data-wallet="wallet-b-pay"] button')!.disabled);
      const untouched = (await t.api('GET', `/v1/orders/${o.id}/`, undefined, { key: live.api_key })).body;
      assert.deepEqual([untouched.transactions, untouched.customer], [[], undefined], 'nothing stored, nothing started');

      // the whole name: stored on the order, paid
      await page.evaluate((a) => ((window as unknown as { __billingAddress: unknown }).__billingAddress = a), address);
      await button.click();
      await page.waitForURL(`${LIVE_SHOP}/return**`);
      await reported(() => events.at(-1)?.[1] === 'success');
      assert.deepEqual(events.at(-1), ['completed', 'success']);
      const paid = (await t.api('GET', `/v1/orders/${o.id}/`, undefined, { key: live.api_key })).body;
      assertPaidByDevice(paid, 'wallet-b-pay');
      assert.deepEqual(pageErrors, []);
      assert.deepEqual(cspErrors, []);
    } finally {
      simulatedLive.delete(live.project_id);
      await page.context().close();
    }
  },
);
