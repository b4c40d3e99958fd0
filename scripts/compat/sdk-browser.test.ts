// The public SDKs, unchanged, through every payment method with the customer in a real browser
// (docs/compatibility.md "Driving the SDKs unchanged"): ginger-php and ginger-python create each
// order, Debian's Chromium pays it on its page (the sandbox page, the amex card form, the pay-now
// list), and the SDK reads it back, captures BNPL (per order line for Klarna) and refunds it.
//
// The SDKs are not part of Tender (never copied here), so this is not in `npm test`: it runs where
// they are checked out, `GINGER_PHP=… GINGER_PYTHON=… npm run test:compat`, and fails naming what
// is missing otherwise. The drivers (scripts/compat/*-methods.*) run as processes; on each
// `PAY <url> [<method>]` line this file pays in its one browser page and answers 303 on stdin.
// COMPAT_DEBUG=1 echoes the drivers' lines and the browser's errors as they come.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, phonePage, startShop } from '../../test/helpers/browser.ts';
import { startTestService, type TestService } from '../../test/helpers/service.ts';
import { payInBrowser } from '../../test/helpers/methods-browser.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';

const sdks = { GINGER_PHP: process.env.GINGER_PHP ?? '', GINGER_PYTHON: process.env.GINGER_PYTHON ?? '' };

let t: TestService;
let shop: Awaited<ReturnType<typeof startShop>>;
let browser: Browser;
let page: Page;

before(async () => {
  for (const [name, dir] of Object.entries(sdks))
    assert.ok(dir && existsSync(dir), `${name} must name a checkout of the SDK (docs/compatibility.md "Driving the SDKs unchanged")`);
  t = await startTestService();
  await setActiveMethods(t.svc.ctx, t.project.project_id, 'all');
  shop = await startShop();
  browser = await launchBrowser();
  ({ page } = await phonePage(browser));
});
after(async () => {
  await browser?.close();
  await shop?.close();
  await t?.close();
});

/** Runs a driver; pays in the browser when it asks. Answers its check lines and exit code. */
async function drive(cmd: string, script: string) {
  const child = spawn(cmd, [script], {
    env: { ...process.env, ...sdks, TENDER_URL: t.url, TENDER_KEY: t.project.api_key, PAY_IN_BROWSER: '1', SHOP_URL: shop.url },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const paid: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    if (process.env.COMPAT_DEBUG) console.error(`[${cmd}] ${line}`);
    const ask = /^PAY (\S+)(?: (\S+))?$/.exec(line);
    if (!ask) {
      lines.push(line);
      continue;
    }
    let status = 0;
    try {
      await payInBrowser(page, ask[1], { returnTo: shop.url, via: ask[2] ? new RegExp(ask[2]) : undefined });
      status = 303;
      paid.push(ask[1]);
    } catch (err) {
      lines.push(`browser: ${String(err)}`);
      if (process.env.COMPAT_DEBUG) console.error(err, page.url());
    }
    child.stdin.write(`${status}\n`);
  }
  const code = await new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', resolve),
  );
  return { code, lines, paid };
}

for (const [name, cmd, script, checks] of [
  ['ginger-php', 'php', 'scripts/compat/ginger-php-methods.php', 48],
  ['ginger-python', 'python3', 'scripts/compat/ginger_python_methods.py', 49],
] as const)
  test(`${name}: every method created, paid in Chromium, captured and refunded through the SDK`, { timeout: 300_000 }, async () => {
    const run = await drive(cmd, script);
    const failed = run.lines.filter((l) => !l.startsWith('ok   ') && l !== 'all passed');
    assert.deepEqual(failed, [], run.lines.join('\n'));
    assert.equal(run.code, 0);
    assert.equal(run.lines.filter((l) => l.startsWith('ok   ')).length, checks, run.lines.join('\n'));
    // the ten redirect methods, the two BNPL, amex and pay-now: each paid by the browser
    assert.equal(run.paid.length, 14);
    assert.deepEqual((await checkLedger(t.db, t.project.project_id)).violations, []);
  });
