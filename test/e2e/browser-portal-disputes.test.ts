import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { assertAccessible, portalUser, signInPage } from '../helpers/portal.ts';

/**
 * The Disputes page and a dispute's page in Debian's chromium, at 1280 px and on a 390 px phone,
 * in English and Dutch: axe-core clean, no horizontal scrolling, and an owner's defence with a
 * file sent through the real form (a test chargeback is the dispute).
 */

let t: TestService;
let browser: Browser;
let owner: { email: string; password: string };
const disputes: string[] = [];
const VIEWS = {
  desktop: { viewport: { width: 1280, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true },
} as const;

before(async () => {
  t = await startTestService();
  browser = await launchBrowser();
  owner = await portalUser(t);
  for (const amount of [1995, 2500]) {
    const o = await payOrder(t, { amount });
    assert.equal((await t.api('POST', `/v1/test/orders/${o.id}/chargeback/`, {})).status, 201);
    const list = (await t.api('GET', '/v1/disputes/')).body.disputes as Array<{ id: string; order_id: string }>;
    disputes.push(list.find((d) => d.order_id === o.id)!.id);
  }
});
after(async () => {
  await browser?.close();
  await t?.close();
});

async function check(page: Page, what: string) {
  await assertAccessible(page, what);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${what}: ${wide}px of horizontal scrolling`);
}

test('the Disputes list and a dispute page are accessible at 1280 and 390 px, in English and Dutch; an owner defends with a file', async () => {
  const base = `${t.config.portalUrl}/projects/${t.project.project_id}/disputes/`;
  for (const kind of ['desktop', 'phone'] as const) {
    const context = await browser.newContext({ ...VIEWS[kind], locale: 'en-GB' });
    try {
      const page = await context.newPage();
      await signInPage(page, t, owner);
      for (const lang of ['en', 'nl'] as const) {
        await page.goto(`${base}?lang=${lang}`);
        assert.equal(await page.locator('h1').textContent(), lang === 'en' ? 'Disputes' : 'Geschillen');
        assert.equal(await page.locator('[data-dispute-state="open"]').count(), 2);
        await check(page, `disputes ${kind} ${lang}`);
        await page.goto(`${base}${disputes[1]}/?lang=${lang}`);
        await check(page, `dispute ${kind} ${lang}`);
      }
    } finally {
      await context.close();
    }
  }
  // the defence through the real form, on the phone's width
  const context = await browser.newContext({ ...VIEWS.phone, locale: 'en-GB' });
  try {
    const page = await context.newPage();
    await signInPage(page, t, owner);
    await page.goto(`${base}${disputes[0]}/`);
    await page.getByLabel('Why the chargeback is wrong').fill('Delivered and signed for on 1 December.');
    await page
      .getByLabel('Evidence')
      .setInputFiles({ name: 'receipt.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%receipt\n') });
    await page.getByRole('button', { name: 'Send the defence' }).click();
    await page.getByRole('status').waitFor();
    assert.match((await page.getByRole('status').textContent()) ?? '', /Defence recorded/);
    assert.equal(await page.locator('[data-dispute-state="defended"]').count(), 1);
    assert.match((await page.locator('main').textContent()) ?? '', /evidence-1\.pdf/);
    await check(page, 'dispute defended phone en');
  } finally {
    await context.close();
  }
});
