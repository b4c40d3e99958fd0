// The acquirer's answers are checked against their requests: `tender acquirer-host`, its own
// process, answers with 10 and a partial amount, or with a wrong amount, currency, RRN or
// original data element (its fault switches). No such answer is applied as an approval: it is
// reversed (for the part approved, for a partial approval), nothing is charged, the ledger holds
// and the settlement file reconciles.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { reconcile } from '../../src/services/payments/reconcile.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';
import type { Message } from '../../src/acquirer/iso8583/codec.ts';

let t: TestService;
let host: HostProcess;
let dir: string;
let live: { project_id: string; api_key: string };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-checks-'));
  host = await startHostProcess(dir);
  t = await startTestService({ env: { ISO8583_TIMEOUT_MS: '3000' } });
  live = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Live shop, checked answers',
    mode: 'live',
    acquirer: host.url,
    terminalId: 'TCHK0001',
    cardAcceptorId: 'SHOP00000000002',
  });
});
after(async () => {
  await t?.close();
  host?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const key = () => ({ key: live.api_key });
const pay = (amount: number, capture_mode?: 'manual') =>
  payOrder(t, { amount }, { key: live.api_key, ...(capture_mode ? { capture_mode } : {}) });

/** The live project's recovery: its clock past ACQUIRER_RECOVERY_MS, its due jobs run now. */
async function recover() {
  await advanceTestClock(t.svc.ctx, live.project_id, t.config.acquirer.recoveryMs + 1000);
  await t.svc.ctx.dueWork.settle(live.project_id);
}

/** The host's journal: each financial request it received, with its answer. */
const hostJournal = () =>
  readFileSync(join(dir, 'host-journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { request: Message; answer: Message });

interface Money {
  status: string;
  authorized_amount: number;
  captured_amount: number;
  journals: number;
  reversals: { status: string; amount: number }[];
}

/** What Tender holds of a transaction: its status and amounts, its ledger journals, its reversal attempts. */
async function moneyOf(txnId: string): Promise<Money> {
  const [txn] = await t.db.query<{ status: string; authorized_amount: number; captured_amount: number }>(
    'SELECT status, authorized_amount::float8 AS authorized_amount, captured_amount::float8 AS captured_amount FROM transactions WHERE id = $1',
    [txnId],
  );
  const [j] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_entries WHERE payment_transaction_id = $1', [txnId]);
  const reversals = await t.db.query<{ status: string; amount: number }>(
    "SELECT status, amount::float8 AS amount FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'reversal' ORDER BY created",
    [txnId],
  );
  return { ...txn, journals: j.n, reversals };
}

/** The order of a refused answer: not completed, the transaction failed with nothing authorized or captured, one reversal of `reversed`. */
async function refusedAndReversed(o: { id: string; status: string; transactions: { id: string }[] }, reversed: number) {
  const [txn] = o.transactions as unknown as { id: string; status: string; reason: string }[];
  assert.notEqual(o.status, 'completed');
  assert.equal(txn.status, 'declined');
  const money = await moneyOf(txn.id);
  assert.deepEqual(money, {
    status: 'declined',
    authorized_amount: 0,
    captured_amount: 0,
    journals: 0,
    reversals: [{ status: 'succeeded', amount: reversed }],
  });
  // the host received the reversal of this authorization, with that amount in field 4
  const entries = hostJournal();
  const last = entries.filter((e) => e.request.mti === '0400' || e.request.mti === '0401').at(-1)!;
  assert.equal(Number(last.request.fields[4]), reversed);
  assert.equal(last.answer.fields[39], '00');
  return txn;
}

test('an answer 10 with a partial amount to a sale is declined with its code kept, and the part approved is reversed', async () => {
  assert.equal(await host.admin('partial 1'), 'ok');
  const o = await pay(1234);
  const txn = await refusedAndReversed(o, 617);
  assert.equal(txn.reason, 'declined');
  const got = await t.api('GET', `/v1/orders/${o.id}/`, undefined, key());
  assert.equal(got.body.transactions[0].outcomes.processing.response_code, '10', got.text);
  // the host approved half, answered it in field 4, and holds nothing now
  const sale = hostJournal().find((e) => e.answer.fields[39] === '10')!;
  assert.equal(Number(sale.answer.fields[4]), 617);
  assert.equal(Number(sale.request.fields[4]), 1234);
});

test('an answer 10 to a pre-authorization: declined, the partial hold released', async () => {
  assert.equal(await host.admin('partial 1'), 'ok');
  const o = await pay(800, 'manual');
  await refusedAndReversed(o, 400);
});

for (const [fault, field] of [
  ['wrong-amount', 4],
  ['wrong-currency', 49],
  ['wrong-rrn', 37],
  ['wrong-original', 90],
] as const)
  test(`an approval whose field ${field} is unlike the request's (${fault}) is not applied: the payment fails, the whole amount reversed`, async () => {
    assert.equal(await host.admin(`${fault} 1`), 'ok');
    const o = await pay(555 + field);
    const txn = await refusedAndReversed(o, 555 + field);
    assert.equal(txn.reason, 'processing_error');
  });

test("a mismatched answer whose reversal's answers do not match either: processing, then its recovery sends that reversal again", async () => {
  // the sale's answer and the four sends of its reversal (0400, then 0401 three times)
  assert.equal(await host.admin('wrong-rrn 5'), 'ok');
  const o = await pay(1000);
  assert.equal(o.transactions[0].status, 'processing', 'the reversal has no answer yet: the money may be held');
  assert.deepEqual((await moneyOf(o.transactions[0].id)).reversals, [{ status: 'unknown', amount: 1000 }]);
  await recover();
  const after = await t.api('GET', `/v1/orders/${o.id}/`, undefined, key());
  const txn = await refusedAndReversed(after.body, 1000);
  assert.equal(txn.reason, 'processing_error');
  // one reversal at the host for it, sent again with its STAN (a retransmission), not a second one
  const reversals = hostJournal().filter((e) => e.request.mti.startsWith('040') && e.request.fields[90]?.startsWith('0200'));
  assert.equal(new Set(reversals.slice(-5).map((e) => e.request.fields[11])).size, 1);
});

test("a capture answered with another original (wrong-original) is no answer: in flight, then the inquiry's resend is answered as asked", async () => {
  const o = await pay(700, 'manual');
  assert.equal(o.transactions[0].status, 'accepted');
  assert.equal(await host.admin('wrong-original 1'), 'ok');
  const c = await t.api('POST', `/v1/orders/${o.id}/transactions/${o.transactions[0].id}/captures/`, undefined, key());
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.status, 'processing', 'the answer did not match: not applied');
  const capturedNow = async () => (await moneyOf(o.transactions[0].id)).captured_amount;
  assert.equal(await capturedNow(), 0);
  await recover();
  assert.equal(await capturedNow(), 700, 'the host answered the same completion, sent again, as asked');
  const completions = hostJournal().filter((e) => e.request.mti === '0220');
  assert.deepEqual(
    completions.map((e) => e.request.fields[11]),
    [completions[0].request.fields[11], completions[0].request.fields[11]],
    'one completion, sent twice with its STAN',
  );
});

test('a sale answered as asked is still approved; the ledger holds and the settlement file reconciles with the host', async () => {
  const o = await pay(4242);
  assert.equal(o.status, 'completed');
  assert.deepEqual((await checkLedger(t.db, live.project_id)).violations, []);
  const [file] = readdirSync(dir).filter((f) => f.startsWith('settlement-'));
  const r = await reconcile(t.svc.ctx, readFileSync(join(dir, file), 'utf8'), { acquirer: host.url });
  assert.deepEqual([r.host_only, r.tender_only, r.amount_differences], [[], [], []]);
  assert.deepEqual(r.matches.map((m) => [m.type, m.host_amount]).sort(), [
    ['completion', 700],
    ['sale', 4242],
  ]);
  // the partial sales (2) and the mismatched sales (4) were settled at the host and reversed on both sides
  assert.equal(r.cancelled, 6);
  assert.ok(r.ok);
});
