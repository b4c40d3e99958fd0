import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { freePort } from '../helpers/cli.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { assertAccessible, portalUser, signInPage } from '../helpers/portal.ts';
import { runPayouts, scheduleMerchant } from '../../src/services/payouts/payouts.ts';

/**
 * The portal's money owed and paid (docs/payouts.md) in Debian's chromium, at 1280 and 390 px,
 * in English and Dutch: the balances on home with the notice of a new IBAN, the Payouts page
 * with its states and the monthly statement form, a payout's lines adding up to it, and the
 * payout settings; and the operator's read-only page across merchants. axe-core clean and no horizontal scrolling on every page visited.
 */

let t: TestService;
let browser: Browser;
let owner: { email: string; password: string };
let payoutId = '';
let amount = 0;
let metricsPort = 0;
const dir = mkdtempSync(join(tmpdir(), 'tender-browser-payouts-'));
const VIEWS = {
  desktop: { viewport: { width: 1280, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true },
} as const;

before(async () => {
  metricsPort = await freePort();
  t = await startTestService({ env: { METRICS_PORT: String(metricsPort) } });
  browser = await launchBrowser();
  owner = await portalUser(t);
  const key = t.project.api_key;
  const a = await payOrder(t, { merchant_order_id: 'b-payout-a', amount: 5800 });
  const b = await payOrder(t, { merchant_order_id: 'b-payout-b', amount: 2000 });
  assert.equal((await t.api('POST', `/v1/orders/${b.id}/refunds/`, { amount: 500, description: 'one less' })).status, 201);
  for (const o of [a, b]) assert.equal((await t.api('POST', `/v1/test/orders/${o.id}/settle/`, undefined, { key })).status, 200);
  const merchant = t.project.merchant_id;
  await scheduleMerchant(t.svc.ctx, { merchant, iban: 'NL91ABNA0417164300', name: 'Browser shop', every: 'daily' });
  const run = await runPayouts(t.svc.ctx, { out: dir, merchant });
  payoutId = run.payouts[0]!.id;
  amount = run.payouts[0]!.amount;
  await payOrder(t, { merchant_order_id: 'b-pending', amount: 1200 }); // pending, on home
  // a new account: held a day, and shown to the owners on home
  await scheduleMerchant(t.svc.ctx, { merchant, iban: 'DE89370400440532013000', name: 'Browser shop', every: 'daily' });
});
after(async () => {
  await browser?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function check(page: Page, what: string) {
  await assertAccessible(page, what);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${what}: ${wide}px of horizontal scrolling`);
}

for (const [view, options] of Object.entries(VIEWS))
  test(`balances, payouts, a payout's lines and the payout settings, in English and Dutch, at ${options.viewport.width} px`, async () => {
    const context = await browser.newContext({ ...options, locale: 'en-GB' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    await signInPage(page, t, owner);
    const p = `${t.config.portalUrl}/projects/${t.project.project_id}`;
    for (const lang of ['en', 'nl'] as const) {
      const words =
        lang === 'en'
          ? { balances: 'Balances', payouts: 'Payouts', sent: 'Sent', lines: 'What this payout contains', settings: 'Save payout settings' }
          : {
              balances: 'Saldi',
              payouts: 'Uitbetalingen',
              sent: 'Verzonden',
              lines: 'Wat deze uitbetaling bevat',
              settings: 'Uitbetalingsinstellingen opslaan',
            };
      await page.goto(`${p}/?lang=${lang}`);
      await page.getByRole('heading', { name: words.balances }).waitFor();
      assert.match((await page.locator('[data-iban-notice]').textContent()) ?? '', /DE89…3000/);
      await check(page, `home (${lang}, ${view})`);

      await page.getByRole('navigation').getByRole('link', { name: words.payouts }).click();
      await page.getByRole('heading', { level: 1, name: words.payouts }).waitFor();
      assert.equal(await page.locator('[data-payout-state="sent"]').getByText(words.sent).count(), 1);
      await check(page, `payouts (${lang}, ${view})`);

      await page.locator(`a[href$="/payouts/${payoutId}/"]`).click();
      await page.getByRole('heading', { name: words.lines }).waitFor();
      const lines = await page
        .locator('[data-line-amount]')
        .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-line-amount'))));
      assert.equal(
        lines.reduce((s, n) => s + n, 0),
        amount,
        'the lines add up to the payout',
      );
      assert.equal(Number(await page.locator('[data-lines-total]').getAttribute('data-lines-total')), amount);
      await check(page, `a payout (${lang}, ${view})`);

      await page.goto(`${p}/settings/?lang=${lang}#payouts-settings`);
      await page.getByRole('button', { name: words.settings }).waitFor();
      await check(page, `settings (${lang}, ${view})`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

test("the operator's payouts page across merchants, on the operator's listener beside /metrics", async () => {
  const context = await browser.newContext({ ...VIEWS.phone, locale: 'en-GB' });
  const page = await context.newPage();
  const res = await page.goto(`http://127.0.0.1:${metricsPort}/payouts`);
  assert.equal(res?.status(), 200);
  assert.match(res?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
  await page.getByRole('heading', { name: 'Payouts across merchants' }).waitFor();
  const text = (await page.locator('main').textContent()) ?? '';
  assert.ok(text.includes(t.project.merchant_id), 'the merchant is listed');
  assert.match(text, /Z \(new IBAN\)/, 'the payout held for the new account');
  await check(page, "the operator's payouts page");
  assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/payouts`, { method: 'POST' })).status, 404, 'read-only');
  await context.close();
});
