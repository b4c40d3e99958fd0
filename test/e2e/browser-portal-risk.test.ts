import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { assertAccessible, portalUser, signInPage } from '../helpers/portal.ts';

/**
 * The Risk page in Chromium (docs/risk.md "Lists"): an owner adds entries through the form and
 * removes one; axe-core finds nothing on the page, empty, with entries and with a field error, in
 * English and Dutch, at 390 and 1280 px, and the page never scrolls sideways. One browser, one
 * context per width.
 */
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

for (const width of [390, 1280]) {
  test(`the Risk page at ${width} px, en and nl: add, a field error, remove; accessible and no sideways scrolling`, async () => {
    const shop = await t.newProject('test');
    const user = await portalUser(t, shop.merchant_id);
    const context = await browser.newContext({
      viewport: { width, height: 800 },
      locale: 'en-GB',
      ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => void (/Content Security Policy|Refused to/i.test(m.text()) && problems.push(m.text())));
    const check = async (what: string) => {
      await assertAccessible(page, `${what} at ${width} px`);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${what} at ${width} px: ${wide}px of horizontal scrolling`);
    };
    await signInPage(page, t, user);
    await page.getByRole('link', { name: 'Risk' }).click();
    await page.getByRole('heading', { name: 'Risk', level: 1 }).waitFor();
    await check('the empty Risk page');

    await page.getByLabel('List', { exact: true }).selectOption('block');
    await page.getByLabel('Kind', { exact: true }).selectOption('network');
    await page.getByLabel(/^Value/).fill('2001:db8:1234::/48');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Added to the list.' }).waitFor();
    await page.getByLabel('Kind', { exact: true }).selectOption('card');
    await page.getByLabel(/^Value/).fill('4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('•••• 4242', { exact: true }).waitFor();
    await check('the Risk page with entries');

    await page.getByLabel('Kind', { exact: true }).selectOption('bin');
    await page.getByLabel(/^Value/).fill('41');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('alert').waitFor();
    await check('the Risk page with a field error');

    await page.getByRole('button', { name: /Remove Address or network 2001:db8:1234::\/48/ }).click();
    await page.getByRole('status').filter({ hasText: 'Removed from the list.' }).waitFor();
    assert.equal(await page.getByText('2001:db8:1234::/48').count(), 0);

    await page.goto(`${t.config.portalUrl}/projects/${shop.project_id}/risk/?lang=nl`);
    await page.getByRole('heading', { name: 'Risico', level: 1 }).waitFor();
    await check('the Risk page in Dutch');
    await page.getByLabel('Soort', { exact: true }).selectOption('email');
    await page.getByLabel(/^Waarde/).fill('geen e-mail');
    await page.getByRole('button', { name: 'Toevoegen' }).click();
    await page.getByRole('alert').waitFor();
    await check('the Risk page in Dutch with a field error');
    assert.deepEqual(problems, [], 'no CSP complaint or script error');
    await context.close();
  });
}
