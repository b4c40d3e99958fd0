import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, desktopPage, phonePage, startBrowserSuite } from './browser.ts';
import { validOrder, type TestService } from './service.ts';

/**
 * A service, a shop and Chromium for the hosted-page browser suites (axe, forms, wallets), started
 * before the file's tests and closed after, with the steps those suites share.
 */
export function hostedSuite() {
  let suite: Awaited<ReturnType<typeof startBrowserSuite>> | undefined;
  before(async () => {
    // a late decline waits for the test clock (run-due-jobs), not for real seconds
    suite = await startBrowserSuite(undefined, { env: { LATE_DECLINE_MS: '600000' } });
  });
  after(() => suite?.close());
  const running = () => {
    assert.ok(suite, 'the browser suite started');
    return suite;
  };
  const h = {
    get t(): TestService {
      return running().t;
    },
    get browser(): Browser {
      return running().browser;
    },
    get shopUrl(): string {
      return running().shop.url;
    },
    getOrder: async (id: string) => (await h.t.api('GET', `/v1/orders/${id}/`)).body,
    async newOrder(over: Record<string, unknown> = {}) {
      const res = await h.t.api('POST', '/v1/orders/', validOrder({ customer: undefined, return_url: `${h.shopUrl}/return`, ...over }));
      assert.equal(res.status, 201, res.text);
      return res.body as { id: string; order_url: string; transactions: { id: string }[] };
    },
    /** axe on the page as it is now; the violations are collected and asserted empty. */
    async audit(page: Page, found: string[], label: string) {
      for (const v of await axeViolations(page)) found.push(`${label}: ${v}`);
    },
    /** Opens each URL in a fresh phone and desktop page and runs axe on it. */
    async auditAll(urls: string[]): Promise<string[]> {
      const found: string[] = [];
      for (const [name, open] of Object.entries(viewports)) {
        const { page, cspErrors, pageErrors } = await open(h.browser);
        try {
          for (const url of urls) {
            await page.goto(url);
            await h.audit(page, found, name);
          }
          assert.deepEqual([...cspErrors, ...pageErrors], [], `${name}: no CSP complaint, no script error`);
        } finally {
          await page.context().close();
        }
      }
      return found;
    },
    /** The sandbox sheet of an order without a billing address: the address, then pay. */
    async fillBilling(page: Page) {
      await page.getByLabel('First name').fill('Ada');
      await page.getByLabel('Last name').fill('Lovelace');
      await page.getByLabel('Street and number').fill('Damrak 1');
      await page.getByLabel('Postal code').fill('1012 LG');
      await page.getByLabel('City').fill('Amsterdam');
      await page.getByLabel('Country').selectOption('NL');
    },
  };
  return h;
}

export const viewports = { phone: phonePage, desktop: desktopPage } as const;
