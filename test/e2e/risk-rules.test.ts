// Rules a merchant writes (issue 44, docs/risk.md): written in the portal (bad ones refused,
// nothing stored), acting on card payments through the API and the hosted page (refuse: nothing
// reaches the acquirer; challenge; flag), replayed by the dry run, and shown on the order page in
// English and Dutch. The acquirer is the simulator, wrapped to count what reaches it per project.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { followBrowser, randomPan, startPayment } from '../helpers/cards.ts';
import { browserFrom, hostedAttempt } from '../helpers/hosted-attack.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { countingSimulator } from '../helpers/counting-simulator.ts';
import { CHALLENGE_CODE } from '../../src/acquirer/simulator/cards.ts';
import type { Json } from '../helpers/json.ts';

/** per project: 3-D Secure lookups and authorizations that reached the acquirer */
const { connector: counting, reached } = countingSimulator();

let t: TestService;
let shop: Awaited<ReturnType<TestService['newProject']>>;
let c: PortalClient;
let p: string;
before(async () => {
  t = await startTestService({ env: { RISK_LIMITS: 'on' }, testConnector: counting });
  shop = await t.newProject('test');
  const user = await portalUser(t, shop.merchant_id);
  c = new PortalClient(t);
  await c.signIn(user.email, user.password);
  p = `/projects/${shop.project_id}`;
});
after(() => t?.close());

const rulesNow = () => t.svc.ctx.db.query<Json>('SELECT * FROM risk_rules WHERE project_id = $1 ORDER BY position', [shop.project_id]);

/** Adds a rule through the portal's form; answers its id. */
async function addRule(form: Record<string, string>): Promise<string> {
  await c.get(`${p}/risk/rules/`);
  const res = await c.post(`${p}/risk/rules`, form);
  assert.equal(res.status, 303, res.text);
  const rows = await rulesNow();
  return rows.at(-1)!.id;
}
const change = async (id: string, what: string) => {
  await c.get(`${p}/risk/rules/`);
  assert.equal((await c.post(`${p}/risk/rules/${id}/change`, { do: what })).status, 303);
};

const order = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`, undefined, { key: shop.api_key })).body;
const reachedNow = () => ({ threeDs: reached.threeDs.get(shop.project_id) ?? 0, authorize: reached.authorize.get(shop.project_id) ?? 0 });

test('a bad rule is refused with a clear error and nothing is stored; a good one is added off, in order', async () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ name: '', action: 'refuse', field_0: 'amount', op_0: 'gt', value_0: '1' }, /name/],
    [{ name: 'x', action: 'allow', field_0: 'amount', op_0: 'gt', value_0: '1' }, /action must be one of refuse, challenge, flag/],
    [{ name: 'x', action: 'refuse' }, /conditions: a rule has 1 to 10 conditions/],
    [
      { name: 'x', action: 'refuse', field_0: 'amount', op_0: 'gt', value_0: 'lots' },
      /conditions\.0\.value: amount compares with a whole number/,
    ],
    [{ name: 'x', action: 'refuse', field_0: 'currency', op_0: 'gt', value_0: 'EUR' }, /conditions\.0\.op: currency is a code/],
    [{ name: 'x', action: 'refuse', field_0: 'pan', op_0: 'eq', value_0: '4111' }, /conditions\.0\.field: field must be one of/],
    [{ name: 'x', action: 'refuse', field_0: 'currency', op_0: 'eq', value_0: '=HYPERLINK()' }, /conditions\.0\.value/],
  ];
  for (const [form, message] of bad) {
    await c.get(`${p}/risk/rules/`);
    const res = await c.post(`${p}/risk/rules`, form);
    assert.equal(res.status, 400, JSON.stringify(form));
    assert.match(res.text, /role="alert"/);
    assert.match(res.text, message, JSON.stringify(form));
  }
  assert.equal((await rulesNow()).length, 0, 'nothing stored');

  const a = await addRule({ name: 'First', action: 'flag', field_0: 'currency', op_0: 'in', value_0: 'USD, GBP' });
  const b = await addRule({ name: 'Second', action: 'flag', field_0: 'amount', op_0: 'eq', value_0: '1' });
  const page = await c.get(`${p}/risk/rules/?added=1`);
  assert.match(page.text, /First[\s\S]*currency in USD, GBP[\s\S]*data-rule-state="off"[\s\S]*Second/);
  await change(b, 'up');
  assert.deepEqual(
    (await rulesNow()).map((r) => r.name),
    ['Second', 'First'],
  );
  for (const id of [a, b]) await change(id, 'delete');
  assert.equal((await rulesNow()).length, 0);
  const audit = await t.svc.ctx.db.query<Json>("SELECT action FROM portal_audit WHERE project_id = $1 AND action LIKE 'risk_rule%'", [
    shop.project_id,
  ]);
  assert.ok(audit.length >= 5, 'every change audited');
});

test('a refusing rule declines through the API and the hosted page, and nothing reaches the acquirer', async () => {
  const id = await addRule({
    name: 'No big euros',
    action: 'refuse',
    field_0: 'amount',
    op_0: 'gte',
    value_0: '7000',
    field_1: 'currency',
    op_1: 'eq',
    value_1: 'EUR',
  });
  // off: it does nothing yet
  const before = await startPayment(t, '4111111111111111', { key: shop.api_key, orderOver: { amount: 7000 } });
  await followBrowser(before.redirect_url);
  assert.equal((await order(before.order.id)).status, 'completed');
  await change(id, 'on');

  const was = reachedNow();
  const started = await startPayment(t, '5555555555554444', { key: shop.api_key, orderOver: { amount: 7500 } });
  await followBrowser(started.redirect_url);
  const refused = await order(started.order.id);
  const txn = refused.transactions[0];
  assert.equal(txn.status, 'declined');
  assert.equal(txn.reason, 'authentication_failed');
  assert.equal(txn.risk.action, 'refuse');
  assert.deepEqual(txn.risk.rules, [
    { rule: 'merchant_rule', rule_id: id, action: 'refuse', reason: 'rule "No big euros": amount ≥ 7000 and currency = EUR' },
  ]);

  // the hosted order page: the same rule, nothing sent either
  const made = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 9000 }, { key: shop.api_key });
  const browser = browserFrom('127.0.0.44');
  try {
    await hostedAttempt(t.url, browser, made.body.order_url, '4111111111111111');
  } finally {
    await browser.close();
  }
  const hosted = await order(made.body.id);
  assert.equal(hosted.transactions.at(-1).risk.rules[0].rule_id, id);
  assert.deepEqual(reachedNow(), was, 'no 3-D Secure lookup and no authorization reached the acquirer');

  // a smaller payment passes
  const small = await startPayment(t, '4111111111111111', { key: shop.api_key, orderOver: { amount: 6999 } });
  await followBrowser(small.redirect_url);
  assert.equal((await order(small.order.id)).status, 'completed');
  await change(id, 'off');
});

test("a rule on the card's issuing country reads the BIN table: a Dutch card refused, a French one passes", async () => {
  const id = await addRule({ name: 'Only French cards', action: 'refuse', field_0: 'card_country', op_0: 'in', value_0: 'NL' });
  await change(id, 'on');
  // 400000528… is a Dutch BIN, 400000250… a French one, in the table the project ships (docs/risk.md)
  const dutch = await startPayment(t, randomPan('400000528'), { key: shop.api_key });
  await followBrowser(dutch.redirect_url);
  const refused = (await order(dutch.order.id)).transactions[0];
  assert.equal(refused.status, 'declined');
  assert.equal(refused.risk.rules[0].rule_id, id);
  assert.match(refused.risk.rules[0].reason, /card_country in NL/);
  assert.equal(refused.risk.card_country, 'NL', 'the risk object keeps the issuing country');
  const french = await startPayment(t, randomPan('400000250'), { key: shop.api_key });
  await followBrowser(french.redirect_url);
  const passed = await order(french.order.id);
  assert.equal(passed.status, 'completed');
  assert.equal(passed.transactions[0].risk.card_country, 'FR');
  // a BIN the table has no line for: no country
  const unknown = await startPayment(t, randomPan('6'), { key: shop.api_key });
  await followBrowser(unknown.redirect_url);
  assert.equal('card_country' in (await order(unknown.order.id)).transactions[0].risk, false);
  await change(id, 'delete');
});

test('a challenge rule mandates the 3-D Secure challenge; a flag rule lets the payment pass, flagged', async () => {
  const ch = await addRule({ name: 'Challenge dollars', action: 'challenge', field_0: 'currency', op_0: 'eq', value_0: 'USD' });
  const fl = await addRule({ name: 'From abroad', action: 'flag', field_0: 'address_country', op_0: 'not_in', value_0: 'NL BE' });
  await change(ch, 'on');
  await change(fl, 'on');

  const dollars = await startPayment(t, '4111111111111111', { key: shop.api_key, orderOver: { currency: 'USD', amount: 2500 } });
  const seen = await followBrowser(dollars.redirect_url, { code: CHALLENGE_CODE });
  assert.ok(seen.challenge, 'the 3-D Secure page asked for the challenge');
  const paid = await order(dollars.order.id);
  assert.equal(paid.status, 'completed');
  assert.equal(paid.transactions[0].risk.action, 'challenge');
  assert.equal(paid.transactions[0].risk.rules[0].rule_id, ch);

  const abroad = await startPayment(t, '4111111111111111', {
    key: shop.api_key,
    orderOver: { amount: 2600, customer: { country: 'DE', email_address: 'eva@example.org' } },
  });
  const quiet = await followBrowser(abroad.redirect_url);
  assert.equal(quiet.challenge, undefined, 'a flag asks for no challenge');
  const flagged = await order(abroad.order.id);
  assert.equal(flagged.status, 'completed');
  assert.equal(flagged.transactions[0].risk.action, 'flag');
  assert.equal(flagged.transactions[0].risk.rules[0].rule_id, fl);

  // the order page shows the decision, in English and in Dutch
  const en = await c.get(`${p}/orders/${abroad.order.id}/?lang=en`);
  assert.match(en.text, /<h2 id="risk-h">Risk decisions<\/h2>/);
  assert.match(en.text, /data-risk-action="flag">Flag for review<\/span>/);
  assert.match(en.text, /data-risk-rule="merchant_rule">Your rule<\/span> \(Flag for review\)/);
  assert.match(en.text, /rule &quot;From abroad&quot;: address_country not in NL, BE/);
  const nl = await c.get(`${p}/orders/${dollars.order.id}/?lang=nl`);
  assert.match(nl.text, /<h2 id="risk-h">Risicobeslissingen<\/h2>/);
  assert.match(nl.text, /data-risk-action="challenge">Challenge vereisen<\/span>/);
  assert.match(nl.text, /<span lang="en">rule &quot;Challenge dollars&quot;: currency = USD<\/span>/);
  await c.get(`${p}/orders/?lang=en`);
  for (const id of [ch, fl]) await change(id, 'delete');
});

test('a rule on three_ds is judged after 3-D Secure, before the authorization: refused there, never sent; a flag added', async () => {
  // challenge is refused for such a rule: 3-D Secure is over when it is judged
  await c.get(`${p}/risk/rules/`);
  const bad = await c.post(`${p}/risk/rules`, { name: 'x', action: 'challenge', field_0: 'three_ds', op_0: 'eq', value_0: 'none' });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /a rule on three_ds is judged after 3-D Secure: it may refuse or flag, not challenge/);
  const badValue = await c.post(`${p}/risk/rules`, { name: 'x', action: 'refuse', field_0: 'three_ds', op_0: 'eq', value_0: 'maybe' });
  assert.equal(badValue.status, 400);
  assert.match(badValue.text, /three_ds is one of passed, attempted, none, failed/);

  const refuse = await addRule({
    name: 'Large without 3-D Secure',
    action: 'refuse',
    field_0: 'three_ds',
    op_0: 'in',
    value_0: 'none failed',
    field_1: 'amount',
    op_1: 'gte',
    value_1: '5000',
  });
  const flag = await addRule({ name: 'Authenticated', action: 'flag', field_0: 'three_ds', op_0: 'eq', value_0: 'passed' });
  await change(refuse, 'on');
  await change(flag, 'on');

  // 4000000000003055 is not enrolled (U: three_ds none): screened, the rule waits for 3-D Secure
  const before = reachedNow();
  const large = await startPayment(t, '4000000000003055', { key: shop.api_key, orderOver: { amount: 6000 } });
  const waiting = (await order(large.order.id)).transactions[0].risk;
  assert.equal(waiting.action, 'pass');
  assert.deepEqual(
    waiting.pending.map((x: Json) => x.rule_id),
    [refuse, flag],
  );
  await followBrowser(large.redirect_url);
  const refused = (await order(large.order.id)).transactions[0];
  assert.equal(refused.status, 'declined', JSON.stringify(refused));
  assert.equal(refused.reason, 'authentication_failed');
  assert.equal(refused.risk.action, 'refuse');
  assert.deepEqual(
    refused.risk.rules.map((h: Json) => [h.rule_id, h.action]),
    [[refuse, 'refuse']],
  );
  assert.match(refused.risk.rules[0].reason, /three_ds in none, failed and amount ≥ 5000/);
  assert.equal('pending' in refused.risk, false, 'judged');
  assert.deepEqual(reachedNow(), { threeDs: before.threeDs + 1, authorize: before.authorize }, '3-D Secure asked, no authorization sent');

  // the same card under the amount: the rule's other condition fails, nothing waits, it pays
  const small = await startPayment(t, '4000000000003055', { key: shop.api_key, orderOver: { amount: 1000 } });
  assert.equal('pending' in (await order(small.order.id)).transactions[0].risk, true, 'only the flag rule waits');
  await followBrowser(small.redirect_url);
  const paid = (await order(small.order.id)).transactions[0];
  assert.equal(paid.status, 'accepted');
  assert.deepEqual(paid.risk.rules, [], 'three_ds none: the flag rule does not hold');

  // an authenticated card (Y: passed): the flag rule acts after 3-D Secure, the payment is sent
  const authenticated = await startPayment(t, randomPan('4'), { key: shop.api_key, orderOver: { amount: 6000 } });
  await followBrowser(authenticated.redirect_url);
  const flagged = (await order(authenticated.order.id)).transactions[0];
  assert.equal(flagged.status, 'accepted');
  assert.equal(flagged.risk.action, 'flag');
  assert.deepEqual(
    flagged.risk.rules.map((h: Json) => [h.rule_id, h.action]),
    [[flag, 'flag']],
  );
  assert.equal(reachedNow().authorize, before.authorize + 2);
  for (const id of [refuse, flag]) await change(id, 'delete');
});

test('the dry run counts what a rule would have done to the last 30 days, with examples, before it is on', async () => {
  const big = await addRule({ name: 'Over 7000', action: 'refuse', field_0: 'amount', op_0: 'gte', value_0: '7000' });
  const past = await t.svc.ctx.db.query<{ amount: string; n: number }>(
    "SELECT amount >= 7000 AS big, count(*)::int AS n FROM transactions WHERE project_id = $1 AND payment_method = 'credit-card' GROUP BY 1",
    [shop.project_id],
  );
  const count = (big: boolean) => past.find((r) => Boolean((r as Json).big) === big)?.n ?? 0;
  assert.ok(count(true) >= 3 && count(false) >= 3, JSON.stringify(past));
  const run = await c.get(`${p}/risk/rules/${big}/dry-run`);
  assert.equal(run.status, 200, run.text);
  assert.match(run.text, new RegExp(`data-dry="hit">${count(true)}<`));
  assert.match(run.text, new RegExp(`data-dry="passed">${count(false)}<`));
  assert.match(run.text, /data-dry="unknown">0</);
  assert.match(run.text, new RegExp(`href="[^"]*/projects/${shop.project_id}/orders/[0-9a-f-]{36}/"`));
  assert.equal((await rulesNow()).find((r) => r.id === big)!.enabled, false, 'the dry run switches nothing on');

  // a velocity count is not kept for past payments: the dry run says it could not judge them
  const velocity = await addRule({ name: 'Busy card', action: 'flag', field_0: 'card_attempts', op_0: 'gt', value_0: '2' });
  const unknown = await c.get(`${p}/risk/rules/${velocity}/dry-run?lang=nl`);
  assert.match(unknown.text, new RegExp(`data-dry="unknown">${count(true) + count(false)}<`));
  assert.match(unknown.text, /Proefrun van Busy card/);
  await c.get(`${p}/risk/rules/?lang=en`);
  assert.equal((await c.get(`${p}/risk/rules/00000000-0000-4000-8000-000000000000/dry-run`)).status, 404);

  // the card country is kept with each screening: the one Dutch payment is a hit, a card of a BIN
  // the table does not know (randomPan('6')) could not be judged, the French and US ones pass
  const dutch = await addRule({ name: 'Dutch cards', action: 'flag', field_0: 'card_country', op_0: 'eq', value_0: 'NL' });
  const byCountry = await t.svc.ctx.db.query<{ country: string | null; n: number }>(
    "SELECT risk->>'card_country' AS country, count(*)::int AS n FROM transactions WHERE project_id = $1 AND payment_method = 'credit-card' GROUP BY 1",
    [shop.project_id],
  );
  const of = (country: string | null) => byCountry.find((r) => r.country === country)?.n ?? 0;
  assert.equal(of('NL'), 1, JSON.stringify(byCountry));
  assert.ok(of('FR') === 1 && of('US') >= 3 && of(null) >= 1, JSON.stringify(byCountry));
  const replayed = await c.get(`${p}/risk/rules/${dutch}/dry-run`);
  assert.match(replayed.text, /data-dry="hit">1</);
  assert.match(replayed.text, new RegExp(`data-dry="passed">${of('FR') + of('US')}<`));
  assert.match(replayed.text, new RegExp(`data-dry="unknown">${of(null)}<`));
});

test('support and viewers read the rules but may not write them (403, nothing stored)', async () => {
  for (const role of ['support', 'viewer']) {
    const user = await portalUser(t, shop.merchant_id);
    await t.svc.ctx.db.query('UPDATE portal_users SET role = $2 WHERE email = $1', [user.email, role]);
    const them = new PortalClient(t);
    await them.signIn(user.email, user.password);
    const page = await them.get(`${p}/risk/rules/`);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.text, /Add rule/, `${role}: no form`);
    const before = (await rulesNow()).length;
    const res = await them.post(`${p}/risk/rules`, { name: 'Mine', action: 'refuse', field_0: 'amount', op_0: 'gt', value_0: '1' });
    assert.equal(res.status, 403, role);
    assert.equal((await rulesNow()).length, before);
  }
});
