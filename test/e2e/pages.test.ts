import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, cardOrder, type TestService } from '../helpers/service.ts';
import { checkCardForm, normaliseExpiry } from '../../src/services/payments/checkout.ts';
import { findProject, updateProjectSettings } from '../../src/store/platform/projects.ts';
import { settingsOf } from '../../src/domain/project.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

interface Page {
  status: number;
  headers: Headers;
  html: string;
  location: string;
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Page> {
  const res = await fetch(`${t.url}${path}`, { headers, redirect: 'manual' });
  return { status: res.status, headers: res.headers, html: await res.text(), location: res.headers.get('location') ?? '' };
}

/** What the browser sends when the customer submits a form of the page. */
async function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, headers: res.headers, html: await res.text(), location: res.headers.get('location') ?? '' };
}

/** A refused form answers 303 to its page (POST/redirect/GET); the browser then GETs it with the flash cookie. */
async function followRefusal(res: Page, headers: Record<string, string> = {}): Promise<Page> {
  assert.equal(res.status, 303, res.html);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  assert.match(cookie, /^tender_flash=/);
  const page = await get(res.location, { ...headers, cookie });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('set-cookie') ?? '', /tender_flash=; Path=[^;]+; Max-Age=0/, 'the flash is shown once');
  return page;
}

const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const actionOf = (html: string) => /<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '';
const methodsOf = (html: string) => [...html.matchAll(/data-method="([^"]+)"/g)].map((m) => m[1]);
const hasCardForm = (html: string) => html.includes('autocomplete="cc-number"');

async function newOrder(over: Record<string, unknown> = {}, key?: string) {
  const res = await t.api('POST', '/v1/orders/', validOrder(over), key ? { key } : {});
  assert.equal(res.status, 201, res.text);
  return res.body;
}

const transactionsOf = async (id: string, key?: string) =>
  (await t.api('GET', `/v1/orders/${id}/`, undefined, key ? { key } : {})).body.transactions;
const vaultRows = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM vault_cards')).at(0)?.n ?? 0;

const good = { pan: '5555 5555 5555 4444', expiry: '12/34', cvc: '123', name: 'Ada Lovelace' };

test('order page: summary, security headers, only our own script', async () => {
  const o = await newOrder({ merchant_name: 'Mug Store', customer: undefined });
  const p = await get(`/pay/${o.id}/`, { 'accept-language': 'en-US,en;q=0.8' });
  assert.equal(p.status, 200);
  assert.match(p.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
  const csp = p.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/=]+'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /form-action 'self' https:\/\/shop\.example/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|connect-src/);
  assert.equal(p.headers.get('x-frame-options'), 'DENY');
  assert.equal(p.headers.get('referrer-policy'), 'no-referrer');
  assert.equal(p.headers.get('cache-control'), 'no-store');
  assert.equal(p.headers.get('x-content-type-options'), 'nosniff');
  // one script, ours, nothing inline; it adds help while typing (the form works without it)
  assert.deepEqual(
    [...p.html.matchAll(/<script[^>]*>/g)].map((m) => m[0]),
    ['<script src="/pay/assets/checkout.js" defer>'],
  );
  assert.doesNotMatch(p.html, /(src|href)="https?:/);
  assert.match(p.html, /maxlength="4"/, 'room for the 4 digits of American Express');
  assert.match(p.html, /<html lang="en">/);
  assert.match(p.html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(p.html, /Mug Store/);
  assert.match(p.html, /€19\.95/);
  assert.match(p.html, /Two mugs/);
  // the form has the autofill attributes, numeric keyboards and labels
  for (const ac of ['cc-number', 'cc-exp', 'cc-csc', 'cc-name']) assert.match(p.html, new RegExp(`autocomplete="${ac}"`));
  assert.equal((p.html.match(/inputmode="numeric"/g) ?? []).length, 3);
  for (const f of ['pan', 'expiry', 'cvc', 'name']) assert.match(p.html, new RegExp(`<label for="${f}">`));
  assert.equal(actionOf(p.html), `/pay/${o.id}/card/`);
});

test('merchant name falls back to the project name; amounts follow the currency exponent', async () => {
  const jpy = await newOrder({ currency: 'JPY', amount: 1995, customer: undefined });
  const a = await get(`/pay/${jpy.id}/`, { 'accept-language': 'en' });
  assert.match(a.html, /Test shop/);
  assert.match(a.html, /¥1,995/);
  const kwd = await newOrder({ currency: 'KWD', amount: 1234, customer: undefined });
  const b = await get(`/pay/${kwd.id}/`, { 'accept-language': 'nl' });
  assert.match(b.html, /KWD\s1,234/);
});

test('language: customer.locale first, then Accept-Language, then English', async () => {
  const nl = await newOrder(); // customer.locale nl-NL
  const a = await get(`/pay/${nl.id}/`, { 'accept-language': 'en' });
  assert.match(a.html, /<html lang="nl">/);
  assert.match(a.html, /€\s19,95/);
  assert.match(a.html, /Kaartnummer/);
  assert.match(a.html, /Betaal €\s19,95/);

  const plain = await newOrder({ customer: undefined });
  const b = await get(`/pay/${plain.id}/`, { 'accept-language': 'de-DE, nl-BE;q=0.7, en;q=0.5' });
  assert.match(b.html, /<html lang="nl">/);
  const c = await get(`/pay/${plain.id}/`, { 'accept-language': 'fr' });
  assert.match(c.html, /<html lang="en">/);
  assert.match(c.html, /Card number/);

  const en = await newOrder({ customer: { ...validOrder().customer, locale: 'en_GB' } });
  const d = await get(`/pay/${en.id}/`, { 'accept-language': 'nl' });
  assert.match(d.html, /<html lang="en">/);
});

test('methods are filtered by the order payment_methods and by currency', async () => {
  // a service whose pages offer stand-ins for the wallet buttons
  const fake = (method: 'wallet-a-pay' | 'wallet-b-pay') => ({
    method,
    render: () => `<button type="button" class="fake">${method}</button>`,
  });
  const main = t;
  t = await startTestService({ walletButtons: [fake('wallet-a-pay'), fake('wallet-b-pay')] });
  try {
    const all = await get(`/pay/${(await newOrder()).id}/`);
    assert.deepEqual(methodsOf(all.html), ['credit-card', 'wallet-a-pay', 'wallet-b-pay']);
    assert.ok(hasCardForm(all.html));
    assert.doesNotMatch(all.html, /<details open>/, 'the card form opens when chosen');

    const walletOnly = await get(`/pay/${(await newOrder({ payment_methods: ['wallet-a-pay'] })).id}/`);
    assert.deepEqual(methodsOf(walletOnly.html), ['wallet-a-pay']);
    assert.ok(!hasCardForm(walletOnly.html));

    const cardOnly = await get(`/pay/${(await newOrder({ payment_methods: ['credit-card'] })).id}/`);
    assert.deepEqual(methodsOf(cardOnly.html), []);
    assert.ok(hasCardForm(cardOnly.html), 'a single method shows its form at once');

    // a project whose card method takes EUR only: a GBP order offers the wallets alone
    const other = await t.newProject('test');
    const p = (await findProject(t.db, other.project_id))!;
    const s = settingsOf(p.settings);
    s.payment_methods['credit-card'] = { currencies: ['EUR'] };
    delete s.payment_methods['wallet-b-pay'];
    await updateProjectSettings(t.db, p.id, s);
    const gbp = await newOrder({ currency: 'GBP' }, other.api_key);
    const g = await get(`/pay/${gbp.id}/`);
    assert.deepEqual(methodsOf(g.html), ['wallet-a-pay']);
    assert.ok(!hasCardForm(g.html));
  } finally {
    await t.close();
    t = main;
  }
});

test('a card POST without, with a forged or with a foreign CSRF token is refused and stores nothing', async () => {
  const o = await newOrder();
  const other = await newOrder();
  const page = await get(`/pay/${o.id}/`);
  const token = csrfOf(page.html);
  const before = await vaultRows();
  const [issued] = token.split('.');
  const attempts: Array<[string, Record<string, string>, Record<string, string>?]> = [
    ['missing', { ...good }],
    ['forged', { ...good, csrf: `${issued}.${'A'.repeat(43)}` }],
    ['garbage', { ...good, csrf: 'x' }],
    ['other order', { ...good, csrf: csrfOf((await get(`/pay/${other.id}/`)).html) }],
    ['foreign origin', { ...good, csrf: token }, { origin: 'https://evil.example' }],
  ];
  for (const [what, fields, headers] of attempts) {
    const res = await post(`/pay/${o.id}/card/`, fields, headers);
    assert.equal(res.location, `/pay/${o.id}/`, what);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    const page = await followRefusal(res);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.match(page.html, /role="alert"><p>Dit formulier is verlopen/, what);
    assert.ok(!page.html.includes('5555 5555') && !page.html.includes('4444'), 'the PAN is never echoed');
  }
  assert.deepEqual(await transactionsOf(o.id), []);
  assert.equal(await vaultRows(), before);
});

test('a transaction form token does not work on another transaction', async () => {
  const a = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const b = (await t.api('POST', '/v1/orders/', cardOrder())).body;
  const pa = await get(`/pay/${a.id}/transactions/${a.transactions[0].id}/`);
  assert.equal(actionOf(pa.html), `/pay/${a.id}/transactions/${a.transactions[0].id}/card/`);
  const res = await post(`/pay/${b.id}/transactions/${b.transactions[0].id}/card/`, { ...good, csrf: csrfOf(pa.html) });
  assert.match((await followRefusal(res)).html, /role="alert"><p>Dit formulier is verlopen/);
  const [txn] = await transactionsOf(b.id);
  assert.equal(txn.status, 'new');
  assert.equal(txn.payment_method_details.vault_token, undefined);
});

test('field errors appear next to their field; PAN and CVC are never rendered back', async () => {
  const o = await newOrder({ customer: undefined });
  const page = await get(`/pay/${o.id}/`, { 'accept-language': 'en' });
  const before = await vaultRows();
  const refused = await post(
    `/pay/${o.id}/card/`,
    { csrf: csrfOf(page.html), pan: '4111 1111 1111 1112', expiry: '13/29', cvc: '98', name: 'Ada <b>Lovelace</b>' },
    { 'accept-language': 'en', origin: new URL(t.url).origin },
  );
  assert.equal(refused.location, `/pay/${o.id}/`);
  assert.ok(!refused.headers.get('set-cookie')?.includes('Lovelace'), 'the name travels sealed');
  const res = await followRefusal(refused, { 'accept-language': 'en' });
  // the same page without the cookie: no errors (a reload after the flash shows the form clean)
  assert.doesNotMatch((await get(`/pay/${o.id}/`, { 'accept-language': 'en' })).html, /class="field-error"/);
  assert.match(res.html, /<input id="pan" name="pan" aria-describedby="pan-error" aria-invalid="true" autofocus/);
  assert.match(res.html, /<p class="field-error" id="pan-error">This card number is not valid/);
  assert.match(res.html, /id="expiry-error">Enter the expiry date as MM\/YY/);
  assert.match(res.html, /id="cvc-error">The security code is 3 digits/);
  assert.doesNotMatch(res.html, /id="name-error"/);
  assert.match(res.html, /role="alert"/);
  assert.match(res.html, /<details open>|<h1 id="card-heading">/);
  assert.ok(!res.html.includes('4111 1111 1111 1112') && !res.html.includes('4111111111111112'), 'no PAN');
  assert.doesNotMatch(res.html, /value="98"/, 'no CVC');
  assert.match(res.html, /value="13\/29"/, 'expiry kept');
  assert.match(res.html, /value="Ada &lt;b&gt;Lovelace&lt;\/b&gt;"/, 'name kept, escaped');
  assert.deepEqual(await transactionsOf(o.id), [], 'a rejected form starts nothing');
  assert.equal(await vaultRows(), before);

  const nl = await newOrder();
  const p2 = await get(`/pay/${nl.id}/`);
  const r2 = await followRefusal(await post(`/pay/${nl.id}/card/`, { csrf: csrfOf(p2.html), pan: '', expiry: '', cvc: '', name: '' }));
  assert.match(r2.html, /id="pan-error">Vul het kaartnummer in/);
  assert.match(r2.html, /id="name-error">Vul de naam in/);
  const r3 = await followRefusal(
    await post(`/pay/${nl.id}/card/`, {
      csrf: csrfOf(p2.html),
      pan: '6011000000000004x',
      expiry: '1229',
      cvc: '1234',
      name: 'x'.repeat(121),
    }),
  );
  assert.match(r3.html, /id="pan-error">Een kaartnummer heeft 12 tot 19 cijfers/);
  assert.match(r3.html, /id="name-error">De naam mag hoogstens 120 tekens/);
  assert.doesNotMatch(r3.html, /id="expiry-error"/);
});

test('card form rules: expiry formats, Luhn, brand', () => {
  assert.equal(normaliseExpiry('08/29'), '082029');
  assert.equal(normaliseExpiry('8 / 29'), '082029');
  assert.equal(normaliseExpiry('0829'), '082029');
  assert.equal(normaliseExpiry('082029'), '082029');
  assert.equal(normaliseExpiry('08-2029'), '082029');
  assert.equal(normaliseExpiry('13/29'), undefined);
  assert.equal(normaliseExpiry('00/29'), undefined);
  assert.equal(normaliseExpiry('829'), undefined);
  assert.equal(normaliseExpiry('08/2'), undefined);
  const ok = checkCardForm({ pan: '4111-1111-1111-1111', expiry: '12/34', cvc: ' 123 ', name: '  Ada   Lovelace ' });
  assert.deepEqual(ok.card, { pan: '4111111111111111', expiry: '122034', cvc: '123', name: 'Ada Lovelace' });
  assert.equal(checkCardForm({ ...good, pan: '1234567812345670' }).errors.pan, 'pan_brand');
  assert.equal(checkCardForm({ ...good, pan: '4111111111111112' }).errors.pan, 'pan_luhn');
  assert.equal(checkCardForm({ ...good, cvc: '12a' }).errors.cvc, 'cvc_format');
});

test('unknown or malformed ids give a 404 page', async () => {
  for (const path of ['/pay/not-a-uuid/', `/pay/${crypto.randomUUID()}/`, `/pay/${crypto.randomUUID()}/result/`]) {
    const p = await get(path, { 'accept-language': 'nl' });
    assert.equal(p.status, 404, path);
    assert.match(p.headers.get('content-type') ?? '', /text\/html/);
    assert.match(p.html, /Pagina niet gevonden/);
    assert.equal(p.headers.get('x-frame-options'), 'DENY');
  }
  const o = await newOrder();
  assert.equal((await get(`/pay/${o.id}/transactions/${crypto.randomUUID()}/`)).status, 404);
  const res = await post(`/pay/${o.id}/transactions/${crypto.randomUUID()}/card/`, good);
  assert.equal(res.status, 404);
});

test('payment_url shows the card form of its transaction', async () => {
  const o = (await t.api('POST', '/v1/orders/', cardOrder({ customer: undefined }))).body;
  const [txn] = o.transactions;
  const p = await get(new URL(txn.payment_url).pathname, { 'accept-language': 'en' });
  assert.equal(p.status, 200);
  assert.ok(hasCardForm(p.html));
  assert.match(p.html, /Pay by card/);
  // the order page of an order with a card transaction shows the same form
  const q = await get(`/pay/${o.id}/`);
  assert.equal(actionOf(q.html), `/pay/${o.id}/transactions/${txn.id}/card/`);
});

test('result page: open, cancelled and expired orders', async () => {
  const open = await newOrder({ customer: undefined });
  const a = await get(`/pay/${open.id}/result/`, { 'accept-language': 'en' });
  assert.equal(a.status, 200);
  assert.match(a.html, /data-outcome="open"/);
  assert.match(a.html, new RegExp(`href="/pay/${open.id}/"`));

  const cancelled = await newOrder({ customer: undefined, failure_url: 'https://shop.example/failed?x=1' });
  const token = csrfOf((await get(`/pay/${cancelled.id}/`)).html);
  assert.equal((await t.api('DELETE', `/v1/orders/${cancelled.id}/`)).status, 200);
  const b = await get(`/pay/${cancelled.id}/result/`, { 'accept-language': 'en' });
  assert.match(b.html, /data-outcome="cancelled"/);
  assert.match(b.html, /class="retry"/);
  assert.match(
    b.html,
    new RegExp(`href="https://shop.example/failed\\?x=1&amp;order_id=${cancelled.id}&amp;project_id=${t.project.project_id}"`),
  );
  // the order page of a finished order shows its status, not a form
  const c = await get(`/pay/${cancelled.id}/`);
  assert.ok(!hasCardForm(c.html));
  assert.match(c.html, /data-outcome="cancelled"/);
  // a form still open in another tab cannot pay it any more
  const late = await post(`/pay/${cancelled.id}/card/`, { ...good, csrf: token });
  assert.equal(late.status, 303);
  assert.equal(late.location, `/pay/${cancelled.id}/result/`);
  assert.deepEqual(await transactionsOf(cancelled.id), []);

  const other = await t.newProject('test');
  const lapsing = await newOrder({ expiration_period: 'PT10M' }, other.api_key);
  assert.ok(hasCardForm((await get(`/pay/${lapsing.id}/`)).html));
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' }, { key: other.api_key });
  const d = await get(`/pay/${lapsing.id}/`);
  assert.match(d.html, /data-outcome="expired"/);
  assert.ok(!hasCardForm(d.html));
});

test('a valid card starts the transaction and 3-D Secure, once', async () => {
  const o = await newOrder({ customer: undefined });
  const page = await get(`/pay/${o.id}/`);
  const token = csrfOf(page.html);
  const res = await post(`/pay/${o.id}/card/`, { ...good, csrf: token }, { origin: new URL(t.url).origin });
  assert.equal(res.status, 303, res.html);
  const [txn] = await transactionsOf(o.id);
  assert.equal(txn.payment_method, 'credit-card');
  assert.equal(txn.status, 'pending');
  assert.equal(txn.payment_method_details.truncated_pan, '555555******4444');
  assert.equal(txn.payment_method_details.cardholder_name, 'Ada Lovelace');
  assert.equal(txn.payment_method_details.card_expiry, '122034');
  assert.equal(res.location, `${t.url}/pay/3ds/${txn.id}/`);

  // a second submit of the same form (double click, back button) starts nothing new
  const again = await post(`/pay/${o.id}/card/`, { ...good, csrf: token });
  assert.equal(again.status, 303);
  assert.equal(again.location, `/pay/${o.id}/result/`);
  assert.equal((await transactionsOf(o.id)).length, 1);

  const threeDs = await get(new URL(res.location).pathname);
  assert.equal(threeDs.status, 302);
  assert.equal(threeDs.location, `https://shop.example/return?order_id=${o.id}&project_id=${t.project.project_id}`);
  const order = (await t.api('GET', `/v1/orders/${o.id}/`)).body;
  assert.equal(order.status, 'completed');
  const result = await get(`/pay/${o.id}/result/`, { 'accept-language': 'en' });
  assert.match(result.html, /data-outcome="paid"/);
  assert.match(result.html, /Payment received/);
  const txnPage = await get(`/pay/${o.id}/transactions/${txn.id}/`);
  assert.match(txnPage.html, /data-outcome="paid"/);
  assert.ok(!hasCardForm(txnPage.html));
});

test('a failed order of a payment link offers to try again from the link', async () => {
  const link = await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'inv-9', amount: 500, currency: 'EUR' });
  assert.equal(link.status, 201, link.text);
  const linkPath = new URL(link.body.payment_url).pathname;
  const chosen = await post(linkPath, { csrf: csrfOf((await get(linkPath)).html), payment_method: 'credit-card' });
  assert.equal(chosen.status, 303, chosen.html);
  const orderId = new URL(chosen.location, t.url).pathname.split('/')[2];
  assert.equal((await t.api('DELETE', `/v1/orders/${orderId}/`)).status, 200);
  const r = await get(`/pay/${orderId}/result/`, { 'accept-language': 'en' });
  assert.match(r.html, /data-outcome="cancelled"/);
  assert.match(r.html, new RegExp(`<a class="button" href="${link.body.payment_url}">Try again</a>`));
});

test('while 3-D Secure waits for the customer the page says so and leads back to it; while the bank answers our script polls', async () => {
  const challenge = await newOrder({ customer: undefined, return_url: undefined });
  const p1 = await post(`/pay/${challenge.id}/card/`, {
    ...good,
    pan: '4000002760003184',
    csrf: csrfOf((await get(`/pay/${challenge.id}/`)).html),
  });
  assert.equal(p1.status, 303);
  const waiting = await get(`/pay/${challenge.id}/`, { 'accept-language': 'en' });
  assert.match(waiting.html, /data-outcome="pending"/);
  assert.ok(waiting.html.includes(`href="${new URL(p1.location).pathname}"`), 'continue link to the challenge');
  assert.doesNotMatch(waiting.html, /http-equiv="refresh"|data-poll/);
  assert.match(waiting.html, /Your bank asks you to confirm this payment/);

  const late = await newOrder({ customer: undefined, return_url: undefined });
  const p2 = await post(`/pay/${late.id}/card/`, { ...good, pan: '4000000000000341', csrf: csrfOf((await get(`/pay/${late.id}/`)).html) });
  const back = await get(new URL(p2.location).pathname);
  assert.equal(back.status, 302);
  assert.equal(back.location, `${t.url}/pay/${late.id}/result/`);
  const r = await get(`/pay/${late.id}/result/`, { 'accept-language': 'en' });
  assert.match(r.html, /data-outcome="pending"/);
  assert.doesNotMatch(r.html, /http-equiv="refresh"/);
  assert.match(r.html, /We are waiting for the bank to confirm your payment/);
  assert.match(r.html, new RegExp(`data-poll="/pay/${late.id}/outcome/"`));
  assert.match(
    r.html,
    new RegExp(`<a class="button secondary" href="/pay/${late.id}/result/">Check again</a>`),
    'a way forward without script',
  );
  assert.match(r.headers.get('content-security-policy') ?? '', /script-src 'self'; connect-src 'self'/);
  const outcome = await t.api('GET', `/pay/${late.id}/outcome/`, undefined, { key: null });
  assert.deepEqual(outcome.body, { outcome: 'pending' });
  assert.doesNotMatch(r.html, /4111 1111 1111 1111/, 'no test-card hint once paying is over');
});
