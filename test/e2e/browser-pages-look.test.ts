import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { axeViolations, startBrowserSuite } from '../helpers/browser.ts';
import { validOrder, type TestService } from '../helpers/service.ts';
import { setActiveMethods } from '../../src/services/payments/methods/settings.ts';
import { bnplLines } from '../helpers/methods.ts';
import { payOrder } from '../helpers/pay.ts';
import { portalUser, signInPage } from '../helpers/portal.ts';

/**
 * How the hosted pages and the portal look in Chromium at 390 px (a phone) and 1280 px (issue 42,
 * item 16): what each page shows and where, axe clean at both widths. With SCREENSHOTS_DIR set,
 * every page checked is also saved there as a PNG, to be looked at by eye.
 */

let t: TestService;
let browser: Browser;
let suite: Awaited<ReturnType<typeof startBrowserSuite>>;
const widths = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;
const contexts: Partial<Record<keyof typeof widths, BrowserContext>> = {};

before(async () => {
  suite = await startBrowserSuite();
  ({ t, browser } = suite);
  await setActiveMethods(t.svc.ctx, t.project.project_id, 'all');
  for (const [name, viewport] of Object.entries(widths) as [keyof typeof widths, (typeof widths)['phone']][])
    contexts[name] = await browser.newContext({
      viewport,
      locale: 'en-GB',
      ...(name === 'phone' ? { deviceScaleFactor: 2, hasTouch: true, isMobile: true } : {}),
    });
  await contexts.desktop!.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
});
after(() => suite?.close());

const english = { ...validOrder().customer, locale: 'en-GB' };
const dutch = { ...validOrder().customer, locale: 'nl-NL' };
async function createOrder(over: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/v1/orders/', validOrder({ customer: english, ...over }));
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** A page of the context of that width; the caller closes it. */
const open = async (width: keyof typeof widths, url: string): Promise<Page> => {
  const page = await contexts[width]!.newPage();
  await page.goto(url);
  return page;
};

/** A screenshot when asked for (SCREENSHOTS_DIR), to be looked at by eye. */
async function shot(page: Page, name: string) {
  if (process.env.SCREENSHOTS_DIR) await page.screenshot({ path: join(process.env.SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

/** axe clean and nothing wider than the viewport. */
async function looked(page: Page, name: string) {
  assert.deepEqual(await axeViolations(page), [], name);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${name}: nothing wider than the page`);
}

/** Each width in turn, the page closed after. */
async function atBothWidths(url: string, name: string, check: (page: Page, width: keyof typeof widths) => Promise<void>) {
  for (const width of Object.keys(widths) as (keyof typeof widths)[]) {
    const page = await open(width, url);
    try {
      await shot(page, `${name}-${width}`);
      await check(page, width);
      await looked(page, `${name}-${width}`);
    } finally {
      await page.close();
    }
  }
}

const TEST_CARD_HINT = /4111 1111 1111 1111/;

test('the test-card hint shows only where a card can be typed: not on iDEAL, Klarna or bank-transfer pages', async () => {
  const pages = {
    ideal: (await createOrder({ transactions: [{ payment_method: 'ideal' }] })).transactions[0].payment_url,
    klarna: (await createOrder({ amount: 2995, order_lines: bnplLines, transactions: [{ payment_method: 'klarna-pay-later' }] }))
      .transactions[0].payment_url,
    transfer: (await createOrder({ transactions: [{ payment_method: 'bank-transfer' }] })).transactions[0].payment_url,
  };
  for (const [name, url] of Object.entries(pages))
    await atBothWidths(url, name, async (page) => {
      await page.getByText('Test mode: no real money is moved.').waitFor();
      assert.equal(await page.getByText(TEST_CARD_HINT).count(), 0, `${name}: no card hint`);
    });
  const card = await createOrder({ payment_methods: ['credit-card'] });
  await atBothWidths(card.order_url, 'card', async (page) => {
    assert.equal(await page.getByText(TEST_CARD_HINT).count(), 1, 'the card form has its hint');
  });
});

test('card form: expiry and security code side by side on one line, the Pay button on the first screen of a phone, brand marks', async () => {
  const card = await createOrder({ payment_methods: ['credit-card'] });
  await atBothWidths(card.order_url, 'card-form', async (page, width) => {
    const labels = await Promise.all(
      ['Expiry date', 'Security code'].map(async (name) => (await page.locator('label', { hasText: name }).boundingBox())!.y),
    );
    assert.equal(Math.round(labels[0]), Math.round(labels[1]), `${width}: the two labels on one line`);
    const expiry = (await page.getByLabel('Expiry date').boundingBox())!;
    const cvc = (await page.getByLabel('Security code').boundingBox())!;
    assert.equal(Math.round(expiry.y), Math.round(cvc.y), `${width}: the two inputs start on one line`);
    assert.equal(Math.round(expiry.height), Math.round(cvc.height), `${width}: and are as high`);
    assert.ok(expiry.x + expiry.width <= cvc.x, `${width}: side by side`);
    // a phone's browser keeps about 180 of its 844 px for its own bars (status, address, toolbar)
    const fold = width === 'phone' ? widths.phone.height - 180 : widths.desktop.height;
    const pay = (await page.getByRole('button', { name: /^Pay / }).boundingBox())!;
    assert.ok(pay.y + pay.height <= fold, `${width}: the Pay button is above the fold (${pay.y + pay.height} > ${fold})`);
    const marks = page.getByRole('list', { name: 'Cards accepted' });
    for (const brand of ['Visa', 'Mastercard', 'American Express'])
      assert.ok(await marks.getByRole('img', { name: brand }).isVisible(), `${width}: the ${brand} mark`);
  });
  // typing a number marks its brand
  const page = await open('phone', card.order_url);
  try {
    await page.getByLabel('Card number').fill('5555555555554444');
    await page.locator('[data-brand="mastercard"][data-current]').waitFor();
    assert.equal(await page.locator('.brands [data-current]').count(), 1);
  } finally {
    await page.close();
  }
});

test('bank transfer: each detail has a copy button that copies it; without script the details stay as text', async () => {
  const o = await createOrder({ transactions: [{ payment_method: 'bank-transfer' }] });
  const d = o.transactions[0].payment_method_details;
  await atBothWidths(o.transactions[0].payment_url, 'transfer', async (page) => {
    await page.getByRole('button', { name: 'Copy IBAN' }).waitFor();
  });
  const page = await open('desktop', o.transactions[0].payment_url);
  try {
    for (const [label, value] of [
      ['IBAN', d.creditor_iban],
      ['Reference', d.reference],
      ['Amount', '19.95'],
    ]) {
      await page.getByRole('button', { name: `Copy ${label}` }).click();
      await page
        .getByRole('button', { name: `Copy ${label}` })
        .getByText('Copied')
        .waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), value, label);
    }
  } finally {
    await page.close();
  }
  const noScript = await browser.newContext({ javaScriptEnabled: false, locale: 'en-GB' });
  try {
    const p = await noScript.newPage();
    await p.goto(o.transactions[0].payment_url);
    await p.getByText(d.creditor_iban).waitFor();
    assert.equal(await p.getByRole('button', { name: /^Copy / }).count(), 0, 'no button that cannot work');
  } finally {
    await noScript.close();
  }
});

test('Dutch hosted pages say "je" throughout, never "u" or "uw"', async () => {
  const formal = /\b(u|uw|U|Uw)\b/;
  const { STRINGS } = await import('../../src/http/pay/i18n.ts');
  const { methodText } = await import('../../src/http/pay/methods/render.ts');
  const texts: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') texts.push(v);
    else if (typeof v === 'function') texts.push(String(v('X')));
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  const { TEXT: walletTexts } = await import('../../src/http/pay/wallet-sheet-i18n.ts');
  walk(STRINGS.nl);
  walk(methodText('nl'));
  walk(walletTexts.nl);
  assert.deepEqual(
    texts.filter((s) => formal.test(s)),
    [],
  );
  // and what a Dutch customer reads on the pages themselves
  const orders = [
    await createOrder({ customer: dutch }),
    await createOrder({ customer: dutch, payment_methods: ['credit-card'] }),
    await createOrder({ customer: dutch, transactions: [{ payment_method: 'bank-transfer' }] }),
  ];
  const failed = await payOrder(t, { customer: dutch }, { pan: '4000000000000002' });
  for (const url of [...orders.map((o) => o.transactions[0]?.payment_url ?? o.order_url), `${t.url}/pay/${failed.id}/result/`]) {
    const page = await open('phone', url);
    try {
      const text = await page.locator('body').innerText();
      assert.doesNotMatch(text, formal, url);
      assert.match(text, /\bje\b|\bjouw\b|\bjij\b|Betaling|betalen/i, url);
    } finally {
      await page.close();
    }
  }
});

// ---- the portal ------------------------------------------------------------------------------

let signedIn: Partial<Record<keyof typeof widths, boolean>> = {};
/** A portal page in the context of that width, signed in once per context. */
async function portal(width: keyof typeof widths, path: string): Promise<Page> {
  const page = await contexts[width]!.newPage();
  if (!signedIn[width]) {
    await signInPage(page, t, await portalUser(t));
    signedIn = { ...signedIn, [width]: true };
  }
  await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/${path}`);
  return page;
}

async function portalAtBothWidths(path: string, name: string, check: (page: Page, width: keyof typeof widths) => Promise<void>) {
  for (const width of Object.keys(widths) as (keyof typeof widths)[]) {
    const page = await portal(width, path);
    try {
      await shot(page, `${name}-${width}`);
      await check(page, width);
      await looked(page, `${name}-${width}`);
    } finally {
      await page.close();
    }
  }
}

test('portal: ids in full (a capture and its refund tell apart), a customer column, a refunds list', async () => {
  const paid = await payOrder(t, { customer: english }, { capture_mode: 'manual' });
  const txn = paid.transactions[0];
  const capture = await t.api('POST', `/v1/orders/${paid.id}/transactions/${txn.id}/captures/`);
  assert.equal(capture.status, 201, capture.text);
  const refund = await t.api('POST', `/v1/orders/${paid.id}/refunds/`, { amount: 500 });
  assert.equal(refund.status, 201, refund.text);
  await portalAtBothWidths(`orders/${paid.id}/`, 'order', async (page) => {
    for (const id of [capture.body.id, refund.body.id, txn.id])
      await page.locator('code, a').getByText(id, { exact: true }).first().waitFor();
  });
  await portalAtBothWidths('orders/', 'orders', async (page) => {
    const list = page.getByRole('table', { name: 'Orders' });
    assert.ok((await list.locator('thead th').allTextContents()).includes('Customer'));
    assert.ok((await list.locator('td[data-label="Customer"]').getByText(`${english.first_name} ${english.last_name}`).count()) > 0);
  });
  await portalAtBothWidths('orders/?kind=refund', 'refunds', async (page) => {
    await page.getByRole('link', { name: 'Refunds' }).and(page.locator('[aria-current="page"]')).waitFor();
    const list = page.getByRole('table', { name: 'Refunds' });
    await list.getByRole('link', { name: refund.body.id }).waitFor();
    await list.getByRole('link', { name: paid.id }).first().waitFor();
    assert.equal(await list.getByRole('link', { name: capture.body.id }).count(), 0, 'a capture is not a refund');
  });
});

test("portal: times in the merchant's time zone, set in Settings (an unknown zone refused, nothing changed)", async () => {
  const order = await createOrder();
  const shown = (zone: string) => {
    const f = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hourCycle: 'h23', dateStyle: 'short', timeStyle: 'short' });
    const p = Object.fromEntries(f.formatToParts(new Date(order.created)).map((x) => [x.type, x.value]));
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
  };
  const page = await portal('desktop', 'settings/');
  try {
    const field = page.getByRole('combobox', { name: /^Time zone/ });
    assert.equal(await field.inputValue(), 'Europe/Amsterdam', 'the default');
    await field.fill('Mars/Olympus_Mons');
    await page.getByRole('button', { name: 'Save time zone' }).click();
    await page
      .getByRole('alert')
      .getByText(/unknown time zone/)
      .waitFor();
    await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/orders/${order.id}/`);
    await page
      .getByText(new RegExp(`${shown('Europe/Amsterdam')} CES?T`))
      .first()
      .waitFor();
    await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/settings/`);
    await page.getByRole('combobox', { name: /^Time zone/ }).fill('Asia/Tokyo');
    await page.getByRole('button', { name: 'Save time zone' }).click();
    await page.getByRole('status').getByText('Saved').waitFor();
    assert.equal(await page.getByRole('combobox', { name: /^Time zone/ }).inputValue(), 'Asia/Tokyo');
    await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/orders/${order.id}/`);
    await page
      .getByText(`${shown('Asia/Tokyo')} GMT+9`)
      .first()
      .waitFor();
  } finally {
    await page.goto(`${t.config.portalUrl}/projects/${t.project.project_id}/settings/`);
    await page.getByRole('combobox', { name: /^Time zone/ }).fill('Europe/Amsterdam');
    await page.getByRole('button', { name: 'Save time zone' }).click();
    await page.close();
  }
});

test('portal: the payment methods a styled list, each with its currencies, also when off', async () => {
  const page = await portal('desktop', 'settings/');
  try {
    await page.getByLabel(/^wallet-a-pay/).uncheck();
    await page.getByRole('button', { name: 'Save payment methods' }).click();
    await page.getByRole('status').getByText('Saved').waitFor();
  } finally {
    await page.close();
  }
  await portalAtBothWidths('settings/', 'settings', async (page) => {
    const items = page.locator('[data-methods] > li');
    assert.ok((await items.count()) >= 10);
    for (const text of await items.allInnerTexts()) assert.match(text, /[A-Z]{3}/, `currencies listed: ${text}`);
    assert.equal(await page.getByLabel(/^wallet-a-pay/).isChecked(), false);
    const look = await items
      .first()
      .evaluate((li) => ({ list: getComputedStyle(li).listStyleType, display: getComputedStyle(li).display }));
    assert.deepEqual(look, { list: 'none', display: 'grid' });
  });
  await setActiveMethods(t.svc.ctx, t.project.project_id, 'all');
});

test('portal on a phone: the header leaves the screen to the page; the chart has labelled axes', async () => {
  await payOrder(t, { customer: english, amount: 4200 });
  await portalAtBothWidths('', 'home', async (page, width) => {
    const bottom = await page.locator('nav.main').evaluate((n) => n.getBoundingClientRect().bottom);
    if (width === 'phone') assert.ok(bottom <= 170, `header and menu end at ${bottom} of 844 px`);
    const chart = page.locator('figure.chart svg').first();
    const y = await chart.locator('[data-axis="y"] text').allTextContents();
    assert.ok(y.includes('€0.00') && y.some((l) => /^€\d/.test(l) && l !== '€0.00'), `amounts on the y axis: ${y}`);
    const x = await chart.locator('[data-axis="x"] text').allTextContents();
    assert.ok(x.length >= 2 && x.every((l) => /^\d{1,2} [A-Z][a-z]{2}$/.test(l)), `dates on the x axis: ${x}`);
    assert.equal(await chart.getAttribute('role'), 'img');
  });
});
