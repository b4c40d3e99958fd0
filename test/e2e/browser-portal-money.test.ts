import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { LOCAL_RECEIVERS, startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { assertAccessible, PortalClient, portalUser, signInPage } from '../helpers/portal.ts';

/**
 * The merchant's view in Debian's chromium, on a desktop and a 390 px phone: money states and
 * the actions they allow, movements beneath their payment, the webhook log (failed, fixed,
 * resent, test event), an invited viewer without a refund button, a search by last four digits.
 * axe-core clean and no horizontal scrolling on every page visited.
 */

let t: TestService;
let browser: Browser;
let owner: { email: string; password: string };
let http: PortalClient;
let failing = true;
let close: () => Promise<void>;
const ids: Record<string, string> = {};
const VIEWS = {
  desktop: { viewport: { width: 1280, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true },
} as const;

before(async () => {
  t = await startTestService({
    env: { ...LOCAL_RECEIVERS, WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_MAX_ATTEMPTS: '1', WEBHOOK_BREAKER_FAILURES: '0' },
  });
  browser = await launchBrowser();
  owner = await portalUser(t);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(failing ? 503 : 200, { 'content-type': 'text/plain' }).end(failing ? 'maintenance' : 'ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  close = () => {
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r()));
  };
  http = new PortalClient(t);
  await http.signIn(owner.email, owner.password);
  const p = `/projects/${t.project.project_id}`;
  await http.get(`${p}/settings/`);
  await http.post(`${p}/settings/webhook-url`, { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook` });
  ids.preauth = (await payOrder(t, { merchant_order_id: 'b-preauth', amount: 4200 }, { capture_mode: 'manual' })).id;
  const part = await payOrder(t, { merchant_order_id: 'b-part', amount: 5000 }, { capture_mode: 'manual' });
  ids.part = part.id;
  ids.declined = (
    await payOrder(t, { merchant_order_id: 'b-declined', amount: 900 }, { pan: '4000000000000002' }).catch(() => ({ id: '' }))
  ).id;
  let n = 0;
  const act = async (form: Record<string, string>) => {
    await http.get(`${p}/orders/${part.id}/`);
    const r = await http.post(`${p}/orders/${part.id}/actions`, {
      transaction_id: part.transactions[0].id,
      token: `browser-money-${++n}-0000`,
      ...form,
    });
    assert.equal(r.status, 303, r.text);
  };
  await act({ action: 'void', amount: '1000' }); // 40.00 left reserved
  await act({ action: 'capture' }); // 40.00 captured
  await act({ action: 'refund', amount: '1500' }); // 25.00 net
  await t.api('POST', '/v1/test/clock/run-due-jobs/', {});
});
after(async () => {
  await browser?.close();
  await close?.();
  await t?.close();
});

async function check(page: Page, what: string) {
  await assertAccessible(page, what);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${what}: ${wide}px of horizontal scrolling`);
}

for (const kind of ['desktop', 'phone'] as const) {
  test(`money states, actions, movements and a search by last four digits (${kind})`, async () => {
    const context = await browser.newContext({ ...VIEWS[kind], locale: 'en-GB' });
    const page = await context.newPage();
    await signInPage(page, t, owner);
    await check(page, 'home');
    const base = `${t.config.portalUrl}/projects/${t.project.project_id}`;

    await page.goto(`${base}/orders/${ids.preauth}/`);
    assert.equal(await page.locator('[data-money-state]').first().innerText(), 'Authorized');
    const actions = page.getByRole('region', { name: 'Actions' });
    const buttons = (await actions.getByRole('button').allInnerTexts()).map((b) => b.trim());
    // the money actions of a pre-authorization, and the owner's Block this card (a card payment)
    assert.deepEqual(buttons, ['Capture', 'Void', 'Block this card'], 'a pre-authorization: Capture and Void, no refund');
    await check(page, 'a pre-authorization');
    await actions.getByRole('button', { name: 'Capture' }).click();
    await page.getByText('Capture €42.00 on order b-preauth?').waitFor();
    await check(page, 'the capture confirmation');

    await page.goto(`${base}/orders/${ids.part}/`);
    assert.equal(await page.locator('[data-net]').innerText(), '€25.00');
    const beneath = page.getByRole('region', { name: 'Captures, voids, refunds and chargebacks' });
    const kinds = (await beneath.locator('td[data-label="Kind"]').allInnerTexts()).sort();
    assert.deepEqual(kinds, ['capture', 'refund', 'void']);
    await check(page, 'a partly captured and refunded payment');

    await page.goto(`${base}/orders/`);
    await page.getByRole('searchbox').fill('transactions.payment_method_details.last4:0002');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('1 order', { exact: true }).waitFor();
    const found = await page.getByRole('table', { name: 'Orders' }).innerText();
    assert.match(found, /b-declined/);
    assert.match(found, /Declined: the bank said no/);
    await check(page, 'the orders list');
    await context.close();
  });
}

test('the webhook log: a failed delivery found, resent after the endpoint is fixed, a test event delivered (phone)', async () => {
  const context = await browser.newContext({ ...VIEWS.phone, locale: 'en-GB' });
  const page = await context.newPage();
  await signInPage(page, t, owner);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByLabel('Status').selectOption('failed');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const failed = page.locator('tr', { has: page.locator('[data-delivery-status="failed"]') }).first();
  assert.match(await failed.innerText(), /HTTP 503/);
  await check(page, 'the webhook log');
  failing = false;
  await failed.getByRole('button', { name: /Resend/ }).click();
  await page.getByText('Queued again').waitFor();
  await t.api('POST', '/v1/test/clock/run-due-jobs/', {});
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await page.getByText('Test event sent').waitFor();
  const tests = (await t.api('GET', '/v1/webhooks/deliveries/?event=test')).body.deliveries;
  assert.equal(tests[0].status, 'succeeded');
  const resent = (await t.api('GET', '/v1/webhooks/deliveries/?status=succeeded')).body.deliveries;
  assert.ok(
    resent.some((d: { resend: boolean }) => d.resend),
    'the resent delivery succeeded',
  );
  await check(page, 'the webhook log after a test event');
  await context.close();
});

test('an invited viewer sees no refund button; the team and audit pages are accessible (desktop)', async () => {
  const context = await browser.newContext({ ...VIEWS.desktop, locale: 'en-GB' });
  const page = await context.newPage();
  await signInPage(page, t, owner);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team' }).click();
  await page.getByLabel('Email').fill('viewer@browser.example');
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByRole('button', { name: 'Invite' }).click();
  const link = (await page.locator('#invite-link').innerText()).trim();
  await check(page, 'the team page');
  const guest = await browser.newContext({ ...VIEWS.phone, locale: 'en-GB' });
  const g = await guest.newPage();
  await g.goto(link);
  await g.getByLabel('Password').fill('viewer password 123');
  await g.getByRole('button', { name: 'Create my account' }).click();
  await signInPage(g, t, { email: 'viewer@browser.example', password: 'viewer password 123' });
  await g.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/orders/${ids.part}/`);
  assert.equal(await g.getByRole('button', { name: 'Refund' }).count(), 0, 'no refund button for a viewer');
  await check(g, 'an order seen by a viewer');
  // the POST a refund button would send, with this session's form token: refused for the role
  const url = `${t.config.portalUrl}/projects/${t.project.project_id}/orders/${ids.part}/actions`;
  const [answer] = await Promise.all([
    g.waitForNavigation(),
    g.evaluate((action) => {
      const f = document.createElement('form');
      f.method = 'post';
      f.action = action;
      const csrf = (document.querySelector('input[name=csrf]') as HTMLInputElement).value;
      for (const [k, v] of Object.entries({ csrf, action: 'refund', amount: '100', token: 'browser-viewer-refund-1' })) {
        const i = document.createElement('input');
        i.type = 'hidden';
        i.name = k;
        i.value = v;
        f.append(i);
      }
      document.body.append(f);
      f.submit();
    }, url),
  ]);
  const status = answer!.status();
  await g.getByText('Your role does not allow this.').waitFor();
  assert.equal(status, 403);
  await guest.close();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
  await page.getByText('Invited viewer@browser.example as viewer').waitFor();
  await check(page, 'the audit log');
  await context.close();
});
