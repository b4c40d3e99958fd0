import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { startTestService, request, type TestService } from '../helpers/service.ts';
import { parseForm, startPayment, submitForm } from '../helpers/cards.ts';
import { holding } from '../helpers/holding.ts';
import { moneyClient } from '../helpers/money.ts';
import type { Json } from '../helpers/json.ts';

/**
 * The 3-D Secure page records its authorization in the statement that reads the transaction, and
 * the transaction stays `pending` while the call is at the acquirer (docs/money.md "The 3-D
 * Secure page"). Here the call is held (a connector that waits until the test lets it go): a
 * second visit, the customer's cancel, the merchant's cancel and the transaction's expiry all
 * see the authorization in flight and leave the payment alone, and the answer then books it once.
 * Recovery is an hour away so that only the held call decides. Both stores.
 */

const acquirer = holding(createSimulator({ settleMs: 0 }));
let t: TestService;
before(async () => {
  t = await startTestService({
    testConnector: acquirer.connector,
    config: { acquirer: { timeoutMs: 60_000, recoveryMs: 3_600_000, simSlowMs: 1000, simSettleMs: 0 } },
  });
});
after(async () => t?.close());

const { ledgerSound } = moneyClient(() => t);
const RETURN = 'https://shop.example/return';
const FAILURE = 'https://shop.example/failed';

const attempts = (txnId: string) =>
  t.db.query<{ kind: string; status: string }>(
    'SELECT kind, status FROM acquirer_attempts WHERE transaction_id = $1 ORDER BY created, kind',
    [txnId],
  );
const orderOf = async (id: string) => (await t.api('GET', `/v1/orders/${id}/`)).body;
const events = (order: Json) => order.transactions[0].events.map((e: Json) => e.event);

test('while the authorization is at the acquirer: pending; a second visit, the merchant cancel and the expiry leave it; the answer books it once', async () => {
  const p = await startPayment(t, '4111111111111111', {
    orderOver: { return_url: RETURN, failure_url: FAILURE },
    txnOver: { expiration_period: 'PT1M' },
  });
  const held = acquirer.holdNext('authorize');
  const first = request(p.redirect_url, 'GET');
  await held.reached;

  const during = await orderOf(p.order.id);
  assert.equal(during.transactions[0].status, 'pending', 'pending while the call is under way');
  assert.equal(during.status, 'processing');
  assert.deepEqual(await attempts(p.txn.id), [
    { kind: 'three_ds', status: 'succeeded' },
    { kind: 'authorization', status: 'processing' },
  ]);
  const [card] = await t.db.query<{ cvc_ct: string | null }>('SELECT cvc_ct FROM vault_cards WHERE transaction_id = $1', [p.txn.id]);
  assert.equal(card.cvc_ct, null, 'the CVC went with the record');

  // a second visit: back to the shop, nothing asked again
  const again = await request(p.redirect_url, 'GET');
  assert.equal(again.status, 302, again.text);
  assert.match(again.headers.get('location')!, /^https:\/\/shop\.example\/return\?/);
  // the merchant's cancel is refused
  const cancel = await t.api('DELETE', `/v1/orders/${p.order.id}/`);
  assert.equal(cancel.status, 409, cancel.text);
  assert.equal(cancel.body.error.type, 'CanNotCancelTransaction');
  assert.match(cancel.body.error.value, /being authorized/);
  // past its expiry, the transaction's expiry job leaves it to the authorization
  const due = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT5M' });
  assert.equal(due.status, 200, due.text);
  assert.equal((await orderOf(p.order.id)).transactions[0].status, 'pending');
  assert.equal((await attempts(p.txn.id)).filter((a) => a.kind === 'authorization').length, 1, 'one authorization');

  held.release();
  const answer = await first;
  assert.equal(answer.status, 302, answer.text);
  const after = await orderOf(p.order.id);
  assert.equal(after.status, 'completed');
  assert.equal(after.transactions[0].status, 'accepted');
  assert.deepEqual(events(after), ['new', 'pending', 'accepted']);
  assert.deepEqual(await attempts(p.txn.id), [
    { kind: 'three_ds', status: 'succeeded' },
    { kind: 'authorization', status: 'succeeded' },
  ]);
  await ledgerSound();
});

test('a challenge answered while the customer cancels in another tab: the cancel sees the answer in flight, the answer pays', async () => {
  const p = await startPayment(t, '4000002760003184', { orderOver: { return_url: RETURN, failure_url: FAILURE } });
  const form = parseForm(await (await fetch(p.redirect_url)).text(), p.redirect_url);
  const [verify, cancelButton] = form.buttons;
  const held = acquirer.holdNext('completeChallenge');
  const answered = submitForm(form, { code: '1234' }, verify);
  await held.reached;
  // the lookup's, then the authorization and the challenge's answer recorded together
  assert.deepEqual(await attempts(p.txn.id), [
    { kind: 'three_ds', status: 'succeeded' },
    { kind: 'authorization', status: 'processing' },
    { kind: 'three_ds', status: 'processing' },
  ]);
  // the challenge form again: nothing more to answer, back to the shop as the payment stands
  const visit = await request(p.redirect_url, 'GET');
  assert.equal(visit.status, 302, visit.text);
  const cancelled = await submitForm(form, {}, cancelButton);
  assert.equal(cancelled.status, 303);
  assert.match(cancelled.headers.get('location')!, /^https:\/\/shop\.example\/return\?/, 'not the failure_url: nothing was cancelled');
  assert.equal((await orderOf(p.order.id)).transactions[0].status, 'pending');

  held.release();
  const paid = await answered;
  assert.equal(paid.status, 303);
  assert.match(paid.headers.get('location')!, /^https:\/\/shop\.example\/return\?/);
  const after = await orderOf(p.order.id);
  assert.equal(after.transactions[0].status, 'accepted');
  assert.deepEqual(events(after), ['new', 'pending', 'accepted']);
  const settled = await attempts(p.txn.id);
  assert.equal(settled.length, 3);
  assert.ok(
    settled.every((a) => a.status === 'succeeded'),
    JSON.stringify(settled),
  );
  await ledgerSound();
});
