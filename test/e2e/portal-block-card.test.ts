// "Block this card" on the portal's order page (docs/risk.md "Lists"): an owner confirms it like
// the other order actions, the card of the transaction goes on the project's blocklist by its
// fingerprint (opened from the vault, stored nowhere as a number), audited; the same card's next
// payment is refused before the acquirer; roles that do not change the lists see no button and
// are refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { createCardOrder, followBrowser, randomPan, startPayment } from '../helpers/cards.ts';
import { countingSimulator } from '../helpers/counting-simulator.ts';
import type { Json } from '../helpers/json.ts';

const { connector: counting, reached } = countingSimulator();
let t: TestService;
let owner: PortalClient;
let orders: string;
before(async () => {
  t = await startTestService({ env: { RISK_LIMITS: 'on', RISK_REFUSAL_FLOOR_MS: '0' }, testConnector: counting });
  const u = await portalUser(t);
  owner = new PortalClient(t);
  assert.equal((await owner.signIn(u.email, u.password)).status, 303);
  orders = `/projects/${t.project.project_id}/orders/`;
});
after(() => t?.close());

let n = 0;
const tok = () => `block-card-${String(++n).padStart(12, '0')}`;

async function pay(pan: string) {
  const started = await startPayment(t, pan);
  await followBrowser(started.redirect_url);
  const order = (await t.api('GET', `/v1/orders/${started.order.id}/`)).body as Json;
  return { order, txn: order.transactions[0] as Json };
}

async function as(role: string) {
  const u = await portalUser(t);
  await t.db.query('UPDATE portal_users SET role = $1 WHERE email = $2', [role, u.email]);
  const c = new PortalClient(t);
  assert.equal((await c.signIn(u.email, u.password)).status, 303);
  return c;
}

test("an owner blocks a paid order's card: confirmed, on the blocklist by fingerprint, audited; its next payment is refused unsent", async () => {
  const pan = randomPan('4');
  const { order, txn } = await pay(pan);
  assert.equal(txn.status, 'accepted');
  const page = await owner.get(`${orders}${order.id}/`);
  assert.match(page.text, /<input type="hidden" name="action" value="block_card">/);
  assert.match(page.text, new RegExp(`name="transaction_id" value="${txn.id}">[\\s\\S]*?Block this card</button>`));

  const confirm = await owner.get(`${orders}${order.id}/confirm?action=block_card&transaction_id=${txn.id}&token=${tok()}`);
  assert.equal(confirm.status, 200);
  assert.match(confirm.text, new RegExp(`Block this card on order ${order.merchant_order_id}\\?`));
  const nl = await owner.get(`${orders}${order.id}/confirm?action=block_card&transaction_id=${txn.id}&token=${tok()}&lang=nl`);
  assert.match(nl.text, /Deze kaart blokkeren bij bestelling/);
  await owner.get(`${orders}${order.id}/?lang=en`);

  const done = await owner.post(`${orders}${order.id}/actions`, { action: 'block_card', transaction_id: txn.id, token: tok() });
  assert.equal(done.status, 303, done.text);
  assert.match((await owner.get(done.location!.replace(/^\/portal/, ''))).text, /The card is on this project’s blocklist/);
  const rows = await t.db.query<{ kind: string; list: string; value: string; lo: string; note: string; created_by: string }>(
    'SELECT kind, list, value, lo, note, created_by FROM risk_lists WHERE project_id = $1',
    [t.project.project_id],
  );
  assert.deepEqual(
    rows.map((r) => [r.list, r.kind, r.value, r.note]),
    [['block', 'card', `•••• ${pan.slice(-4)}`, `order ${order.merchant_order_id}`]],
  );
  assert.ok(!JSON.stringify(rows).includes(pan) && !JSON.stringify(rows).includes(pan.slice(0, 8)), 'no number is stored');
  const audit = await t.db.query<{ action: string; detail: Json }>(
    'SELECT action, detail FROM portal_audit WHERE project_id = $1 AND action IN ($2, $3) ORDER BY action',
    [t.project.project_id, 'block_card', 'risk_list_added'],
  );
  assert.deepEqual(
    audit.map((r) => [r.action, r.detail.transaction_id ?? r.detail.value]),
    [
      ['block_card', txn.id],
      ['risk_list_added', `•••• ${pan.slice(-4)}`],
    ],
  );
  assert.ok(!JSON.stringify(audit).includes(pan));
  assert.match(
    (await owner.get(`/projects/${t.project.project_id}/audit/`)).text,
    new RegExp(`Added card •••• ${pan.slice(-4)} to the blocklist: order`),
  );

  const before = reached.authorize.get(t.project.project_id) ?? 0;
  const again = await pay(pan);
  assert.equal(again.txn.status, 'declined');
  assert.equal(again.txn.risk.rules[0].rule, 'blocklist_card');
  assert.equal(reached.authorize.get(t.project.project_id) ?? 0, before, 'not sent to the acquirer');
  assert.equal((await pay(randomPan('4'))).txn.status, 'accepted', 'another card pays');

  // blocking it again changes nothing on the list
  const twice = await owner.post(`${orders}${order.id}/actions`, { action: 'block_card', transaction_id: txn.id, token: tok() });
  assert.equal(twice.status, 303);
  assert.equal((await t.db.query('SELECT 1 FROM risk_lists WHERE project_id = $1', [t.project.project_id])).length, 1);
});

test('roles that do not change the lists see no button and are refused; a transaction without a card, or of another order, is not found', async () => {
  const { order, txn } = await pay(randomPan('4'));
  for (const role of ['viewer', 'developer', 'support']) {
    const c = await as(role);
    const page = await c.get(`${orders}${order.id}/`);
    assert.equal(page.status, 200);
    assert.ok(!page.text.includes('value="block_card"'), role);
    assert.equal((await c.get(`${orders}${order.id}/confirm?action=block_card&transaction_id=${txn.id}&token=${tok()}`)).status, 403, role);
    assert.equal(
      (await c.post(`${orders}${order.id}/actions`, { action: 'block_card', transaction_id: txn.id, token: tok() })).status,
      403,
      role,
    );
  }
  const count = async () => (await t.db.query('SELECT 1 FROM risk_lists WHERE project_id = $1', [t.project.project_id])).length;
  const listed = await count();

  // an order whose card was never entered: no button, and the action finds no card
  const unpaid = await createCardOrder(t);
  assert.ok(!(await owner.get(`${orders}${unpaid.order.id}/`)).text.includes('value="block_card"'));
  const none = await owner.post(`${orders}${unpaid.order.id}/actions`, {
    action: 'block_card',
    transaction_id: unpaid.txn.id,
    token: tok(),
  });
  assert.equal(none.status, 404);
  // another order's transaction
  const other = await owner.post(`${orders}${unpaid.order.id}/actions`, { action: 'block_card', transaction_id: txn.id, token: tok() });
  assert.equal(other.status, 404);
  assert.equal(await count(), listed, 'nothing was added');
});
