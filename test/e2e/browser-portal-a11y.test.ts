import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { base32Decode, totp } from '../../src/domain/totp.ts';
import { assertAccessible, portalContext, portalUser, signInPage, VIEWPORTS } from '../helpers/portal.ts';
import type { Json } from '../helpers/json.ts';

/** axe-core on every portal page, on a phone and on a desktop; and the portal by keyboard alone. */

let t: TestService;
let browser: Browser;
let user: { email: string; password: string };
let paid: Json;
let linkId: string;
before(async () => {
  t = await startTestService();
  browser = await launchBrowser();
  user = await portalUser(t);
  paid = await payOrder(t, { merchant_order_id: 'a11y-1', amount: 2000, webhook_url: 'http://127.0.0.1:9/hook' });
  const auth = await payOrder(t, { merchant_order_id: 'a11y-2', amount: 1500 }, { capture_mode: 'manual' });
  await t.api('POST', `/v1/orders/${auth.id}/transactions/${auth.transactions[0].id}/captures/`);
  await t.api('POST', `/v1/orders/${paid.id}/refunds/`, { amount: 500 });
  const link = await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'a11y-link', amount: 990, currency: 'EUR' });
  linkId = link.body.id;
});
after(async () => {
  await browser?.close();
  await t?.close();
});

for (const kind of Object.keys(VIEWPORTS) as (keyof typeof VIEWPORTS)[]) {
  test(`axe-core: no violations on any portal page (${kind})`, async () => {
    const own = await portalUser(t); // its own: the two-factor set-up below changes the user
    const { context, page, problems } = await portalContext(browser, kind);
    const p = `${t.config.portalUrl}/projects/${t.project.project_id}`;
    const check = async (url: string, what: string) => {
      await page.goto(url);
      await assertAccessible(page, what);
    };
    await check(`${t.config.portalUrl}/sign-in`, 'sign-in');
    await page.getByLabel('Email').fill(own.email);
    await page.getByLabel('Password').fill('wrong password here');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await assertAccessible(page, 'sign-in with an error');
    await signInPage(page, t, own);
    await assertAccessible(page, 'home');
    await check(`${p}/orders/`, 'orders');
    await check(`${p}/orders/?q=${encodeURIComponent('status:(')}`, 'orders with a query error');
    await check(`${p}/orders/${paid.id}/`, 'order with a refund and webhook deliveries');
    await check(`${p}/orders/${paid.id}/confirm?action=refund&amount=1.00`, 'confirmation');
    await check(`${p}/orders/${paid.id}/confirm?action=refund&amount=oops`, 'order with a field error');
    await check(`${p}/links/`, 'payment links');
    await check(`${p}/links/${linkId}/`, 'payment link');
    await check(`${p}/settings/`, 'settings');
    await page.getByRole('button', { name: 'Create a new key' }).click();
    await page.locator('#new-api-key').waitFor();
    await assertAccessible(page, 'settings with a new key');
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    await assertAccessible(page, 'two-factor set-up with its QR code');
    await check(`${p}/test/`, 'test tools');
    // the merchant's newer pages also fit the screen: no horizontal scrolling on a phone
    const fits = async (url: string, what: string) => {
      await check(url, what);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${what} (${kind}): ${wide}px of horizontal scrolling`);
    };
    await fits(`${p}/team/`, 'team');
    await fits(`${p}/audit/`, 'audit log');
    await fits(`${p}/webhooks/`, 'webhook log');
    await fits(`${p}/webhooks/?status=failed`, 'webhook log, failed only');
    await fits(`${p}/?days=30&until=2026-11-30`, 'home over a chosen period');
    await check(`${p}/orders/00000000-0000-4000-8000-000000000000/`, 'not found');
    await check(`${p}/?lang=nl`, 'home in Dutch');
    await check(`${p}/?lang=en`, 'home in English again');
    // the second step of sign-in, for a user with two-factor authentication
    await page.goto(`${p}/settings/`);
    const secret = base32Decode((await page.locator('#totp-secret').innerText()).trim())!;
    await page.getByLabel('Authentication code').fill(totp(secret, Date.now() / 1000));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByText('Two-factor authentication is on.').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').fill(own.email);
    await page.getByLabel('Password').fill(own.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/sign-in\/code$/);
    await assertAccessible(page, 'two-factor code');
    await page.getByLabel(/^Authentication code/).fill(totp(secret, Date.now() / 1000 + 30));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(/\/projects\/[0-9a-f-]{36}\/$/);
    assert.deepEqual(problems, [], 'no CSP complaint or script error');
    await context.close();
  });
}

/** Presses Tab until the focused element matches, at most `max` times. */
async function tabTo(page: Page, matches: (el: { tag: string; text: string; label: string }) => boolean, max = 40) {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const el = await page.evaluate(() => {
      const a = document.activeElement as HTMLElement | null;
      return {
        tag: a?.tagName ?? '',
        text: (a?.textContent ?? '').trim(),
        label: a?.getAttribute('aria-label') ?? (a as HTMLInputElement | null)?.labels?.[0]?.textContent?.trim() ?? '',
      };
    });
    if (matches(el)) return;
    seen.push(`${el.tag}:${el.text || el.label}`);
  }
  throw new Error(`not reached by Tab; focus went through ${seen.join(' | ')}`);
}

test('keyboard only: sign in, reach Orders and an order, refund it', async () => {
  const { context, page } = await portalContext(browser, 'desktop');
  await page.goto(`${t.config.portalUrl}/sign-in`);
  await tabTo(page, (e) => e.label === 'Email');
  await page.keyboard.type(user.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(user.password);
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/projects\/[0-9a-f-]{36}\/$/);
  await tabTo(page, (e) => e.tag === 'A' && e.text === 'Orders');
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/orders\/$/);
  await tabTo(page, (e) => e.tag === 'A' && e.text === 'a11y-1');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Order a11y-1' }).waitFor();
  await tabTo(page, (e) => e.tag === 'BUTTON' && e.text === 'Refund');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Confirm: Refund' }).waitFor();
  await tabTo(page, (e) => e.tag === 'BUTTON' && e.text === 'Confirm refund');
  await page.keyboard.press('Enter');
  await page.getByText('Refunded.').waitFor();
  assert.equal((await t.api('GET', `/v1/orders/${paid.id}/`)).body.refunded_amount, 2000);
  await context.close();
});
