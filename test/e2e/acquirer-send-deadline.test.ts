// The send deadline (docs/money.md "The send deadline"): an acquirer call is never sent so late
// that the recovery's inquiry could come before it. Here Tender's whole process is held up right
// as it records an attempt (Atomics.wait stops the event loop, as a long pause or a stalled VM
// would); the call is then past its deadline, is not sent, and the attempt fails at once with
// nothing charged. A control run without the hold goes through. Both stores.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { CHALLENGE_CODE } from '../../src/acquirer/simulator/cards.ts';
import { withFaults } from '../../src/acquirer/faults.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { followBrowser, parseForm, startPayment, submitForm } from '../helpers/cards.ts';
import { moneyClient } from '../helpers/money.ts';
import { compareWithAcquirer } from '../helpers/acquirer-truth.ts';
import type { Json } from '../helpers/json.ts';

// ACQUIRER_TIMEOUT_MS 4 s, ACQUIRER_RECOVERY_MS 12 s: a first call may be sent up to 4 s after its
// attempt was built (12 - 4 - (12 - 4) / 2), or 8 s after when a challenge's answer goes first
const HOLD_MS = 5000;
const acquirer = withFaults(createSimulator({ settleMs: 0 }));
let t: TestService;
before(async () => {
  t = await startTestService({
    testConnector: acquirer,
    env: { TENDER_WORKER: 'off', ACQUIRER_TIMEOUT_MS: '4000', ACQUIRER_RECOVERY_MS: '12000' },
  });
});
after(async () => t?.close());

const { preauth, refund, get, ledgerSound } = moneyClient(() => t);

/** Holds up the whole process for HOLD_MS the next time the store records an attempt. */
function holdAtNextRecord() {
  let armed = true;
  const stop = t.db.observe((sql) => {
    if (!armed || !/INSERT INTO acquirer_attempts/.test(sql)) return;
    armed = false;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, HOLD_MS);
  });
  return () => {
    stop();
    assert.equal(armed, false, 'the hold came');
  };
}

/** What the acquirer did for the transaction's operations of `kind`. */
async function acquirerDid(txnId: string, kind: string) {
  const ids = await t.db.query<{ id: string }>(
    'SELECT id FROM acquirer_attempts WHERE transaction_id = $1 AND kind = $2 ORDER BY created',
    [txnId, kind],
  );
  return ids.map((a) => acquirer.acquirer.get(a.id)?.outcome.status ?? 'never saw it');
}

async function attemptsOf(txnId: string, kind: string) {
  return t.db.query<{ status: string; response_code: string }>(
    'SELECT status, response_code FROM acquirer_attempts WHERE transaction_id = $1 AND kind = $2 ORDER BY created',
    [txnId, kind],
  );
}

async function truthHolds() {
  const truth = await compareWithAcquirer(t.db, acquirer.acquirer, t.project.project_id);
  assert.deepEqual(truth.violations, []);
  await ledgerSound();
}

test('a refund held up past its send deadline is not sent: refused at once, nothing refunded; without the hold it goes', async () => {
  const o: Json = await preauth('manual');
  const captured = await t.api('POST', `/v1/orders/${o.id}/transactions/${o.transactions[0].id}/captures/`);
  assert.equal(captured.status, 201, captured.text);
  const txnId = o.transactions[0].id as string;

  const release = holdAtNextRecord();
  const late = await refund(o, 700);
  release();
  assert.equal(late.status, 422, late.text);
  assert.equal(late.body.error.type, 'RefundError');
  assert.match(late.body.error.value, /was not sent/);
  assert.deepEqual(await acquirerDid(txnId, 'refund'), ['never saw it']);
  assert.deepEqual(await attemptsOf(txnId, 'refund'), [{ status: 'failed', response_code: '96' }]);
  assert.equal((await get(o.id)).transactions[0].refunded_amount ?? 0, 0);

  const onTime = await refund(o, 700);
  assert.equal(onTime.status, 201, onTime.text);
  assert.deepEqual(await acquirerDid(txnId, 'refund'), ['never saw it', 'accepted']);
  await truthHolds();
});

test('an authorization held up past its send deadline is not sent: the payment fails with processing_error', async () => {
  const paid = await startPayment(t, '4111111111111111');
  const release = holdAtNextRecord();
  await followBrowser(new URL(paid.redirect_url, t.url).toString());
  release();
  const order = await get(paid.order.id);
  assert.equal(order.status, 'error');
  assert.equal(order.transactions[0].reason, 'processing_error');
  assert.deepEqual(await acquirerDid(paid.txn.id, 'authorization'), ['never saw it']);
  assert.deepEqual(await attemptsOf(paid.txn.id, 'authorization'), [{ status: 'failed', response_code: '96' }]);
  await truthHolds();
});

test("a challenge's answer goes first: the authorization held up as long is still sent in time", async () => {
  const paid = await startPayment(t, '4000002760003184');
  // the challenge page first (its visit records nothing), then the hold as the answer is recorded
  const page = new URL(paid.redirect_url, t.url).toString();
  const shown = await fetch(page);
  assert.equal(shown.status, 200);
  const form = parseForm(await shown.text(), page);
  const release = holdAtNextRecord();
  const answered = await submitForm(
    form,
    { code: CHALLENGE_CODE },
    form.buttons.find((b) => /verify/i.test(b.text)),
  );
  release();
  assert.equal(answered.status, 303);
  const order = await get(paid.order.id);
  assert.equal(order.status, 'completed');
  assert.deepEqual(await acquirerDid(paid.txn.id, 'authorization'), ['accepted']);
  await truthHolds();
});
