import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestService } from './service.ts';
import type { Json } from './json.ts';

/** A phone-sized page that records every Content Security Policy complaint and script error. */
export async function phonePage(browser: Browser): Promise<{ page: Page; cspErrors: string[]; pageErrors: string[] }> {
  const context = await browser.newContext({
    viewport: { width: 375, height: 740 },
    deviceScaleFactor: 2,
    hasTouch: true,
    locale: 'en-GB',
  });
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
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
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
export async function startBrowserSuite(shopBody?: (req: IncomingMessage) => string, service: Parameters<typeof startTestService>[0] = {}) {
  const t = await startTestService(service);
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

/** A desktop-sized page, recording CSP complaints and script errors like phonePage. */
export async function desktopPage(browser: Browser, opts: { javaScriptEnabled?: boolean; locale?: string } = {}) {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    locale: opts.locale ?? 'en-GB',
    javaScriptEnabled: opts.javaScriptEnabled ?? true,
  });
  const page = await context.newPage();
  const cspErrors: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { page, cspErrors, pageErrors };
}

/**
 * axe-core's violations on the page as it is, every impact level, as readable lines. axe runs
 * through the DevTools protocol, so the page's own CSP (no inline script) is left as it is.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  const { default: axe } = await import('axe-core');
  await page.evaluate(axe.source);
  const result = await page.evaluate(() =>
    (window as unknown as { axe: { run(ctx: Document, o: object): Promise<Json> } }).axe.run(document, { resultTypes: ['violations'] }),
  );
  return (result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[]).map(
    (v) =>
      `${page.url()}: ${v.id} (${v.impact}) at ${v.nodes
        .map((n) => n.target.join(' '))
        .slice(0, 5)
        .join(' | ')}`,
  );
}
