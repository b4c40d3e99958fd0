import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';

/**
 * The portal's money view: each payment's state and net, its captures, voids and refunds
 * beneath it, only the actions it allows, and totals (home, list, CSV) that count money once
 * and equal the ledger's for the same period. One service of its own: its orders are all there is.
 */

let t: TestService;
let c: PortalClient;
let orders: string;
const ids: Record<string, { id: string; txn: string }> = {};
let token = 0;
const tok = () => `money-${String(++token).padStart(12, '0')}`;

async function act(name: string, action: string, extra: Record<string, string> = {}) {
  const { id, txn } = ids[name];
  await c.get(`${orders}${id}/`);
  const res = await c.post(`${orders}${id}/actions`, { action, transaction_id: txn, token: tok(), ...extra });
  assert.equal(res.status, 303, `${name} ${action}: ${res.text}`);
}

before(async () => {
  t = await startTestService();
  const user = await portalUser(t);
  c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
  orders = `/projects/${t.project.project_id}/orders/`;
  const pay = async (name: string, amount: number, opts: Parameters<typeof payOrder>[2] = {}) => {
    const o = await payOrder(t, { merchant_order_id: name, amount, customer: { email_address: `${name}@shop.example` } }, opts);
    ids[name] = { id: o.id, txn: o.transactions[0].id };
  };
  await pay('sale-refunded', 1000);
  await pay('sale', 2500);
  await pay('preauth-part', 4000, { capture_mode: 'manual' });
  await pay('preauth-voided', 2000, { capture_mode: 'manual' });
  await pay('preauth-open', 1500, { capture_mode: 'manual' });
  await pay('declined', 700, { pan: '4000000000000002' }).catch(() => undefined);
  await act('sale-refunded', 'refund', { amount: '300' });
  await act('preauth-part', 'void', { amount: '1000' });
  await act('preauth-part', 'capture');
  await act('preauth-part', 'refund', { amount: '500' });
  await act('preauth-voided', 'void');
});
after(async () => t?.close());

/** The ledger's money for the merchant in [from, to): captured (sales and captures) and paid back. */
async function ledger(from: Date, to: Date) {
  const rows = await t.db.query<{ kind: string; amount: number }>(
    `SELECT kind, -sum(amount)::bigint AS amount FROM ledger_entries
     WHERE project_id = $1 AND account = 'merchant_payable' AND kind IN ('sale', 'capture', 'refund', 'chargeback', 'reversal')
       AND created >= $2 AND created < $3 GROUP BY kind`,
    [t.project.project_id, from, to],
  );
  const of = (k: string) => Number(rows.find((r) => r.kind === k)?.amount ?? 0);
  return {
    captured: of('sale') + of('capture'),
    refunded: -of('refund'),
    net: of('sale') + of('capture') + of('refund') + of('chargeback'),
  };
}

const euros = (minor: number) => `€${(minor / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;

test('each payment is one line with its money state and net; captures, voids and refunds are not lines of their own', async () => {
  const list = await c.get(orders);
  assert.equal(list.status, 200);
  const rows = [...list.text.matchAll(/\/orders\/[0-9a-f-]{36}\/">([^<]+)<\/a>.*?data-money-state="([a-z_]+)">([^<]+)</g)].map((m) => [
    m[1],
    m[2],
    m[3],
  ]);
  assert.deepEqual(
    new Map(rows.map(([ref, state]) => [ref, state])),
    new Map([
      ['declined', 'declined'],
      ['preauth-open', 'authorized'],
      ['preauth-voided', 'voided'],
      ['preauth-part', 'partially_refunded'],
      ['sale', 'captured'],
      ['sale-refunded', 'partially_refunded'],
    ]),
  );
  assert.equal(rows.length, 6, 'six payments, no capture, void or refund orders');
  assert.match(rows.find((r) => r[0] === 'declined')![2], /^Declined: /, 'the reason in words');
  assert.doesNotMatch(list.text, /see-transactions/, 'the status filter offers what a merchant filters by');
});

test('a pre-authorization reads authorized and offers Capture and Void only; the capture confirmation says the amount', async () => {
  const page = await c.get(`${orders}${ids['preauth-open'].id}/`);
  assert.match(page.text, /data-money-state="authorized">Authorized</);
  const buttons = [...page.text.matchAll(/<button type="submit"[^>]*>([^<]+)<\/button>/g)].map((m) => m[1]);
  assert.ok(buttons.includes('Capture') && buttons.includes('Void'), buttons.join());
  assert.ok(!buttons.includes('Refund'), 'nothing captured, nothing to refund');
  const confirm = await c.get(
    `${orders}${ids['preauth-open'].id}/confirm?action=capture&transaction_id=${ids['preauth-open'].txn}&token=${tok()}`,
  );
  assert.match(confirm.text, /Capture €15\.00 on order preauth-open\?/);
});

test('a partial capture and a partial refund show beneath their payment with the net', async () => {
  const page = await c.get(`${orders}${ids['preauth-part'].id}/`);
  assert.match(page.text, /data-money-state="partially_refunded"/);
  assert.match(page.text, /data-net="2500">€25\.00</, 'captured 30.00 of 40.00, refunded 5.00');
  const beneath = /<h2 id="related-h">Captures, voids, refunds and chargebacks<\/h2>(.*?)<\/section>/s.exec(page.text)![1];
  const kinds = [...beneath.matchAll(/<td data-label="Kind">([a-z]+)<\/td>/g)].map((m) => m[1]).sort();
  assert.deepEqual(kinds, ['capture', 'refund', 'void']);
  const buttons = [...page.text.matchAll(/<button type="submit"[^>]*>([^<]+)<\/button>/g)].map((m) => m[1]);
  assert.ok(!buttons.includes('Capture') && !buttons.includes('Void'));
  assert.match(page.text, /id="refund-order-amount" name="amount" size="10" value="25\.00"/, 'a refund of what is left');
});

test("home, list and CSV count money once, and the period's totals equal the ledger's", async () => {
  const now = new Date();
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const books = await ledger(today, new Date(today.getTime() + 86_400_000));
  assert.deepEqual(books, { captured: 6500, refunded: 800, net: 5700 }, '10 + 25 + 30 captured, 3 + 5 refunded');
  const home = await c.get(`/projects/${t.project.project_id}/?days=7`);
  assert.match(home.text, /data-today-count>3</, 'three payments moved money today');
  assert.match(home.text, new RegExp(`<p class="stat">${euros(books.net).replace('.', '\\.')}</p>`));
  const eur = /<td data-label="Currency">EUR<\/td>(.*?)<\/tr>/.exec(home.text)![1];
  const cells = [...eur.matchAll(/<td[^>]*>([^<]+)<\/td>/g)].map((m) => m[1]);
  assert.deepEqual(cells, ['3', euros(books.captured), euros(books.refunded), euros(0), euros(books.net)]);
  assert.match(home.text, /data-period-success-rate>83\.3 %</, 'five of six payments ended with money authorized');
  assert.match(home.text, /<svg viewBox="0 0 400 220" role="img" aria-labelledby="chart-0-title chart-0-desc"/);
  assert.equal((home.text.match(/<rect /g) ?? []).length, 7, 'one bar per day');

  const csv = await c.get(`/projects/${t.project.project_id}/orders.csv`);
  assert.equal(csv.status, 200);
  const [head, ...lines] = csv.text.trim().split('\r\n');
  const cols = head.split(',');
  assert.equal(lines.length, 6, 'one line per payment');
  const sum = (col: string) => lines.reduce((n, l) => n + Math.round(Number(l.split(',')[cols.indexOf(col)]) * 100), 0);
  assert.equal(sum('captured'), books.captured);
  assert.equal(sum('refunded'), books.refunded);
  assert.equal(sum('net'), books.net);
});

test('search by last four digits, brand, customer email and amount range, in the portal and the API', async () => {
  const refs = async (q: string) => {
    const res = await c.get(`${orders}?${new URLSearchParams({ q })}`);
    assert.equal(res.status, 200, res.text);
    return [...res.text.matchAll(/\/orders\/[0-9a-f-]{36}\/">([^<]+)<\/a>/g)].map((m) => m[1]).sort();
  };
  assert.equal((await refs('transactions.payment_method_details.last4:1111')).length, 5);
  assert.deepEqual(await refs('transactions.payment_method_details.last4:0002'), ['declined']);
  assert.deepEqual(await refs('customer.email_address:sale@shop.example'), ['sale']);
  assert.deepEqual(await refs('amount:[1500 TO 2500]'), ['preauth-open', 'preauth-voided', 'sale']);
  assert.equal((await refs('transactions.payment_method_brand:visa')).length, 6);
  // the same through the quick filters: last four, brand, email, an amount range in major units
  const quick = async (q: Record<string, string>) => {
    const res = await c.get(`${orders}?${new URLSearchParams(q)}`);
    assert.equal(res.status, 200, res.text);
    return [...res.text.matchAll(/\/orders\/[0-9a-f-]{36}\/">([^<]+)<\/a>/g)].map((m) => m[1]).sort();
  };
  assert.deepEqual(await quick({ last4: '0002' }), ['declined']);
  assert.deepEqual(await quick({ email: 'SALE@shop.example' }), ['sale']);
  assert.deepEqual(await quick({ min: '15', max: '25.00' }), ['preauth-open', 'preauth-voided', 'sale']);
  assert.deepEqual(await quick({ brand: 'visa', min: '40' }), ['preauth-part']);
  assert.equal((await quick({ last4: '12', brand: 'vi sa', min: 'x' })).length, 6, 'values that are not valid are left out');
  const api = await t.api('POST', '/v1/search/orders/', { query: 'transactions.payment_method_details.last4:0002 AND kind:payment' });
  assert.equal(api.status, 200, api.text);
  assert.deepEqual(
    api.body.orders.map((o: { merchant_order_id: string }) => o.merchant_order_id),
    ['declined'],
  );
  const bad = await t.api('POST', '/v1/search/orders/', { query: 'transactions.payment_method_details.last4:12' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /last four digits/);
});
