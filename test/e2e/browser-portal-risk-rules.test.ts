import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { followBrowser, startPayment } from '../helpers/cards.ts';
import { assertAccessible, portalUser, signInPage } from '../helpers/portal.ts';

/**
 * Risk rules in Debian's chromium (docs/portal.md "Risk rules"): a rule written in the form,
 * switched on and tried with a dry run on a 1280 px desktop in English; the refused payment's
 * decision on the order page there and on a 390 px phone in Dutch. axe-core clean and no
 * horizontal scrolling on every page visited.
 */

let t: TestService;
let browser: Browser;
let owner: { email: string; password: string };
let refusedOrder = '';
const VIEWS = {
  desktop: { viewport: { width: 1280, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true },
} as const;

before(async () => {
  t = await startTestService({ env: { RISK_LIMITS: 'on' } });
  browser = await launchBrowser();
  owner = await portalUser(t);
  // a past payment for the dry run
  const past = await startPayment(t, '4111111111111111', { orderOver: { amount: 8000 } });
  await followBrowser(past.redirect_url);
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

test('a rule written, tried and switched on; the refused payment shows why (desktop, English)', async () => {
  const context = await browser.newContext({ ...VIEWS.desktop, locale: 'en-GB' });
  const page = await context.newPage();
  await signInPage(page, t, owner);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Risk', exact: true }).click();
  await page.getByRole('link', { name: /^Rules you write/ }).click();
  await check(page, 'the risk rules page, empty');
  await page.getByLabel('Name').fill('Large payments');
  await page.getByLabel('Action').selectOption('refuse');
  await page.getByLabel('Field').first().selectOption('amount');
  await page.getByLabel('Operator').first().selectOption('gte');
  await page.getByLabel('Value').first().fill('many');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByRole('alert').getByText('conditions.0.value: amount compares with a whole number').waitFor();
  await check(page, 'the form with its error');
  await page.getByLabel('Value').first().fill('7000');
  await page.getByRole('button', { name: 'Add rule' }).click();
  await page.getByText('The rule was added, switched off.').waitFor();
  await check(page, 'the rule list');

  await page.getByRole('link', { name: 'Dry run Large payments' }).click();
  assert.equal(await page.locator('[data-dry="hit"]').innerText(), '1');
  await check(page, 'the dry run');
  await page.getByRole('link', { name: 'Back to the rules' }).click();
  await page.getByRole('button', { name: 'Switch on Large payments' }).click();
  await page.getByText('The rule was changed.').waitFor();
  assert.equal(await page.locator('[data-rule-state]').innerText(), 'On');

  const refused = await startPayment(t, '5555555555554444', { orderOver: { amount: 7500 } });
  await followBrowser(refused.redirect_url);
  refusedOrder = refused.order.id;
  await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/orders/${refusedOrder}/`);
  const panel = page.getByRole('region', { name: 'Risk decisions' });
  assert.match(await panel.innerText(), /Refuse\s+Your rule \(Refuse\)\s+rule "Large payments": amount ≥ 7000/);
  await check(page, 'the order page with a refusal');
  await context.close();
});

test('the refused payment’s decision on a phone, in Dutch', async () => {
  assert.ok(refusedOrder, 'the first test refused a payment');
  // signed in on the English page, then Dutch chosen with the language link's ?lang=nl
  const context = await browser.newContext({ ...VIEWS.phone, locale: 'en-GB' });
  const page = await context.newPage();
  await signInPage(page, t, owner);
  await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/orders/${refusedOrder}/?lang=nl`);
  const panel = page.getByRole('region', { name: 'Risicobeslissingen' });
  assert.match(await panel.innerText(), /Weigeren/);
  assert.match(await panel.innerText(), /Uw regel \(Weigeren\)/);
  await check(page, 'het orderscherm met een weigering');
  await page.getByRole('navigation', { name: /.+/ }).getByRole('link', { name: 'Risico', exact: true }).click();
  await page.getByRole('link', { name: /^Regels die u schrijft/ }).click();
  await page.getByRole('heading', { name: 'Risicoregels', level: 1 }).waitFor();
  await check(page, 'de risicoregels');
  await context.close();
});
