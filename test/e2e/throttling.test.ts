// Throttling (docs/security.md "Throttling"): per API key on the API and the vault, per client
// address on failed authentications, hosted-page form posts and the token service, and
// card-testing protection on payment links and hosted pages. Each concern has a service of its
// own: the counts live in that service's store.
import { test, after } from 'node:test';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { basic, request, startTestService, type ApiResponse, type TestService } from '../helpers/service.ts';
import { futureExpiry } from '../helpers/cards.ts';
import { loadConfig } from '../../src/config.ts';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Json } from '../helpers/json.ts';

const services: TestService[] = [];
after(async () => {
  for (const s of services) await s.close();
});
async function service(env: Record<string, string>): Promise<TestService> {
  const s = await startTestService({ env });
  services.push(s);
  return s;
}

/** n calls, `width` at a time. */
async function burst<T>(n: number, call: (i: number) => Promise<T>, width = 50): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += width)
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => call(i + j)))));
  return out;
}

function assertLimited(res: ApiResponse) {
  assert.equal(res.status, 429, res.text);
  assert.equal(res.body.error.type, 'RateLimitExceeded');
  assert.equal(res.body.error.status, 429);
  const wait = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After ${res.headers.get('retry-after')}`);
}

const tally = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((a, r) => ((a[r.status] = (a[r.status] ?? 0) + 1), a), {});

const LIMIT = 600;

/**
 * limit + 1 calls, 100 at a time, until one is refused. Windows are fixed minutes: a burst that
 * straddles a minute boundary may split its count, and then (only then) it goes again.
 */
async function overTheLimit(limit: number, call: (i: number) => Promise<ApiResponse>): Promise<ApiResponse[]> {
  for (let round = 0; ; round++) {
    const minute = Math.floor(Date.now() / 60_000);
    const results = await burst(limit + 1, call, 100);
    if (results.some((r) => r.status === 429)) return results;
    assert.notEqual(Math.floor(Date.now() / 60_000), minute, `no 429 in ${limit + 1} calls within one minute`);
    assert.ok(round < 2, 'no 429 after three bursts');
  }
}

test('RATE_LIMIT_PER_MINUTE=600: a burst at the vault gets 429s with Retry-After and the error body; another project is unaffected', async () => {
  const t = await service({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  const noisy = await t.newProject('test');
  const vault = (key: string, body: unknown) => request(`${t.config.vaultUrl}/v1/cards/`, 'POST', body, { authorization: basic(key) });
  const results = await overTheLimit(LIMIT, () => vault(noisy.api_key, {}));
  assert.deepEqual(Object.keys(tally(results)).sort(), ['400', '429']);
  assertLimited(results.find((r) => r.status === 429)!);
  // the other project's vault and API answer as usual
  const order = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100, transactions: [{ payment_method: 'credit-card' }] });
  assert.equal(order.status, 201, order.text);
  const stored = await vault(t.project.api_key, {
    pan: '4111111111111111',
    expiry: futureExpiry(),
    name: 'Ada Lovelace',
    setup_token: order.body.transactions[0].payment_method_details.setup_token,
  });
  assert.equal(stored.status, 201, stored.text);
  // the noisy project's API has a count of its own (the vault's filled up, not the API's)
  assert.equal((await t.api('GET', `/v1/orders/${order.body.id}/`)).status, 200);
});

test('bursts with wrong keys get 429 with Retry-After instead of 401; a valid key from the same address still gets in', async () => {
  const t = await service({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  const results = await overTheLimit(LIMIT, (i) => t.api('GET', `/v1/orders/${randomUUID()}/`, undefined, { key: `test_wrong${i}` }));
  assert.deepEqual(Object.keys(tally(results)).sort(), ['401', '429']);
  assertLimited(results.find((r) => r.status === 429)!);
  // at the vault too: the same address's failures
  assertLimited(await request(`${t.config.vaultUrl}/v1/cards/`, 'POST', {}, { authorization: basic('test_wrong') }));
  const order = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 });
  assert.equal(order.status, 201, order.text);
});

test('hosted-page form posts and the token service are limited per client address (PUBLIC_RATE_LIMIT_PER_MINUTE)', async () => {
  const t = await service({ PUBLIC_RATE_LIMIT_PER_MINUTE: '5' });
  const order = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100, transactions: [{ payment_method: 'credit-card' }] });
  assert.equal(order.status, 201);
  const post = () =>
    fetch(`${t.url}/pay/${order.body.id}/card/`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=x',
    });
  const pages = await burst(12, post, 1);
  const statuses = pages.map((r) => r.status);
  assert.deepEqual(
    statuses.slice(0, 5),
    [303, 303, 303, 303, 303],
    'a form post without a valid token goes back to the form (POST/redirect/GET), until the limit',
  );
  assert.ok(
    statuses.slice(5).every((s) => s === 429),
    String(statuses),
  );
  const refused = pages.at(-1)!;
  assert.match(refused.headers.get('content-type') ?? '', /text\/html/);
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  // pages are still shown (GET is not limited)
  assert.equal((await fetch(`${t.url}/pay/${order.body.id}/`)).status, 200);

  const token = () => request(`${t.config.walletBTokenUrl}/test/tokens/`, 'POST', { walletBPayMessage: 'x' });
  const tokens = await burst(12, token, 1);
  assert.deepEqual(
    tokens.slice(0, 5).map((r) => r.status),
    [400, 400, 400, 400, 400],
  );
  for (const r of tokens.slice(5)) assertLimited(r);
});

/** The browser on a payment link: open it, choose the card, pay on the hosted form. */
type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;
/** A second customer, from another loopback address (127.0.0.2). */
const elsewhere = new Agent({ localAddress: '127.0.0.2' });
after(() => elsewhere.close());
const otherClient: Fetch = (url, init) => undiciFetch(url, { ...(init as Json), dispatcher: elsewhere }) as unknown as Promise<Response>;

async function linkAttempt(
  t: TestService,
  paymentUrl: string,
  pan: string,
  fetch: Fetch = globalThis.fetch,
): Promise<{ status: number; retryAfter: string | null; html: string; end?: string }> {
  const origin = new URL(t.url).origin;
  const form = { 'content-type': 'application/x-www-form-urlencoded', origin };
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(paymentUrl)).text())![1];
  const chosen = await fetch(paymentUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: form,
    body: new URLSearchParams({ csrf, payment_method: 'credit-card' }).toString(),
  });
  if (chosen.status !== 303) return { status: chosen.status, retryAfter: chosen.headers.get('retry-after'), html: await chosen.text() };
  const page = await (await fetch(new URL(chosen.headers.get('location')!, t.url))).text();
  const action = /<form method="post" action="([^"]+)"/.exec(page)![1];
  const cardCsrf = /name="csrf" value="([^"]+)"/.exec(page)![1];
  let res = await fetch(new URL(action, t.url), {
    method: 'POST',
    redirect: 'manual',
    headers: form,
    body: new URLSearchParams({ csrf: cardCsrf, pan, expiry: '12/34', cvc: '123', name: 'Card Tester' }).toString(),
  });
  if (res.status !== 303) return { status: res.status, retryAfter: res.headers.get('retry-after'), html: await res.text() };
  while (res.status === 303 || res.status === 302) {
    const next = new URL(res.headers.get('location')!, t.url);
    if (next.origin !== origin || next.pathname.startsWith('/pay/links/') || next.pathname.endsWith('/result/'))
      return { status: 303, retryAfter: null, html: '', end: next.href };
    res = await fetch(next, { redirect: 'manual' });
  }
  return { status: res.status, retryAfter: null, html: await res.text() };
}

test('card testing: after CARD_TESTING_MAX_DECLINES declines through a link, further attempts get 429 until the window passes', async () => {
  const t = await service({ CARD_TESTING_MAX_DECLINES: '3', CARD_TESTING_WINDOW_SECONDS: '600' });
  const link = await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'ct-1', amount: 500, currency: 'EUR' });
  assert.equal(link.status, 201, link.text);
  for (let i = 0; i < 3; i++) {
    const r = await linkAttempt(t, link.body.payment_url, '4000000000000002');
    assert.equal(r.status, 303, r.html);
  }
  const declined = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM transactions t JOIN orders o ON o.id = t.order_id WHERE o.payment_link_id = $1 AND t.status = 'declined'",
    [link.body.id],
  );
  assert.equal(declined[0].n, 3);
  const ordersBefore = (await t.api('GET', `/v1/paymentlinks/${link.body.id}/`)).body.orders?.length ?? 0;

  // the fourth attempt, even with a good card, is refused before any order is made
  const refused = await linkAttempt(t, link.body.payment_url, '4111111111111111');
  assert.equal(refused.status, 429);
  const wait = Number(refused.retryAfter);
  assert.ok(wait > 0 && wait <= 600, `Retry-After ${refused.retryAfter}`);
  assert.match(refused.html, /Too many payment attempts failed/);
  assert.equal((await t.api('GET', `/v1/paymentlinks/${link.body.id}/`)).body.orders?.length ?? 0, ordersBefore, 'no order made');

  // another customer (address) on this link: refused too, the link's declines count
  assert.equal((await linkAttempt(t, link.body.payment_url, '4111111111111111', otherClient)).status, 429);
  // the first client on another link: refused, its address's declines count; the other customer there is served
  const other = await t.api('POST', '/v1/paymentlinks/', { merchant_order_id: 'ct-2', amount: 700, currency: 'EUR' });
  assert.equal((await linkAttempt(t, other.body.payment_url, '4111111111111111')).status, 429);
  assert.equal((await linkAttempt(t, other.body.payment_url, '4111111111111111', otherClient)).status, 303);

  // when the window has passed (the test project's clock), the link takes payments again
  const moved = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' });
  assert.equal(moved.status, 200, moved.text);
  const paid = await linkAttempt(t, link.body.payment_url, '4111111111111111');
  assert.equal(paid.status, 303, paid.html);
  assert.ok(paid.end);
});

test('settings are checked: a bad value is an error naming the setting', () => {
  assert.throws(() => loadConfig({ RATE_LIMIT_PER_MINUTE: 'lots' }), /RATE_LIMIT_PER_MINUTE/);
  assert.throws(() => loadConfig({ PUBLIC_RATE_LIMIT_PER_MINUTE: '-1' }), /PUBLIC_RATE_LIMIT_PER_MINUTE/);
  assert.throws(() => loadConfig({ CARD_TESTING_MAX_DECLINES: '1.5' }), /CARD_TESTING_MAX_DECLINES/);
  assert.throws(() => loadConfig({ CARD_TESTING_WINDOW_SECONDS: '0' }), /CARD_TESTING_WINDOW_SECONDS/);
  const c = loadConfig({ PUBLIC_RATE_LIMIT_PER_MINUTE: '30', CARD_TESTING_MAX_DECLINES: '0' });
  assert.equal(c.publicRateLimitPerMinute, 30);
  assert.equal(c.cardTesting.maxDeclines, 0);
});
