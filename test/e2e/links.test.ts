import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOCAL_RECEIVERS, startTestService, type TestService } from '../helpers/service.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
before(async () => {
  t = await startTestService({ env: LOCAL_RECEIVERS });
});
after(async () => t?.close());

const validLink = (over: Record<string, unknown> = {}) => ({
  merchant_order_id: 'invoice-77',
  amount: 4250,
  currency: 'EUR',
  description: 'Invoice 77',
  return_url: 'https://shop.example/thanks',
  webhook_url: 'https://shop.example/hooks',
  ...over,
});

const count = async (table: string) =>
  (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE project_id = $1`, [t.project.project_id]))[0].n;

/** What a customer's browser does: open the link page, then press the button of a method. */
async function choose(paymentUrl: string, method = 'credit-card') {
  const page = await fetch(paymentUrl);
  const html = await page.text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const res = await fetch(paymentUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(paymentUrl).origin },
    body: new URLSearchParams({ csrf, payment_method: method }).toString(),
  });
  return { status: res.status, location: res.headers.get('location') ?? '', html: await res.text(), page: html };
}

/** The order a redirect to a hosted page points at. */
const orderIdOf = (location: string) => /\/pay\/([0-9a-f-]{36})\//.exec(location)![1];

/** Pays an attempt on the hosted card form as a browser would; returns where the customer ends up. */
async function payAttempt(orderId: string, pan: '4111111111111111' | '4000000000000002') {
  const order = (await t.api('GET', `/v1/orders/${orderId}/`)).body;
  const form = await (await fetch(order.transactions[0].payment_url)).text();
  const action = /<form method="post" action="([^"]+)"/.exec(form)![1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(form)![1];
  const origin = new URL(t.url).origin;
  let res = await fetch(new URL(action, t.url), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams({ csrf, pan, expiry: '12/34', cvc: '123', name: 'Ada Lovelace' }).toString(),
  });
  // the simulated 3-D Secure is frictionless for these cards: follow it to the end
  while (res.status === 303 || res.status === 302) {
    const next = new URL(res.headers.get('location')!, t.url);
    if (next.origin !== origin || next.pathname.startsWith('/pay/links/') || next.pathname.endsWith('/result/')) return next.href;
    res = await fetch(next, { redirect: 'manual' });
  }
  assert.fail(`payment did not finish: ${res.status} ${await res.text()}`);
}

const getLink = async (id: string) => {
  const res = await t.api('GET', `/v1/paymentlinks/${id}/`);
  assert.equal(res.status, 200, res.text);
  return res.body;
};

test('creates a link with defaults and reads it back', async () => {
  const res = await t.api('POST', '/v1/paymentlinks/', validLink());
  assert.equal(res.status, 201, res.text);
  const l = res.body;
  assert.match(l.id, /^[0-9a-f-]{36}$/);
  assert.equal(l.project_id, t.project.project_id);
  assert.equal(l.merchant_id, t.project.merchant_id);
  assert.equal(l.status, 'new');
  assert.equal(typeof l.reason, 'string');
  assert.equal(l.expiration_period, 'P30D');
  assert.equal(l.payment_url, `${t.url}/pay/links/${l.id}/`);
  assert.deepEqual(l.orders, {});
  assert.equal(l.completed_order_id, undefined);
  assert.equal(l.completed, undefined);
  assert.equal(l.amount, 4250);
  assert.equal(l.webhook_url, 'https://shop.example/hooks');
  assert.equal(l.created, l.modified);
  const got = await getLink(l.id);
  assert.deepEqual(got, l);
  const noSlash = await t.api('GET', `/v1/paymentlinks/${l.id}`);
  assert.equal(noSlash.status, 200);
});

test('keeps the optional fields it was given', async () => {
  const res = await t.api(
    'POST',
    '/v1/paymentlinks',
    validLink({ payment_methods: ['credit-card'], expiration_period: 'P20D', description: null }),
  );
  assert.equal(res.status, 201, res.text);
  assert.deepEqual(res.body.payment_methods, ['credit-card']);
  assert.equal(res.body.expiration_period, 'P20D');
  assert.equal(res.body.description, undefined);
});

test('refuses invalid links with the field named, and stores nothing', async () => {
  const before = await count('payment_links');
  const jobsBefore = await count('jobs');
  const cases: [Record<string, unknown>, string, number?][] = [
    [validLink({ merchant_order_id: undefined }), 'merchant_order_id'],
    [validLink({ amount: undefined }), 'amount'],
    [validLink({ currency: undefined }), 'currency'],
    [validLink({ merchant_order_id: '' }), 'merchant_order_id'],
    [validLink({ merchant_order_id: 77 }), 'merchant_order_id'],
    [validLink({ amount: -1 }), 'amount'],
    [validLink({ amount: 12.5 }), 'amount'],
    [validLink({ amount: '4250' }), 'amount'],
    [validLink({ currency: 'eur' }), 'currency'],
    [validLink({ currency: 'XYZ' }), 'currency'],
    [validLink({ expiration_period: 'thirty days' }), 'expiration_period'],
    [validLink({ expiration_period: 'P0D' }), 'expiration_period'],
    [validLink({ expiration_period: '-P1D' }), 'expiration_period'],
    [validLink({ return_url: 'javascript:alert(1)' }), 'return_url'],
    [validLink({ webhook_url: 'not a url' }), 'webhook_url'],
    [validLink({ payment_methods: ['bitcoin'] }), 'payment_methods[0]'],
    [validLink({ payment_methods: 'credit-card' }), 'payment_methods'],
    [validLink({ expiry: 'P1D' }), 'expiry'],
    [validLink({ transactions: [] }), 'transactions'],
  ];
  for (const [body, field] of cases) {
    const res = await t.api('POST', '/v1/paymentlinks/', body);
    assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
    assert.equal(res.body.error.type, 'ValidationError');
    assert.equal(res.body.error.field, field, res.text);
  }
  const live = await t.newProject('live');
  const ssrf = await t.api('POST', '/v1/paymentlinks/', validLink({ webhook_url: 'http://127.0.0.1:9/hook' }), { key: live.api_key });
  assert.equal(ssrf.status, 400, ssrf.text);
  assert.equal(ssrf.body.error.field, 'webhook_url');
  const notJson = await t.api('POST', '/v1/paymentlinks/', undefined, { raw: '{"amount": 1,' });
  assert.equal(notJson.status, 400);
  assert.equal(await count('payment_links'), before);
  assert.equal(await count('jobs'), jobsBefore);
});

test('links are per project, and ids are checked', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink())).body;
  const other = await t.newProject();
  const res = await t.api('GET', `/v1/paymentlinks/${l.id}/`, undefined, { key: other.api_key });
  assert.equal(res.status, 404);
  assert.equal(res.body.error.type, 'NotFound');
  const bad = await t.api('GET', '/v1/paymentlinks/nope/');
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.field, 'payment_link_id');
  const anon = await t.api('POST', '/v1/paymentlinks/', validLink(), { key: null });
  assert.equal(anon.status, 401);
});

test('choosing a method creates an order from the link and sends the customer to pay it', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink())).body;
  const page = await fetch(l.payment_url);
  const html = await page.text();
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  assert.match(html, /Test shop/);
  assert.match(html, /42\.50/);
  assert.match(html, /Invoice 77/);
  const chosen = await choose(l.payment_url);
  assert.equal(chosen.status, 303, chosen.html);
  const orderId = orderIdOf(chosen.location);
  const o = (await t.api('GET', `/v1/orders/${orderId}/`)).body;
  assert.equal(chosen.location, o.transactions[0].payment_url);
  assert.equal(o.related_payment_link_id, l.id);
  assert.equal(o.amount, 4250);
  assert.equal(o.currency, 'EUR');
  assert.equal(o.description, 'Invoice 77');
  assert.equal(o.merchant_order_id, 'invoice-77');
  assert.equal(o.return_url, 'https://shop.example/thanks');
  assert.equal(o.webhook_url, 'https://shop.example/hooks');
  assert.equal(o.failure_url, l.payment_url);
  assert.equal(o.transactions[0].payment_method, 'credit-card');
  // the link's orders are found by related_payment_link_id
  const found = await t.api('POST', '/v1/search/orders/', { query: `related_payment_link_id:${l.id}` });
  assert.equal(found.status, 200, found.text);
  assert.deepEqual(
    found.body.orders.map((x: Json) => x.id),
    [orderId],
  );
});

test('the link page refuses a form without its token, for another link or from another site, and makes no order', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink())).body;
  const other = (await t.api('POST', '/v1/paymentlinks/', validLink())).body;
  const form = { 'content-type': 'application/x-www-form-urlencoded' };
  const post = (csrf: string | undefined, headers: Record<string, string> = {}, method = 'credit-card') =>
    fetch(l.payment_url, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...form, ...headers },
      body: new URLSearchParams({ ...(csrf && { csrf }), payment_method: method }).toString(),
    });
  const tokenOf = async (url: string) => /name="csrf" value="([^"]+)"/.exec(await (await fetch(url)).text())![1];
  const csrf = await tokenOf(l.payment_url);
  assert.equal((await post(undefined)).status, 403);
  assert.equal((await post(csrf.slice(0, -2) + 'AA')).status, 403);
  assert.equal((await post(await tokenOf(other.payment_url))).status, 403, "another link's token");
  const crossSite = await post(csrf, { origin: 'https://evil.example' });
  assert.equal(crossSite.status, 403);
  assert.match(await crossSite.text(), /Please try again/);
  const tampered = await post(csrf, {}, 'bitcoin');
  assert.equal(tampered.status, 303);
  assert.equal(tampered.headers.get('location'), l.payment_url);
  assert.deepEqual((await getLink(l.id)).orders, {});
  const missing = await fetch(`${t.url}/pay/links/3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11/`);
  assert.equal(missing.status, 404);
  assert.match(await missing.text(), /not found/);
  assert.equal((await fetch(`${t.url}/pay/links/nope/`)).status, 404);
});

test('status: new -> processing -> all_unsuccessful -> processing -> completed, orders grouped by status', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink())).body;
  assert.equal((await getLink(l.id)).status, 'new');

  const first = orderIdOf((await choose(l.payment_url)).location);
  let link = await getLink(l.id);
  assert.equal(link.status, 'processing');
  assert.deepEqual(link.orders, { new: [first] });

  const back = await payAttempt(first, '4000000000000002');
  assert.equal(back, `${l.payment_url}?order_id=${first}&project_id=${t.project.project_id}`, 'a failed attempt returns to the link');
  link = await getLink(l.id);
  assert.equal(link.status, 'all_unsuccessful');
  assert.match(link.reason, /declined/);
  assert.deepEqual(link.orders, { error: [first] });
  assert.ok(link.modified > l.modified, 'an order change touches the link');
  assert.equal(link.completed, undefined);
  // back on the link page after the failure: the customer sees it and can try again
  const retry = await (await fetch(back)).text();
  assert.match(retry, /did not succeed/);
  assert.match(retry, /declined the payment/);
  assert.match(retry, /name="payment_method"/);

  const second = orderIdOf((await choose(l.payment_url)).location);
  assert.notEqual(second, first);
  link = await getLink(l.id);
  assert.equal(link.status, 'processing');
  assert.deepEqual(link.orders, { error: [first], new: [second] });

  assert.equal(
    await payAttempt(second, '4111111111111111'),
    `https://shop.example/thanks?order_id=${second}&project_id=${t.project.project_id}`,
  );
  link = await getLink(l.id);
  assert.equal(link.status, 'completed');
  assert.equal(link.completed_order_id, second);
  assert.deepEqual(link.orders, { error: [first], completed: [second] });
  assert.ok(link.completed);
  assert.equal(link.modified, link.completed);

  // a paid link shows it, takes no new order, and stays completed after its expiry
  const again = await choose(l.payment_url);
  assert.match(again.page, /already been paid/);
  assert.doesNotMatch(again.page, /name="payment_method"/);
  assert.equal((await getLink(l.id)).orders.new, undefined);
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'P31D' });
  const later = await getLink(l.id);
  assert.equal(later.status, 'completed');
  assert.equal(later.completed, link.completed);
});

test('an abandoned attempt expires with its transaction, a cancelled one too: all_unsuccessful', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink())).body;
  const first = orderIdOf((await choose(l.payment_url)).location);
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT31M' });
  let link = await getLink(l.id);
  assert.equal(link.status, 'all_unsuccessful');
  assert.deepEqual(link.orders, { expired: [first] });
  const second = orderIdOf((await choose(l.payment_url)).location);
  assert.equal((await t.api('DELETE', `/v1/orders/${second}/`)).status, 200);
  link = await getLink(l.id);
  assert.equal(link.status, 'all_unsuccessful');
  assert.deepEqual(link.orders, { expired: [first], cancelled: [second] });
});

test('status: new -> expired through run-due-jobs; an expired link takes no order', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink({ expiration_period: 'P30D' }))).body;
  const early = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'P29D' });
  assert.equal(early.status, 200, early.text);
  assert.equal((await getLink(l.id)).status, 'new');
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'P2D' });
  const link = await getLink(l.id);
  assert.equal(link.status, 'expired');
  assert.match(link.reason, /expired/);
  assert.ok(link.completed);
  const stored = (
    await t.db.query<{ completed: Date; expires_at: Date }>('SELECT completed, expires_at FROM payment_links WHERE id = $1', [l.id])
  )[0];
  assert.equal(new Date(stored.completed).getTime(), new Date(stored.expires_at).getTime(), 'the job recorded the expiry');
  const tried = await choose(l.payment_url);
  assert.match(tried.page, /has expired/);
  assert.doesNotMatch(tried.page, /name="payment_method"/);
  assert.deepEqual((await getLink(l.id)).orders, {});
});

test('status: all_unsuccessful -> expired; processing -> expired keeps the orders grouped', async () => {
  const a = (await t.api('POST', '/v1/paymentlinks/', validLink({ expiration_period: 'P1D' }))).body;
  const b = (await t.api('POST', '/v1/paymentlinks/', validLink({ expiration_period: 'P1D' }))).body;
  const failed = orderIdOf((await choose(a.payment_url)).location);
  await payAttempt(failed, '4000000000000002');
  const open = orderIdOf((await choose(b.payment_url, 'credit-card')).location);
  assert.equal((await getLink(a.id)).status, 'all_unsuccessful');
  assert.equal((await getLink(b.id)).status, 'processing');
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'P1DT1M' });
  const la = await getLink(a.id);
  const lb = await getLink(b.id);
  assert.equal(la.status, 'expired');
  assert.match(la.reason, /after 1 attempt/);
  assert.deepEqual(la.orders, { error: [failed] });
  assert.equal(lb.status, 'expired');
  assert.deepEqual(lb.orders, { expired: [open] });
});

test('a link limited to one method offers only that one', async () => {
  const l = (await t.api('POST', '/v1/paymentlinks/', validLink({ payment_methods: ['credit-card'] }))).body;
  const html = await (await fetch(l.payment_url, { headers: { 'accept-language': 'nl-NL,nl;q=0.9' } })).text();
  assert.equal((html.match(/name="payment_method"/g) ?? []).length, 1);
  assert.match(html, /Betalen met Kaart/);
  assert.match(html, /42,50/);
});

test("the link's webhook_url receives the status changes of its orders", async () => {
  const received: { path: string; body: Json }[] = [];
  const server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(data) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const hook = `http://127.0.0.1:${(server.address() as AddressInfo).port}/link-hook`;
    const l = (await t.api('POST', '/v1/paymentlinks/', validLink({ webhook_url: hook, return_url: undefined }))).body;
    const orderId = orderIdOf((await choose(l.payment_url)).location);
    await payAttempt(orderId, '4000000000000002');
    for (let i = 0; i < 100 && !received.some((r) => r.body.order_id === orderId); i++) {
      await t.api('POST', '/v1/test/clock/run-due-jobs/');
      await new Promise((r) => setTimeout(r, 100));
    }
    const mine = received.filter((r) => r.body.order_id === orderId);
    assert.ok(mine.length >= 1, `no webhook arrived: ${JSON.stringify(received)}`);
    assert.equal(mine[0].path, '/link-hook');
    assert.deepEqual(mine[0].body, { event: 'status_changed', order_id: orderId, project_id: t.project.project_id });
  } finally {
    server.close();
  }
});
