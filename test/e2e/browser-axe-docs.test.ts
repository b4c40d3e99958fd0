import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, desktopPage, phonePage, startBrowserSuite } from '../helpers/browser.ts';

/**
 * The API reference page (/docs) in a real browser: axe-core finds no violation of any impact,
 * phone and desktop; it fits a phone's width; its one script (allowed by hash) puts a Copy button
 * above every example, which copies that example.
 */

let suite: Awaited<ReturnType<typeof startBrowserSuite>>;
before(async () => {
  suite = await startBrowserSuite();
});
after(() => suite?.close());

for (const [name, open] of Object.entries({ phone: phonePage, desktop: desktopPage })) {
  test(`/docs on a ${name}: no axe violation, no horizontal scrolling, Copy buttons that copy`, { timeout: 240_000 }, async () => {
    const { page, cspErrors, pageErrors } = await open(suite.browser);
    try {
      const res = await page.goto(`${suite.t.url}/docs`);
      assert.equal(res?.status(), 200);
      assert.deepEqual(await axeViolations(page), []);
      const width = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
      assert.ok(width.page <= width.viewport, `the page is ${width.page}px wide in a ${width.viewport}px viewport`);
      // a Copy button above every example; the first copies its curl example to the clipboard
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.t.url });
      const examples = await page.locator('pre').count();
      assert.equal(await page.locator('button.copy').count(), examples);
      const first = page.locator('pre').first();
      await page.locator('button.copy').first().click();
      await page
        .getByRole('status')
        .filter({ hasText: /^Copied / })
        .waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), await first.innerText());
      assert.ok((await page.locator('section.op').count()) >= 30, 'every operation is on the page');
      assert.deepEqual([...cspErrors, ...pageErrors], []);
    } finally {
      await page.context().close();
    }
  });
}
