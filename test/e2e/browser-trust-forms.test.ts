import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostedSuite, viewports } from '../helpers/hosted-suite.ts';
import { desktopPage, phonePage } from '../helpers/browser.ts';

/**
 * The card form a customer trusts (issue 19), in a real browser with axe-core: POST/redirect/GET
 * after form errors (Back never resubmits), the form working with scripting off, and with
 * scripting on grouping, the vault's brand, checks on leaving a field, a 4-digit American
 * Express code and a busy Pay button.
 */

const h = hostedSuite();

test('submit the card form empty, fix it, pay, go Back: the order page again, never a resubmission', { timeout: 180_000 }, async () => {
  const found: string[] = [];
  for (const [viewport, open] of Object.entries(viewports)) {
    const o = await h.newOrder();
    const { page } = await open(h.browser);
    try {
      await page.goto(o.order_url);
      await page.locator('li[data-method="credit-card"] summary').click();
      // past the page's own checks, as a h.browser without scripting sends it
      await page.locator('form[data-card-form]').evaluate((f) => (f as HTMLFormElement).submit());
      // POST/redirect/GET: the errors are on the order page's own URL
      await page.locator('#pan-error').waitFor();
      assert.equal(page.url(), o.order_url);
      assert.match(await page.getByRole('alert').innerText(), /Please correct the fields/);
      await h.audit(page, found, viewport);
      await page.getByLabel('Card number').fill('4111111111111111');
      await page.getByLabel('Expiry date').fill('12/34');
      await page.getByLabel('Security code').fill('123');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${h.shopUrl}/return**`);
      assert.equal((await h.getOrder(o.id)).status, 'completed');
      const back = await page.goBack();
      assert.equal(back?.status(), 200, 'a page, not "Confirm Form Resubmission"');
      assert.equal(page.url(), o.order_url);
      await page.getByRole('heading', { name: 'Payment received' }).waitFor();
      assert.doesNotMatch(await page.locator('body').innerText(), /4111 1111 1111 1111/, 'no test-card hint once paid');
      await h.audit(page, found, viewport);
    } finally {
      await page.context().close();
    }
  }
  assert.deepEqual(found, []);
});

test('scripting off: the form still works: errors from the server, then 4111111111111111 pays', { timeout: 120_000 }, async () => {
  const o = await h.newOrder();
  const { page } = await desktopPage(h.browser, { javaScriptEnabled: false });
  await page.setViewportSize({ width: 375, height: 740 });
  try {
    await page.goto(o.order_url);
    await page.locator('li[data-method="credit-card"] summary').click();
    await page.getByLabel('Card number').fill('4111 1111 1111 1112');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.locator('#pan-error').waitFor();
    assert.equal(page.url(), o.order_url);
    await page.getByLabel('Card number').fill('4111111111111111');
    await page.getByLabel('Expiry date').fill('12/34');
    await page.getByLabel('Security code').fill('123');
    await page.getByLabel('Name on card').fill('Ada Lovelace');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL(`${h.shopUrl}/return**`);
    assert.equal((await h.getOrder(o.id)).status, 'completed');
    await page.goBack();
    assert.equal(page.url(), o.order_url);
    await page.getByRole('heading', { name: 'Payment received' }).waitFor();
  } finally {
    await page.context().close();
  }
});

test(
  'scripting on: the number is grouped and its brand shown, errors follow the typing, Pay turns busy',
  { timeout: 120_000 },
  async () => {
    const o = await h.newOrder();
    const { page, cspErrors, pageErrors } = await phonePage(h.browser);
    const found: string[] = [];
    try {
      await page.goto(o.order_url);
      await page.locator('li[data-method="credit-card"] summary').click();
      const pan = page.getByLabel('Card number');
      await pan.pressSequentially('4111111111111111');
      assert.equal(await pan.inputValue(), '4111 1111 1111 1111');
      assert.equal(await page.locator('#pan-brand').innerText(), 'Visa');
      const expiry = page.getByLabel('Expiry date');
      await expiry.pressSequentially('1234');
      assert.equal(await expiry.inputValue(), '12/34');
      await h.audit(page, found, 'phone, typing');

      // checked on leaving a field; the error goes as soon as the field is right
      await pan.fill('');
      await pan.pressSequentially('4111111111111112');
      await page.getByLabel('Name on card').focus();
      await page.locator('#pan-error').waitFor();
      assert.match(await page.locator('#pan-error').innerText(), /not valid/);
      assert.equal(await pan.getAttribute('aria-invalid'), 'true');
      await h.audit(page, found, 'phone, field error');
      await pan.fill('4111111111111111');
      assert.equal(await page.locator('#pan-error').count(), 0);
      assert.equal(await pan.getAttribute('aria-invalid'), null);

      // American Express: 4-digit code, and the hint says where it is
      await pan.fill('');
      await pan.pressSequentially('378282246310005');
      assert.equal(await pan.inputValue(), '3782 822463 10005');
      assert.equal(await page.locator('#pan-brand').innerText(), 'American Express');
      assert.equal(await page.getByLabel('Security code').getAttribute('maxlength'), '4');
      assert.match(await page.locator('#cvc-hint').innerText(), /4 digits on the front/);

      await page.getByLabel('Security code').fill('1234');
      await page.getByLabel('Name on card').fill('Ada Lovelace');
      // Pay is busy and disabled while the payment goes: a listener after the page's own reports it
      const seen: string[] = [];
      page.on('console', (m) => seen.push(m.text()));
      await page.locator('form[data-card-form]').evaluate((f) =>
        f.addEventListener('submit', () => {
          const b = f.querySelector('button[type=submit]') as HTMLButtonElement;
          console.log(`pay button: disabled=${b.disabled} text=${b.textContent}`);
        }),
      );
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${h.shopUrl}/return**`);
      assert.ok(seen.includes('pay button: disabled=true text=Paying…'), seen.join('\n'));
      const paid = await h.getOrder(o.id);
      assert.equal(paid.status, 'completed', 'an Amex card pays with a 4-digit code');
      assert.equal(paid.transactions[0].payment_method_brand, 'amex');
      assert.deepEqual([...cspErrors, ...pageErrors], []);
    } finally {
      await page.context().close();
    }
    assert.deepEqual(found, []);
  },
);
