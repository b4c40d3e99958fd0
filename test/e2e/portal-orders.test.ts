import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';

/**
 * The portal's orders list (quick filters, paging) and the actions and audit entries the other
 * portal tests leave out (void in part and in full, capture, settings), plus the per-address
 * sign-in throttle. Each test runs on a service of its own, so lists hold only its orders.
 */

let t: TestService;
let c: PortalClient;
let orders: string;
before(async () => {
  t = await startTestService();
  const user = await portalUser(t);
  c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
  orders = `/projects/${t.project.project_id}/orders/`;
});
after(async () => t?.close());

/** The references (merchant_order_id) the list shows, in order. */
const references = (html: string) => [...html.matchAll(/<a href="[^"]+\/orders\/[0-9a-f-]{36}\/">([^<]+)<\/a>/g)].map((m) => m[1]);
const list = async (query: Record<string, string>) => {
  const res = await c.get(`${orders}?${new URLSearchParams(query)}`);
  assert.equal(res.status, 200, res.text);
  return res;
};

test('quick filters: status, method and date range narrow the list, joined to the typed query', async () => {
  await payOrder(t, { merchant_order_id: 'qf-paid' });
  assert.equal((await t.api('POST', '/v1/orders/', validOrder({ merchant_order_id: 'qf-open' }))).status, 201);
  const wallet = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({ merchant_order_id: 'qf-wallet', transactions: [{ payment_method: 'wallet-b-pay' }] }),
  );
  assert.equal(wallet.status, 201, wallet.text);
  const all = (await list({ q: 'merchant_order_id:qf*' })).text;
  assert.deepEqual(references(all).sort(), ['qf-open', 'qf-paid', 'qf-wallet']);
  assert.deepEqual(references((await list({ q: 'merchant_order_id:qf*', status: 'completed' })).text), ['qf-paid']);
  assert.deepEqual(references((await list({ q: 'merchant_order_id:qf*', method: 'wallet-b-pay' })).text), ['qf-wallet']);
  assert.deepEqual(references((await list({ q: 'merchant_order_id:qf*', method: 'credit-card', status: 'completed' })).text), ['qf-paid']);
  const today = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  assert.equal(references((await list({ q: 'merchant_order_id:qf*', from: today, to: tomorrow })).text).length, 3);
  assert.deepEqual(references((await list({ q: 'merchant_order_id:qf*', from: tomorrow })).text), []);
  // the filter keeps its values in the form
  const kept = (await list({ status: 'completed', method: 'credit-card', from: today })).text;
  assert.match(kept, /<option value="completed" selected>/);
  assert.match(kept, /<option value="credit-card" selected>/);
  assert.match(kept, new RegExp(`<input type="date" id="from" name="from" value="${today}">`));
  // a value that is not one of the choices is ignored, not passed to the search language
  assert.equal(references((await list({ q: 'merchant_order_id:qf*', status: 'paid) OR (*' })).text).length, 3);
});

test('paging: 25 a page, a next link by search_after, every order once', async () => {
  for (let i = 0; i < 27; i++)
    assert.equal(
      (await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 + i, merchant_order_id: `pg-${String(i).padStart(2, '0')}` }))
        .status,
      201,
    );
  const first = await list({ q: 'merchant_order_id:pg-*' });
  const one = references(first.text);
  assert.equal(one.length, 25);
  const next = /<a href="([^"]+)" rel="next">/.exec(first.text);
  assert.ok(next, 'a next-page link');
  assert.match(next[1], /after=/);
  assert.match(next[1], /q=merchant_order_id%3Apg-\*/, 'the filter goes along');
  const second = await c.req('GET', new URL(next[1].replace(/&amp;/g, '&'), c.base).toString());
  assert.equal(second.status, 200);
  const two = references(second.text);
  assert.equal(two.length, 2);
  assert.doesNotMatch(second.text, /rel="next"/, 'the last page has no next link');
  assert.deepEqual(
    [...one, ...two].sort(),
    Array.from({ length: 27 }, (_, i) => `pg-${String(i).padStart(2, '0')}`),
  );
});

test('void in part, then the rest, and capture from the portal; each audited with the settings change', async () => {
  const voided = await payOrder(t, { merchant_order_id: 'void-1', amount: 1000 }, { capture_mode: 'manual' });
  const txn = voided.transactions[0].id;
  const o = `${orders}${voided.id}/`;
  const part = await c.post(`${o}actions`, { action: 'void', transaction_id: txn, amount: '300', token: 'v'.repeat(24) });
  assert.equal(part.status, 303, part.text);
  let got = (await t.api('GET', `/v1/orders/${voided.id}/`)).body;
  assert.equal(got.transactions[0].status, 'accepted', 'a partial void leaves the rest authorized');
  const children = await Promise.all((got.related_orders as string[]).map(async (id) => (await t.api('GET', `/v1/orders/${id}/`)).body));
  assert.deepEqual(
    children.map((x) => x.amount),
    [300],
    'one void order of 3.00',
  );
  const rest = await c.post(`${o}actions`, { action: 'void', transaction_id: txn, token: 'w'.repeat(24) });
  assert.equal(rest.status, 303, rest.text);
  got = (await t.api('GET', `/v1/orders/${voided.id}/`)).body;
  assert.equal(got.transactions[0].status, 'cancelled', 'voided in full');
  assert.equal(got.transactions[0].reason, 'voided');
  const again = await c.post(`${o}actions`, { action: 'void', transaction_id: txn, token: 'x'.repeat(24) });
  assert.equal(again.status, 409, 'nothing left to void: the API error');
  assert.match(again.text, /CanNotVoidTransaction/);

  const captured = await payOrder(t, { merchant_order_id: 'cap-1', amount: 500 }, { capture_mode: 'manual' });
  const cap = await c.post(`${orders}${captured.id}/actions`, {
    action: 'capture',
    transaction_id: captured.transactions[0].id,
    token: 'y'.repeat(24),
  });
  assert.equal(cap.status, 303, cap.text);

  const settings = `/projects/${t.project.project_id}/settings/`;
  await c.get(settings);
  const saved = await c.post(`${settings}webhook-url`, { url: 'https://shop.example/hooks' });
  assert.equal(saved.status, 303, saved.text);
  const rows = await t.db.query<{ action: string; project_id: string }>(
    'SELECT action, project_id FROM portal_audit WHERE action IN ($1, $2, $3) ORDER BY created',
    ['void', 'capture', 'webhook_url_changed'],
  );
  assert.deepEqual(
    rows.map((r) => r.action),
    ['void', 'void', 'capture', 'webhook_url_changed'],
    'the refused third void is not audited',
  );
  assert.ok(rows.every((r) => r.project_id === t.project.project_id));
});

test('failed sign-ins from one address lock that address, whichever accounts they try (429 with Retry-After)', async () => {
  const s = await startTestService({ env: { PORTAL_SIGNIN_MAX_FAILURES_PER_ADDRESS: '3', PORTAL_SIGNIN_LOCK_SECONDS: '60' } });
  try {
    const users = await Promise.all([1, 2, 3, 4].map(() => portalUser(s)));
    const client = new PortalClient(s);
    // one wrong password for each of three accounts: no account reaches its own limit (5)
    for (const [i, u] of users.slice(0, 2).entries()) assert.equal((await client.signIn(u.email, `wrong-${i}-password`)).status, 401);
    const third = await client.signIn(users[2].email, 'wrong-2-password');
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get('retry-after')) >= 1);
    const right = await client.signIn(users[3].email, users[3].password);
    assert.equal(right.status, 429, 'the address is locked: a fourth account with its right password too');
    assert.match(right.text, /Too many failed sign-ins/);
  } finally {
    await s.close();
  }
});

test('the search box finds a reference, order id, e-mail, customer name, last four digits and amount as typed', async () => {
  const customer = { ...validOrder().customer, first_name: 'Maria', last_name: 'de Vries', email_address: 'maria@vries.example' };
  const vries = await payOrder(t, { merchant_order_id: 'sb-vries', amount: 4321, customer }, { pan: '5555555555554444' });
  const other = await payOrder(t, { merchant_order_id: 'sb-other', amount: 1234 }, { pan: '4242424242424242' });
  const found = async (q: string) => references((await list({ q })).text).filter((r) => r.startsWith('sb-'));
  for (const q of ['sb-vries', vries.id, 'maria@vries.example', 'Vries', 'vries', 'de Vries', '4444', '43.21', '43,21', 'Vries 4444'])
    assert.deepEqual(await found(q), ['sb-vries'], q);
  assert.deepEqual(await found('4242'), ['sb-other']);
  assert.deepEqual(await found(other.transactions[0].id), ['sb-other'], 'a transaction id');
  assert.deepEqual(await found('Vries 4242'), [], 'each word must match');
  // the search language still works as it is typed
  assert.deepEqual(await found('merchant_order_id:sb-o*'), ['sb-other']);
});
