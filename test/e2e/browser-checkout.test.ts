import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { phonePage, startBrowserSuite } from '../helpers/browser.ts';
import type { Browser, Page } from 'playwright-core';
import { validOrder, type TestService } from '../helpers/service.ts';

/**
 * A customer in a real browser (Debian's headless Chromium) pays orders created without a
 * transaction on the hosted page: frictionless, 3-D Secure challenge (right and wrong code)
 * and a declined card.
 */

let t: TestService;
let browser: Browser;
let shopUrl: string;
let suite: Awaited<ReturnType<typeof startBrowserSuite>>;

before(async () => {
  // the merchant return page shows the query it was sent
  suite = await startBrowserSuite((req) => `<p id="query">${new URL(req.url ?? '/', 'http://x').search.replace(/[<>&"]/g, '')}</p>`);
  ({ t, browser } = suite);
  shopUrl = suite.shop.url;
});
after(() => suite?.close());

async function createOrder(over: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/v1/orders/', validOrder({ customer: { ...validOrder().customer, locale: 'en-GB' }, ...over }));
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.transactions, []);
  return res.body as { id: string; order_url: string };
}

const getOrder = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;

const phone = async (): Promise<Page> => (await phonePage(browser)).page;

/** Opens the order page, chooses the card (when several methods are listed) and fills the form. */
async function fillCard(page: Page, orderUrl: string, pan: string) {
  await page.goto(orderUrl);
  const chooser = page.locator('li[data-method="credit-card"] details:not([open]) > summary');
  if (await chooser.count()) await chooser.click();
  await page.getByLabel('Card number').fill(pan);
  await page.getByLabel('Expiry date').fill('12/34');
  await page.getByLabel('Security code').fill('123');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
}

test('pays with 4111111111111111 and lands on the merchant return_url', { timeout: 120_000 }, async () => {
  const order = await createOrder({ return_url: `${shopUrl}/return?cart=7` });
  const page = await phone();
  try {
    await fillCard(page, order.order_url, '4111 1111 1111 1111');
    await page.screenshot({ path: '/tmp/checkout.png', fullPage: true });
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(`${shopUrl}/return**`);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('cart'), '7');
    assert.equal(url.searchParams.get('order_id'), order.id);
    assert.equal(url.searchParams.get('project_id'), t.project.project_id);
    const o = await getOrder(order.id);
    assert.equal(o.status, 'completed');
    assert.equal(o.transactions[0].status, 'accepted');
    assert.equal(o.transactions[0].payment_method_details.truncated_pan, '411111******1111');
  } finally {
    await page.context().close();
  }
});

test('challenge card with the right code completes; with a wrong code it is declined', { timeout: 120_000 }, async () => {
  const right = await createOrder({ return_url: `${shopUrl}/return` });
  const page = await phone();
  try {
    await fillCard(page, right.order_url, '4000002760003184');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByLabel('Verification code').fill('1234');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${shopUrl}/return**`);
    const o = await getOrder(right.id);
    assert.equal(o.status, 'completed');
    assert.equal(o.transactions[0].status, 'accepted');

    // a wrong code on order_url: the customer stays on the order's page, which may take another attempt
    const wrong = await createOrder({ return_url: `${shopUrl}/return` });
    await fillCard(page, wrong.order_url, '4000002760003184');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByLabel('Verification code').fill('0000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`**/pay/${wrong.id}/`);
    assert.match(await page.locator('[data-retry]').innerText(), /did not go through/);
    const w = await getOrder(wrong.id);
    assert.equal(w.status, 'new');
    assert.equal(w.transactions[0].status, 'declined');
    assert.equal(w.transactions[0].reason, 'authentication_failed');
  } finally {
    await page.context().close();
  }
});

test(
  'a declined card keeps the customer on the order page with a plain message; a typo is shown at its field first',
  { timeout: 120_000 },
  async () => {
    const order = await createOrder({ return_url: undefined, customer: { ...validOrder().customer, locale: 'nl-NL' } });
    const page = await phone();
    try {
      await page.goto(order.order_url);
      const chooser = page.locator('li[data-method="credit-card"] details:not([open]) > summary');
      if (await chooser.count()) await chooser.click();
      await page.getByLabel('Kaartnummer').fill('4000 0000 0000 0003');
      await page.getByLabel('Vervaldatum').fill('12/34');
      await page.getByLabel('CVC-code').fill('123');
      await page.getByLabel('Naam op de kaart').fill('Ada Lovelace');
      await page.getByRole('button', { name: /^Betaal / }).click();
      // the page's script checks first (the server's rules, its words): the error sits next to the card number, which is focused
      await page.locator('#pan-error').waitFor();
      assert.match(await page.locator('#pan-error').innerText(), /niet geldig/);
      assert.equal(await page.getByLabel('Kaartnummer').getAttribute('aria-invalid'), 'true');
      assert.equal(await page.getByLabel('Naam op de kaart').inputValue(), 'Ada Lovelace');
      assert.equal(await page.evaluate(() => document.activeElement?.id), 'pan');
      assert.deepEqual((await getOrder(order.id)).transactions, []);

      await page.getByLabel('Kaartnummer').fill('4000000000000002');
      await page.getByLabel('CVC-code').fill('123');
      await page.getByRole('button', { name: /^Betaal / }).click();
      await page.waitForURL(`**/pay/${order.id}/`);
      assert.match(await page.locator('[data-retry]').innerText(), /De vorige poging is niet gelukt/);
      assert.doesNotMatch(await page.content(), /geweigerd|declined/i, 'no issuer detail');
      await page.locator('#pan').waitFor({ state: 'attached' }); // every method again, the card form among them
      const o = await getOrder(order.id);
      assert.equal(o.status, 'new');
      assert.equal(o.transactions[0].status, 'declined');
      assert.equal(o.transactions[0].reason, 'declined');
    } finally {
      await page.context().close();
    }
  },
);

test(
  'after a declined card the next attempt pays the order; "Back to the shop" cancels it to failure_url; no error on the way',
  { timeout: 120_000 },
  async () => {
    const outbox = async (id: string) =>
      (await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [id])).map((r) => r.status);
    const paid = await createOrder({ return_url: `${shopUrl}/return` });
    const left = await createOrder({ return_url: `${shopUrl}/return`, failure_url: `${shopUrl}/failed` });
    const page = await phone();
    try {
      await fillCard(page, paid.order_url, '4000000000000002');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`**/pay/${paid.id}/`);
      await fillCard(page, paid.order_url, '4111111111111111');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${shopUrl}/return**`);
      const o = await getOrder(paid.id);
      assert.equal(o.status, 'completed');
      assert.deepEqual(
        o.transactions.map((x: { status: string }) => x.status),
        ['declined', 'accepted'],
      );
      assert.ok(!(await outbox(paid.id)).includes('error'), `${await outbox(paid.id)}`);

      await fillCard(page, left.order_url, '4000000000000002');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`**/pay/${left.id}/`);
      assert.equal((await getOrder(left.id)).status, 'new');
      await page.getByRole('button', { name: 'Back to the shop' }).click();
      await page.waitForURL(`${shopUrl}/failed**`);
      assert.equal(new URL(page.url()).searchParams.get('order_id'), left.id);
      assert.equal((await getOrder(left.id)).status, 'cancelled');
      const changes = await outbox(left.id);
      assert.equal(changes.at(-1), 'cancelled');
      assert.ok(!changes.includes('error'), `${changes}`);
    } finally {
      await page.context().close();
    }
  },
);
