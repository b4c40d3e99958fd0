import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, request, type TestService } from '../helpers/service.ts';
import { followBrowser, futureExpiry, startPayment, vault, createCardOrder, parseForm, submitForm } from '../helpers/cards.ts';
import type { Json } from '../helpers/json.ts';

// The late decline answers after LATE_DECLINE_MS of the project's clock. It is set far ahead so
// the background worker never declines before the test looks, then reached by advancing the clock.
let t: TestService;
before(async () => {
  // the slow card answers after a second here (10 s in the sandbox); processing captures settle when asked again
  t = await startTestService({
    config: { lateDeclineMs: 10 * 60_000, acquirer: { timeoutMs: 30_000, recoveryMs: 35_000, simSlowMs: 1000, simSettleMs: 0 } },
  });
});
after(async () => t?.close());

const RETURN = 'https://shop.example/return?lang=nl';
const FAILURE = 'https://shop.example/failed';
const urls = { return_url: RETURN, failure_url: FAILURE };

interface Expect {
  pan: string;
  code?: string;
  brand: string;
  order: string;
  txn: string;
  reason?: string;
  liability: boolean;
  eci: string;
}

// docs/cards.md "Test cards", written out independently of the implementation's table.
const CASES: Expect[] = [
  { pan: '4111111111111111', brand: 'visa', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  { pan: '4242424242424242', brand: 'visa', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  { pan: '5555555555554444', brand: 'mastercard', order: 'completed', txn: 'accepted', liability: true, eci: '02' },
  { pan: '2223003122003222', brand: 'mastercard', order: 'completed', txn: 'accepted', liability: true, eci: '02' },
  { pan: '378282246310005', brand: 'amex', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  { pan: '4000002500001001', brand: 'cartes_bancaires', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  { pan: '4000002760003184', code: '1234', brand: 'visa', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  {
    pan: '4000002760003184',
    code: '9999',
    brand: 'visa',
    order: 'error',
    txn: 'declined',
    reason: 'authentication_failed',
    liability: false,
    eci: '07',
  },
  { pan: '4000000000003055', brand: 'visa', order: 'completed', txn: 'accepted', liability: false, eci: '07' },
  { pan: '4000000000003063', brand: 'visa', order: 'error', txn: 'declined', reason: 'authentication_failed', liability: false, eci: '07' },
  { pan: '4000000000000002', brand: 'visa', order: 'error', txn: 'declined', reason: 'declined', liability: true, eci: '05' },
  { pan: '4000000000009995', brand: 'visa', order: 'error', txn: 'declined', reason: 'insufficient_funds', liability: true, eci: '05' },
  { pan: '4000000000000069', brand: 'visa', order: 'error', txn: 'declined', reason: 'expired_card', liability: true, eci: '05' },
  { pan: '4000000000000127', brand: 'visa', order: 'error', txn: 'declined', reason: 'incorrect_cvc', liability: true, eci: '05' },
  { pan: '4000000000000119', brand: 'visa', order: 'error', txn: 'error', reason: 'processing_error', liability: true, eci: '05' },
  { pan: '4000000000000341', brand: 'visa', order: 'processing', txn: 'processing', liability: true, eci: '05' },
  { pan: '4000000000001018', brand: 'visa', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  { pan: '4000000000001026', brand: 'visa', order: 'processing', txn: 'processing', liability: true, eci: '05' },
  { pan: '4000000000001034', brand: 'visa', order: 'completed', txn: 'accepted', liability: true, eci: '05' },
  {
    pan: '4000008260003178',
    code: '1234',
    brand: 'visa',
    order: 'error',
    txn: 'declined',
    reason: 'insufficient_funds',
    liability: true,
    eci: '05',
  },
  {
    pan: '4000008260003178',
    code: '0000',
    brand: 'visa',
    order: 'error',
    txn: 'declined',
    reason: 'authentication_failed',
    liability: false,
    eci: '07',
  },
];

const withIds = (url: string, order: { id: string; project_id: string }) => {
  const u = new URL(url);
  return `${u.origin}${u.pathname}${u.search ? `${u.search}&` : '?'}order_id=${order.id}&project_id=${order.project_id}`;
};

test('GET /v1/test/cards/ lists every card of the table, and this test covers each', async () => {
  const res = await t.api('GET', '/v1/test/cards/');
  assert.equal(res.status, 200, res.text);
  const listed = res.body.cards.map((c: Json) => c.pan).sort();
  assert.deepEqual(listed, [...new Set(CASES.map((c) => c.pan))].sort());
  const cb = res.body.cards.find((c: Json) => c.pan === '4000002500001001');
  assert.deepEqual(cb.brands, ['cartes_bancaires', 'visa']);
  const challenge = res.body.cards.find((c: Json) => c.pan === '4000002760003184');
  assert.equal(challenge.three_ds, 'C');
  assert.equal(challenge.challenge_code, '1234');
  const live = await t.newProject('live');
  assert.equal((await t.api('GET', '/v1/test/cards/', undefined, { key: live.api_key })).status, 403);
});

for (const c of CASES) {
  test(`card ${c.pan}${c.code ? ` with challenge code ${c.code}` : ''}: ${c.txn}${c.reason ? ` ${c.reason}` : ''}`, async () => {
    const p = await startPayment(t, c.pan, { orderOver: urls });
    assert.equal(p.redirect_url, `${t.url}/pay/3ds/${p.txn.id}/`);
    assert.equal(p.card.brand, c.brand);
    const pending = await t.api('GET', `/v1/orders/${p.order.id}/`);
    assert.equal(pending.body.status, 'processing');
    assert.equal(pending.body.transactions[0].status, 'pending');

    const browser = await followBrowser(p.redirect_url, { code: c.code });
    assert.equal(Boolean(browser.challenge), Boolean(c.code), 'a challenge page exactly for the challenge cards');
    const order = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body;
    const txn = order.transactions[0];
    assert.equal(order.status, c.order);
    assert.equal(txn.status, c.txn);
    assert.equal(txn.reason, c.reason);
    assert.equal(txn.payment_method_brand, c.brand);
    assert.equal(txn.payment_method_details.liability_shift, c.liability);
    assert.equal(txn.payment_method_details.vault_token, p.vault_token);
    assert.equal(txn.payment_method_details.truncated_pan, p.card.truncated_pan);
    assert.equal(txn.payment_method_details.cardholder_name, 'Ada Lovelace');
    assert.match(txn.payment_method_details.card_expiry, /^12\d{4}$/);
    assert.equal(txn.outcomes.three_d_secure.eci, c.eci);
    assert.equal(txn.outcomes.processing.status, c.txn);
    assert.ok(txn.outcomes.processing.response_code, 'a response code');
    assert.ok(txn.outcomes.processing.response_code_description, 'a response code description');
    if (c.txn === 'accepted') assert.equal(txn.outcomes.processing.response_code, '00');
    const failed = c.order === 'error';
    assert.equal(browser.location, withIds(failed ? FAILURE : RETURN, order));
    if (c.order === 'completed') assert.ok(order.completed, 'completed timestamp set');
    assert.ok(
      txn.events
        .map((e: Json) => e.event)
        .join(',')
        .startsWith('new,pending,'),
      'events new, pending, ...',
    );

    // every call to the acquirer is an attempt of its own: the 3-D Secure lookup, the challenge's
    // answer (challenge cards), the authorization; each settled, none in flight
    const attempts = await t.db.query<{ kind: string; status: string; request: Json }>(
      'SELECT kind, status, request FROM acquirer_attempts WHERE transaction_id = $1',
      [p.txn.id],
    );
    const calls = attempts.map((a) => `${a.kind}${a.kind === 'three_ds' && a.request?.step === 'challenge' ? ' (challenge)' : ''}`).sort();
    assert.deepEqual(calls, c.code ? ['authorization', 'three_ds', 'three_ds (challenge)'] : ['authorization', 'three_ds']);
    const inFlight = attempts.filter((a) => ['processing', 'unknown'].includes(a.status)).map((a) => a.kind);
    assert.deepEqual(inFlight, c.txn === 'processing' ? ['authorization'] : [], JSON.stringify(attempts));

    // Visiting the page again does not authorize twice: it sends the customer to the same place.
    const again = await fetch(p.redirect_url, { redirect: 'manual' });
    assert.equal(again.status, 302);
    assert.equal(again.headers.get('location'), browser.location);
    const after = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body.transactions[0];
    assert.equal(after.events.length, txn.events.length);
  });
}

test('lost answer: processing, then reversed by the recovery job and declined processing_error', async () => {
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000000000001026', { orderOver: urls, key: shop.api_key });
  await followBrowser(p.redirect_url);
  const processing = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(processing.status, 'processing');
  assert.equal(processing.transactions[0].status, 'processing');
  const [auth] = await t.db.query<{ status: string; error: string }>(
    "SELECT status, error FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'authorization'",
    [p.txn.id],
  );
  assert.equal(auth.status, 'unknown');
  assert.match(auth.error, /did not answer/);
  const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT1M' }, { key: shop.api_key });
  assert.equal(ran.status, 200, ran.text);
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(order.status, 'error');
  assert.equal(order.transactions[0].status, 'declined');
  assert.equal(order.transactions[0].reason, 'processing_error');
  const attempts = await t.db.query<{ kind: string; status: string }>(
    'SELECT kind, status FROM acquirer_attempts WHERE transaction_id = $1 ORDER BY created, kind',
    [p.txn.id],
  );
  // the 3-D Secure lookup that started the payment is an attempt of its own, answered
  assert.deepEqual(attempts.map((a) => `${a.kind}:${a.status}`).sort(), [
    'authorization:reversed',
    'reversal:succeeded',
    'three_ds:succeeded',
  ]);
  const outbox = await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [p.order.id]);
  assert.deepEqual(
    outbox.map((r) => r.status),
    ['processing', 'error'],
  );
});

test('a capture and a refund that answer processing: processing orders, settled by the recovery job, with their webhooks', async () => {
  // the recovery job asks a processing answer again after LATE_DECLINE_MS (10 minutes here)
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000000000001034', { orderOver: urls, txnOver: { capture_mode: 'manual' }, key: shop.api_key });
  await followBrowser(p.redirect_url);
  const txnPath = `/v1/orders/${p.order.id}/transactions/${p.txn.id}`;
  const capture = await t.api('POST', `${txnPath}/captures/`, undefined, { key: shop.api_key });
  assert.equal(capture.status, 201, capture.text);
  assert.equal(capture.body.status, 'processing');
  assert.equal(capture.body.transactions[0].status, 'processing');
  const held = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(held.transactions[0].status, 'accepted', 'not captured until the acquirer says so');
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' }, { key: shop.api_key });
  const captured = (await t.api('GET', `/v1/orders/${capture.body.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(captured.status, 'completed');
  assert.equal(
    (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body.transactions[0].status,
    'completed',
  );
  const refund = await t.api('POST', `/v1/orders/${p.order.id}/refunds/`, { amount: 100 }, { key: shop.api_key });
  assert.equal(refund.status, 201, refund.text);
  assert.equal(refund.body.status, 'processing');
  // what is reserved by the refund in flight cannot be refunded again
  const more = await t.api('POST', `/v1/orders/${p.order.id}/refunds/`, { amount: p.order.amount }, { key: shop.api_key });
  assert.equal(more.status, 422, more.text);
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' }, { key: shop.api_key });
  const refunded = (await t.api('GET', `/v1/orders/${refund.body.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(refunded.status, 'completed');
  for (const id of [capture.body.id, refund.body.id]) {
    const outbox = await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [id]);
    assert.deepEqual(
      outbox.map((r) => r.status),
      ['processing', 'completed'],
    );
  }
  const [{ n }] = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM acquirer_attempts WHERE transaction_id = $1 AND status IN ('processing', 'unknown')",
    [p.txn.id],
  );
  assert.equal(n, 0, 'nothing left in flight');
});

test('late decline: processing, then declined by the late_decline job when the clock passes', async () => {
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000000000000341', { orderOver: urls, key: shop.api_key });
  const browser = await followBrowser(p.redirect_url);
  const processing = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(browser.location, withIds(RETURN, processing), 'a processing payment returns to return_url');
  assert.equal(processing.status, 'processing');
  assert.equal(processing.transactions[0].outcomes.processing.response_code, '09');
  const none = await t.api('POST', '/v1/test/clock/run-due-jobs/', {}, { key: shop.api_key });
  assert.equal(none.body.jobs_run, 0);
  const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' }, { key: shop.api_key });
  assert.equal(ran.status, 200, ran.text);
  assert.ok(ran.body.jobs_run >= 1);
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  const txn = order.transactions[0];
  assert.equal(order.status, 'error');
  assert.equal(txn.status, 'declined');
  assert.equal(txn.reason, 'declined');
  assert.equal(txn.outcomes.processing.status, 'declined');
  assert.equal(txn.outcomes.processing.response_code, '05');
  assert.deepEqual(
    txn.events.map((e: Json) => e.event),
    ['new', 'pending', 'processing', 'declined'],
  );
  const outbox = await t.db.query<{ status: string }>('SELECT status FROM outbox WHERE order_id = $1 ORDER BY id', [p.order.id]);
  assert.deepEqual(
    outbox.map((r) => r.status),
    ['processing', 'error'],
    'the decline is reported (outbox -> webhook)',
  );
});

test('an expiry date in the past declines with expired_card', async () => {
  const p = await startPayment(t, '4111111111111111', { expiry: '012020', orderOver: urls });
  await followBrowser(p.redirect_url);
  const txn = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body.transactions[0];
  assert.equal(txn.status, 'declined');
  assert.equal(txn.reason, 'expired_card');
  assert.equal(txn.outcomes.processing.response_code, '54');
});

test('any other Luhn-valid card of a known brand approves frictionless', async () => {
  const p = await startPayment(t, '6011111111111117', { orderOver: urls });
  assert.equal(p.card.brand, 'discover');
  const b = await followBrowser(p.redirect_url);
  assert.equal(b.challenge, undefined);
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body;
  assert.equal(order.status, 'completed');
});

test('without return_url the customer lands on the result page; without failure_url on return_url', async () => {
  const a = await startPayment(t, '4111111111111111', { orderOver: { return_url: undefined } });
  assert.equal((await followBrowser(a.redirect_url)).location, `${t.url}/pay/${a.order.id}/result/`);
  const b = await startPayment(t, '4000000000000002', { orderOver: { return_url: 'https://shop.example/r?a=1&b=x%20y#top' } });
  const order = (await t.api('GET', `/v1/orders/${b.order.id}/`)).body;
  const loc = (await followBrowser(b.redirect_url)).location;
  assert.equal(
    loc,
    `https://shop.example/r?a=1&b=x%20y&order_id=${order.id}&project_id=${order.project_id}#top`,
    "the URL's own query and fragment are kept",
  );
});

test('the challenge page: labelled form, strict headers, CSRF token; cancel goes to failure_url', async () => {
  const p = await startPayment(t, '4000002760003184', { orderOver: { ...urls, customer: { ...validOrder().customer, locale: 'en-GB' } } });
  const page = await fetch(p.redirect_url);
  assert.equal(page.status, 200);
  const csp = page.headers.get('content-security-policy')!;
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/=]+'/, 'the page style by its hash');
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /form-action 'self'/);
  assert.match(csp, /https:\/\/shop\.example/, 'form-action allows the redirect after the POST');
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  const html = await page.text();
  assert.doesNotMatch(html, /<script/i);
  const form = parseForm(html, p.redirect_url);
  assert.equal(form.method, 'post');
  assert.deepEqual(form.labels, ['Verification code']);
  assert.ok('code' in form.fields && form.fields.csrf, 'code input and csrf field');
  assert.deepEqual(
    form.buttons.map((b) => b.text),
    ['Verify', 'Cancel'],
  );

  // Without or with a forged token: refused, nothing changes.
  for (const csrf of ['', 'x', `${Math.floor(Date.now() / 1000)}.${'A'.repeat(43)}`]) {
    const res = await submitForm({ ...form, fields: { ...form.fields, csrf } }, { code: '1234' }, form.buttons[0]);
    assert.equal(res.status, 403);
  }
  // A token of another transaction does not fit this one.
  const other = await startPayment(t, '4000002760003184', { orderOver: urls });
  const otherForm = parseForm(await (await fetch(other.redirect_url)).text(), other.redirect_url);
  assert.equal(
    (await submitForm({ ...form, fields: { ...form.fields, csrf: otherForm.fields.csrf } }, { code: '1234' }, form.buttons[0])).status,
    403,
  );
  // Another site's origin is refused even with the token.
  const cross = await fetch(form.action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    body: new URLSearchParams({ ...form.fields, code: '1234', action: 'verify' }).toString(),
  });
  assert.equal(cross.status, 403);
  assert.equal((await t.api('GET', `/v1/orders/${p.order.id}/`)).body.transactions[0].status, 'pending');

  const cancelled = await followBrowser(p.redirect_url, { cancel: true });
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body;
  assert.equal(order.status, 'cancelled');
  assert.equal(order.transactions[0].status, 'cancelled');
  assert.equal(cancelled.location, withIds(FAILURE, order));
});

test('authenticate: second start, foreign vault_token, bad cvc, unknown transaction, other project', async () => {
  const p = await startPayment(t, '4111111111111111', { orderOver: urls });
  const path = `/v1/orders/${p.order.id}/transactions/${p.txn.id}/authenticate/`;
  const again = await t.api('POST', path, { vault_token: p.vault_token, cvc: '123' });
  assert.equal(again.status, 409);
  assert.equal(again.body.error.type, 'TransactionAlreadyStarted');

  const fresh = await createCardOrder(t, urls);
  const freshPath = `/v1/orders/${fresh.order.id}/transactions/${fresh.txn.id}/authenticate/`;
  const foreign = await t.api('POST', freshPath, { vault_token: p.vault_token, cvc: '123' });
  assert.equal(foreign.status, 400);
  assert.equal(foreign.body.error.field, 'vault_token');
  const stored = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token: fresh.setup_token });
  for (const [cvc, field] of [
    ['12', 'cvc'],
    ['1234', 'cvc'],
    ['12a', 'cvc'],
  ] as const) {
    const res = await t.api('POST', freshPath, { vault_token: stored.body.vault_token, cvc });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.field, field);
  }
  const missing = await t.api('POST', freshPath, { vault_token: stored.body.vault_token });
  assert.equal(missing.body.error.field, 'cvc');
  const other = await t.newProject('test');
  const wrongProject = await t.api('POST', freshPath, { vault_token: stored.body.vault_token, cvc: '123' }, { key: other.api_key });
  assert.equal(wrongProject.status, 404);
  const unknown = await t.api('POST', `/v1/orders/${fresh.order.id}/transactions/${p.order.id}/authenticate/`, {
    vault_token: stored.body.vault_token,
    cvc: '123',
  });
  assert.equal(unknown.status, 404);
  const noKey = await t.api('POST', freshPath, { vault_token: stored.body.vault_token, cvc: '123' }, { key: null });
  assert.equal(noKey.status, 401);
  // Nothing above started it, and no refused start left an attempt (the lookup is recorded with
  // the read, before the checks, and dropped when they refuse)
  assert.equal((await t.api('GET', `/v1/orders/${fresh.order.id}/`)).body.transactions[0].status, 'new');
  const lookups = (txnId: string) =>
    t.db.query<{ status: string }>("SELECT status FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'three_ds'", [txnId]);
  assert.deepEqual(await lookups(fresh.txn.id), []);
  assert.deepEqual(
    (await lookups(p.txn.id)).map((a) => a.status),
    ['succeeded'],
  );
  const ok = await t.api('POST', freshPath, { vault_token: stored.body.vault_token, cvc: '123' });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(
    (await lookups(fresh.txn.id)).map((a) => a.status),
    ['succeeded'],
  );
});

test('a pre-authorization (capture_mode manual) is accepted and capturable', async () => {
  const p = await startPayment(t, '5555555555554444', { orderOver: urls, txnOver: { capture_mode: 'manual' } });
  await followBrowser(p.redirect_url);
  const txn = (await t.api('GET', `/v1/orders/${p.order.id}/`)).body.transactions[0];
  assert.equal(txn.status, 'accepted');
  assert.equal(txn.is_capturable, true);
});

test('an abandoned challenge expires with its transaction; the sealed CVC goes with it', async () => {
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000002760003184', { orderOver: urls, key: shop.api_key });
  const [before] = await t.db.query('SELECT cvc_ct FROM vault_cards WHERE id = $1', [p.vault_token]);
  assert.ok(before.cvc_ct, 'CVC sealed while the challenge is open');
  await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT31M' }, { key: shop.api_key });
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(order.status, 'expired');
  const [after] = await t.db.query('SELECT cvc_ct FROM vault_cards WHERE id = $1', [p.vault_token]);
  assert.equal(after.cvc_ct, null);
  const late = await followBrowser(p.redirect_url);
  assert.equal(late.location, withIds(FAILURE, order), 'the page sends the customer to failure_url');
});

test('the 3-D Secure page of an unknown transaction is a 404 page', async () => {
  const res = await fetch(`${t.url}/pay/3ds/3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11/`);
  assert.equal(res.status, 404);
  assert.match(res.headers.get('content-type')!, /text\/html/);
});

test('the challenge page speaks the customer locale (nl), then Accept-Language', async () => {
  const nl = await startPayment(t, '4000002760003184', { orderOver: { customer: { ...validOrder().customer, locale: 'nl-NL' } } });
  const page = await request(nl.redirect_url, 'GET');
  assert.equal(page.status, 200);
  assert.match(page.text, /<html lang="nl">/);
  assert.match(page.text, /Verificatiecode/);
  assert.match(page.text, /Bevestigen/);
  const en = await startPayment(t, '4000002760003184', { orderOver: { customer: { ...validOrder().customer, locale: undefined } } });
  const asked = await request(en.redirect_url, 'GET', undefined, { 'accept-language': 'nl-BE,nl;q=0.9' });
  assert.match(asked.text, /Verificatiecode/);
  const plain = await request(en.redirect_url, 'GET');
  assert.match(plain.text, /Verification code/);
});

test('the test clock run with an Idempotency-Key runs due jobs that call the acquirer, and replays its answer', async () => {
  // a capture answered "processing": the recovery job asks again once LATE_DECLINE_MS passed
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000000000001034', { orderOver: urls, txnOver: { capture_mode: 'manual' }, key: shop.api_key });
  await followBrowser(p.redirect_url);
  const capture = await t.api('POST', `/v1/orders/${p.order.id}/transactions/${p.txn.id}/captures/`, undefined, { key: shop.api_key });
  assert.equal(capture.body.status, 'processing', capture.text);
  const headers = { 'idempotency-key': 'clock-run-1' };
  const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' }, { key: shop.api_key, headers });
  // (on PostgreSQL the service's own worker may take the due job first: this run then waits for it)
  assert.equal(ran.status, 200, ran.text);
  const captured = await t.api('GET', `/v1/orders/${capture.body.id}/`, undefined, { key: shop.api_key });
  assert.equal(captured.body.status, 'completed', 'the job asked the acquirer again and applied its answer: ' + captured.text);
  const again = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT11M' }, { key: shop.api_key, headers });
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(again.text, ran.text, 'the clock is not advanced twice');
});
