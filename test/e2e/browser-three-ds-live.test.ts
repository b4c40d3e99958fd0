// A live project's EMV challenge in Debian's Chromium (issue 43): Tender's 3-D Secure page posts
// the CReq to `tender ds-host`'s ACS, the customer types the code, the CRes comes back and the
// customer is back on Tender's pages; with script and without. axe on Tender's page and the ACS's pages.
// The 3DS Method in a hidden iframe, notified by the ACS, before the AReq; the browser fields the
// card form's script measured (or, without script, the request headers' fallbacks) in the AReq.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { axeViolations, desktopPage, startBrowserSuite } from '../helpers/browser.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { startDsHostProcess, type DsHostProcess } from '../helpers/ds-host.ts';
import { validOrder } from '../helpers/service.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { dsCard, DS_CHALLENGE_CODE } from '../../src/acquirer/threeds/host/cards.ts';

let suite: Awaited<ReturnType<typeof startBrowserSuite>>;
let host: HostProcess;
let ds: DsHostProcess;
let dir: string;
let live: { project_id: string; api_key: string };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-3ds-browser-'));
  [host, ds] = await Promise.all([startHostProcess(dir), startDsHostProcess()]);
  suite = await startBrowserSuite(undefined, { env: { THREEDS_ALLOW_HTTP: 'true' } });
  live = await createBoundProject(suite.t.svc.ctx, {
    merchantId: suite.t.project.merchant_id,
    name: 'Live browser shop',
    mode: 'live',
    acquirer: host.url,
    terminalId: 'TBRW0001',
    cardAcceptorId: 'SHOPBROWSER',
    directoryServer: `${ds.url}/ds`,
    acquirerBin: '400551',
    mcc: '5999',
    merchantCountry: 'NL',
  });
});
after(async () => {
  await suite?.close();
  host?.stop();
  ds?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function order() {
  // a live order's return_url must be public: without one the customer lands on Tender's result page
  const { return_url: _, ...body } = validOrder({ customer: { ...validOrder().customer, locale: 'en-GB' } });
  const res = await suite.t.api('POST', '/v1/orders/', body, { key: live.api_key });
  assert.equal(res.status, 201, res.text);
  return res.body as { id: string; order_url: string };
}

/** axe needs script: a page seen with script off is checked as it is, in a context with script, its own script left out. */
async function axeOf(html: string) {
  const { page } = await desktopPage(suite.browser);
  try {
    await page.setContent(html.replace(/<script>[\s\S]*?<\/script>/g, ''));
    return await axeViolations(page);
  } finally {
    await page.context().close();
  }
}

/** The order page's card form, filled with `pan` (not yet sent). */
async function fillCardForm(page: Page, orderUrl: string, pan: string) {
  await page.goto(orderUrl);
  const chooser = page.locator('li[data-method="credit-card"] details:not([open]) > summary');
  if (await chooser.count()) await chooser.click();
  await page.getByLabel('Card number').fill(pan);
  await page.getByLabel('Expiry date').fill('12/34');
  await page.getByLabel('Security code').fill('123');
  await page.getByLabel('Name on card').fill('Ada Lovelace');
}

const status = async (id: string) => (await suite.t.api('GET', `/v1/orders/${id}/`, undefined, { key: live.api_key })).body.status;

test(
  'with script: the CReq goes to the ACS at once, the right code pays, the customer is back with Tender; axe finds nothing',
  { timeout: 120_000 },
  async () => {
    const o = await order();
    const { page, cspErrors, pageErrors } = await desktopPage(suite.browser);
    try {
      await fillCardForm(page, o.order_url, dsCard('challenge'));
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL(`${ds.url}/acs/challenge`);
      assert.deepEqual(await axeViolations(page), []);
      await page.getByLabel('Code').fill(DS_CHALLENGE_CODE);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL((u) => u.toString().startsWith(`${suite.t.url}/pay/${o.id}/`));
      assert.equal(await status(o.id), 'completed');
      assert.deepEqual(cspErrors, []);
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.context().close();
    }
  },
);

test(
  'without script: buttons carry the CReq and the CRes; a wrong code declines; axe finds nothing on each page',
  { timeout: 120_000 },
  async () => {
    const o = await order();
    const { page } = await desktopPage(suite.browser, { javaScriptEnabled: false });
    try {
      await fillCardForm(page, o.order_url, dsCard('challenge', 'mastercard'));
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL('**/pay/3ds/**');
      // no script measured the browser: the request headers' fallbacks, and no screen
      const areq = (await ds.journal()).filter((l) => l.dir === 'in' && l.messageType === 'AReq').at(-1);
      assert.equal(areq?.browser?.browserJavascriptEnabled, false);
      assert.equal(areq?.browser?.browserScreenWidth, undefined);
      assert.equal(areq?.browser?.browserColorDepth, undefined);
      assert.match(String(areq?.browser?.browserLanguage), /^[a-z]{2}/);
      assert.deepEqual(await axeOf(await page.content()), [], "Tender's page that posts the CReq");
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${ds.url}/acs/challenge`);
      await page.getByLabel('Code').fill('000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`${ds.url}/acs/challenge/answer`);
      assert.deepEqual(await axeOf(await page.content()), [], 'the ACS page that hands the CRes back');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((u) => u.toString().startsWith(`${suite.t.url}/pay/${o.id}/`));
      assert.equal(await status(o.id), 'new', 'the declined attempt leaves the order open for another');
    } finally {
      await page.context().close();
    }
  },
);

test(
  "the 3DS Method: Tender's page runs it in a hidden iframe, the ACS's notification lets it go ahead at once, the AReq says Y",
  { timeout: 120_000 },
  async () => {
    const o = await order();
    const { page, cspErrors, pageErrors } = await desktopPage(suite.browser);
    try {
      await fillCardForm(page, o.order_url, dsCard('method'));
      const began = Date.now();
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL((u) => u.toString().startsWith(`${suite.t.url}/pay/${o.id}/`));
      assert.ok(Date.now() - began < 8000, 'the notification, not the 10 s timer, let the page go ahead');
      assert.equal(await status(o.id), 'completed', "frictionless: ds-host's method range answers Y once the method ran");
      const journal = await ds.journal();
      const method = journal.filter((l) => l.messageType === 'Method').at(-1);
      assert.ok(method, 'the ACS served the method');
      const areq = journal.find((l) => l.messageType === 'AReq' && l.threeDSServerTransID === method.threeDSServerTransID);
      assert.equal(areq?.threeDSCompInd, 'Y');
      // the card form's script measured the browser: the AReq carries what this page reads
      const seen = await page.evaluate(() => ({
        width: String(screen.width),
        height: String(screen.height),
        tz: String(new Date().getTimezoneOffset()),
        language: navigator.language.slice(0, 8),
      }));
      assert.equal(areq?.browser?.browserJavascriptEnabled, true);
      assert.equal(areq?.browser?.browserJavaEnabled, false);
      assert.equal(areq?.browser?.browserScreenWidth, seen.width);
      assert.equal(areq?.browser?.browserScreenHeight, seen.height);
      assert.equal(areq?.browser?.browserTZ, seen.tz);
      assert.equal(areq?.browser?.browserLanguage, seen.language);
      assert.match(String(areq?.browser?.browserColorDepth), /^(1|4|8|15|16|24|32|48)$/);
      assert.deepEqual(cspErrors, []);
      assert.deepEqual(pageErrors, []);
    } finally {
      await page.context().close();
    }
  },
);
