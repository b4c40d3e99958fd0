import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestService } from './service.ts';

/** A phone-sized page that records every Content Security Policy complaint and script error. */
export async function phonePage(browser: Browser): Promise<{ page: Page; cspErrors: string[]; pageErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 375, height: 740 }, deviceScaleFactor: 2, hasTouch: true, locale: 'en-GB' });
  const page = await context.newPage();
  const cspErrors: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { page, cspErrors, pageErrors };
}

/** Debian's chromium, headless, with its background networking off (this machine has no internet). */
export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

/** A merchant's return page on a real local HTTP server. */
export async function startShop(body: (req: IncomingMessage) => string = () => '') {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><title>Shop</title><h1>Thank you for your order</h1>${body(req)}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What a browser test file shares: the service, a merchant shop and one browser. */
export async function startBrowserSuite(shopBody?: (req: IncomingMessage) => string) {
  const t = await startTestService();
  const shop = await startShop(shopBody);
  // Without a browser (chromium missing) the file must fail, not hang on the open service and shop.
  const browser = await launchBrowser().catch(async (err) => {
    await shop.close();
    await t.close();
    throw err;
  });
  return {
    t,
    shop,
    browser,
    async close() {
      await browser.close();
      await shop.close();
      await t.close();
    },
  };
}
