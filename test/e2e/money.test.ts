// Pre-authorizations, captures, voids, refunds and chargebacks, black-box through the API
// (authorizations come from the real card flow). Fees, settlement, the ledger and
// Idempotency-Key are in money-books.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { findProject, updateProjectSettings } from '../../src/store/platform/projects.ts';
import { moneyClient, eventually, expectError } from '../helpers/money.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const { txnPath, capture, voidAll, voidPart, refund, get, runJobs, preauth, sale, ledgerSound } = moneyClient(() => t);

// ---------- Pre-authorizations ----------

test('a manual pre-authorization is accepted, capturable, and its order completed', async () => {
  const o = await preauth('manual');
  assert.equal(o.status, 'completed');
  assert.equal(o.transactions[0].status, 'accepted');
  assert.equal(o.transactions[0].capture_mode, 'manual');
  assert.equal(o.transactions[0].is_capturable, true);
  const s = await sale();
  assert.equal(s.transactions[0].status, 'accepted');
  assert.equal(s.transactions[0].is_capturable, false, 'a sale is captured at once, never capturable');
});

// ---------- Rules that hold ----------

test('rule: a pre-authorization can be captured only once', async () => {
  const o = await preauth();
  const first = await capture(o);
  assert.equal(first.status, 201, first.text);
  expectError(await capture(o), 409, 'CanNotCaptureTransaction');
  const after = await get(o.id);
  assert.equal(after.related_orders.length, 1);
});

test('rule: is_capturable is true exactly while the pre-authorization can still be captured', async () => {
  const partly = await preauth();
  assert.equal((await voidPart(partly, 100)).status, 201);
  assert.equal((await get(partly.id)).transactions[0].is_capturable, true, 'partial void leaves the rest capturable');
  assert.equal((await capture(partly)).status, 201);
  assert.equal((await get(partly.id)).transactions[0].is_capturable, false, 'captured');

  const voided = await preauth();
  assert.equal((await voidAll(voided)).status, 201);
  const v = await get(voided.id);
  assert.equal(v.transactions[0].is_capturable, false, 'fully voided');
  assert.equal(v.transactions[0].status, 'cancelled');
  expectError(await capture(voided), 409, 'CanNotCaptureTransaction');
});

test('rule: once expired a pre-authorization cannot be captured (capture window 5 days, by the job worker)', async () => {
  const p = await t.newProject('test');
  const o = await preauth('manual', { key: p.api_key });
  const early = await runJobs('P4DT23H', p.api_key);
  assert.equal(early.status, 200, early.text);
  assert.equal((await get(o.id, { key: p.api_key })).transactions[0].is_capturable, true, 'still inside the window');
  await runJobs('PT2H', p.api_key);
  await eventually(async () => assert.equal((await get(o.id, { key: p.api_key })).transactions[0].status, 'expired'));
  const after = await get(o.id, { key: p.api_key });
  assert.equal(after.transactions[0].is_capturable, false);
  assert.equal(after.status, 'completed', 'a final order keeps its status');
  expectError(await capture(o, { key: p.api_key }), 409, 'CanNotCaptureTransaction');
  expectError(await voidAll(o, { key: p.api_key }), 409, 'CanNotVoidTransaction');
  await ledgerSound(p.project_id);
});

test('rule: the capture window is the project setting capture_window', async () => {
  const p = await t.newProject('test');
  const row = (await findProject(t.db, p.project_id))!;
  await updateProjectSettings(t.db, p.project_id, { ...row.settings, capture_window: 'P1D' });
  const o = await preauth('manual', { key: p.api_key });
  await runJobs('PT23H', p.api_key);
  assert.equal((await get(o.id, { key: p.api_key })).transactions[0].status, 'accepted');
  await runJobs('PT2H', p.api_key);
  await eventually(async () => assert.equal((await get(o.id, { key: p.api_key })).transactions[0].status, 'expired'));
});

test('rule: delayed is captured automatically at the end of expiration_period, and voidable only before', async () => {
  const p = await t.newProject('test');
  const o = await payOrder(t, {}, { capture_mode: 'delayed', expiration_period: 'PT30M', key: p.api_key });
  assert.equal(o.transactions[0].is_capturable, true);
  const other = await payOrder(t, {}, { capture_mode: 'delayed', expiration_period: 'PT30M', key: p.api_key });
  await runJobs('PT29M', p.api_key);
  assert.equal((await get(o.id, { key: p.api_key })).transactions[0].status, 'accepted', 'not yet');
  // before the end: a void is allowed
  assert.equal((await voidAll(other, { key: p.api_key })).status, 201);
  await runJobs('PT2M', p.api_key);
  await eventually(async () => assert.equal((await get(o.id, { key: p.api_key })).transactions[0].status, 'completed'));
  const after = await get(o.id, { key: p.api_key });
  assert.equal(after.transactions[0].status, 'completed');
  assert.equal(after.transactions[0].is_capturable, false);
  assert.ok(after.flags.includes('has-captures'));
  const cap = await get(after.related_orders[0], { key: p.api_key });
  assert.equal(cap.capture_of_order_id, o.id);
  assert.equal(cap.amount, o.amount);
  assert.equal(cap.transactions[0].status, 'accepted');
  // after the end: no void
  expectError(await voidAll(o, { key: p.api_key }), 409, 'CanNotVoidTransaction');
  expectError(await voidPart(o, 1, { key: p.api_key }), 409, 'CanNotVoidTransaction');
  // the voided one was not captured
  const voided = await get(other.id, { key: p.api_key });
  assert.equal(voided.transactions[0].status, 'cancelled');
  assert.equal(voided.related_orders.length, 1);
  await ledgerSound(p.project_id);
});

test('rule: a void is only for pre-authorizations not yet captured; after capture a refund is used', async () => {
  const s = await sale();
  expectError(await voidAll(s), 409, 'CanNotVoidTransaction');
  expectError(await voidPart(s, 100), 409, 'CanNotVoidTransaction');
  const o = await preauth();
  assert.equal((await capture(o)).status, 201);
  expectError(await voidAll(o), 409, 'CanNotVoidTransaction');
  expectError(await voidPart(o, 100), 409, 'CanNotVoidTransaction');
  assert.equal((await refund(o, 100)).status, 201);
});

test('rule: a partial void reduces the remaining authorization and the remainder can still be captured', async () => {
  const o = await preauth(); // 1995
  assert.equal((await voidPart(o, 500)).status, 201);
  assert.equal((await voidPart(o, 300)).status, 201);
  const c = await capture(o);
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.amount, 1195, 'a capture takes only what the voids left');
  assert.equal(c.body.transactions[0].amount, 1195);
  const after = await get(o.id);
  assert.equal(after.transactions[0].status, 'completed');
  assert.deepEqual(after.flags.filter((f: string) => f.startsWith('has-')).sort(), ['has-captures', 'has-voids']);
  assert.equal(after.related_orders.length, 3);
});

test('limit: a void cannot exceed what remains of the authorized amount', async () => {
  const o = await preauth();
  expectError(await voidPart(o, 1996), 409, 'CanNotVoidTransaction');
  assert.equal((await voidPart(o, 1000)).status, 201);
  expectError(await voidPart(o, 996), 409, 'CanNotVoidTransaction');
  const rest = await voidPart(o, 995);
  assert.equal(rest.status, 201, 'the exact remainder can be voided');
  const after = await get(o.id);
  assert.equal(after.transactions[0].status, 'cancelled', 'nothing left: the authorization is cancelled');
  assert.equal(after.transactions[0].is_capturable, false);
});

// ---------- Shapes of the orders that record the movements ----------

test('capture answers the capture order linked both ways', async () => {
  const o = await preauth();
  const res = await capture(o);
  assert.equal(res.status, 201, res.text);
  const c = res.body;
  assert.notEqual(c.id, o.id);
  assert.equal(c.capture_of_order_id, o.id);
  assert.equal(c.related_order_id, o.id);
  assert.equal(c.status, 'completed');
  assert.equal(c.amount, o.amount);
  assert.equal(c.currency, o.currency);
  assert.equal(c.transactions.length, 1);
  assert.equal(c.transactions[0].capture_of_transaction_id, o.transactions[0].id);
  assert.equal(c.transactions[0].status, 'accepted');
  assert.equal(c.transactions[0].credit_debit, 'credit');
  assert.ok(c.flags.includes('is-test'));
  const after = await get(o.id);
  assert.ok(after.flags.includes('has-captures'));
  assert.deepEqual(after.related_orders, [c.id]);
  assert.equal(after.transactions[0].is_capturable, false);
  assert.equal(after.transactions[0].status, 'completed');
  assert.equal((await get(c.id)).capture_of_order_id, o.id);
});

test('void answers the void order; a full void cancels the authorization', async () => {
  const o = await preauth();
  const res = await voidAll(o);
  assert.equal(res.status, 201, res.text);
  const v = res.body;
  assert.equal(v.void_of_order_id, o.id);
  assert.equal(v.related_order_id, o.id);
  assert.equal(v.amount, o.amount);
  assert.equal(v.transactions[0].void_of_transaction_id, o.transactions[0].id);
  assert.equal(v.transactions[0].status, 'completed');
  const after = await get(o.id);
  assert.ok(after.flags.includes('has-voids'));
  assert.deepEqual(after.related_orders, [v.id]);
  assert.equal(after.transactions[0].status, 'cancelled');
  expectError(await voidAll(o), 409, 'CanNotVoidTransaction');
});

test('partial void takes amount and description, both required and valid', async () => {
  const o = await preauth();
  const path = `${txnPath(o)}/voids/amount/`;
  expectError(await t.api('POST', path, { amount: 100 }), 400, 'ValidationError');
  expectError(await t.api('POST', path, { description: 'x' }), 400, 'ValidationError');
  expectError(await t.api('POST', path, { amount: 1.5, description: 'x' }), 400, 'ValidationError');
  expectError(await t.api('POST', path, { amount: 100, description: 'x', extra_field: 1 }), 400, 'ValidationError');
  const ok = await t.api('POST', path, { amount: 100, description: 'one mug less' });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.amount, 100);
  assert.equal(ok.body.description, 'one mug less');
  assert.equal((await get(o.id)).transactions[0].status, 'accepted');
});

test('captures and voids take no body: none, an empty one, or {} (unknown fields refused)', async () => {
  const o = await preauth();
  const raw = await t.api('POST', `${txnPath(o)}/voids/amount/`, undefined, { raw: '' });
  expectError(raw, 400, 'ValidationError');
  expectError(await t.api('POST', `${txnPath(o)}/captures/`, { amount: 5 }), 400, 'ValidationError');
  const empty = await t.api('POST', `${txnPath(o)}/captures/`, undefined, { raw: '' });
  assert.equal(empty.status, 201, empty.text);
  const o2 = await preauth();
  const obj = await t.api('POST', `${txnPath(o2)}/voids/`, {});
  assert.equal(obj.status, 201, obj.text);
});

test('unknown, foreign or mismatched ids are 404', async () => {
  const o = await preauth();
  const other = await t.newProject('test');
  expectError(await capture(o, { key: other.api_key }), 404, 'NotFound');
  expectError(await refund(o, 1, { key: other.api_key }), 404, 'NotFound');
  const s = await sale();
  expectError(await t.api('POST', `/v1/orders/${s.id}/transactions/${o.transactions[0].id}/captures/`), 404, 'NotFound');
  expectError(await t.api('POST', `/v1/orders/${randomUUID()}/refunds/`, { amount: 1 }), 404, 'NotFound');
  assert.equal((await get(o.id)).transactions[0].is_capturable, true, 'nothing moved');
});

// ---------- Refunds ----------

test('partial and repeated refunds up to the captured amount; the refund orders and the original', async () => {
  const s = await sale(); // 1995
  const r1 = await refund(s, 500);
  assert.equal(r1.status, 201, r1.text);
  const r = r1.body;
  assert.equal(r.refund_of_order_id, s.id);
  assert.equal(r.related_order_id, s.id);
  assert.ok(r.flags.includes('is-refund'));
  assert.equal(r.amount, 500);
  assert.equal(r.description, 'returned');
  assert.equal(r.transactions[0].credit_debit, 'debit');
  assert.equal(r.transactions[0].refund_of_transaction_id, s.transactions[0].id);
  assert.equal(r.transactions[0].status, 'completed');
  const r2 = await refund(s, 1495);
  assert.equal(r2.status, 201, r2.text);
  const after = await get(s.id);
  assert.equal(after.refunded_amount, 1995);
  assert.deepEqual(after.refund_orders, [r.id, r2.body.id]);
  assert.ok(after.flags.includes('has-refunds'));
  expectError(await refund(s, 1), 422, 'RefundError');
});

test('a refund above what remains, or of money never captured, is a RefundError and stores nothing', async () => {
  const s = await sale();
  expectError(await refund(s, 1996), 422, 'RefundError');
  const o = await preauth();
  expectError(await refund(o, 100), 422, 'RefundError');
  const unpaid = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100, transactions: [{ payment_method: 'credit-card' }] });
  expectError(await refund(unpaid.body, 100), 422, 'RefundError');
  const v = await preauth();
  await voidAll(v);
  expectError(await refund(v, 1), 422, 'RefundError');
  assert.equal((await get(s.id)).refunded_amount, 0);
  assert.equal((await get(s.id)).related_orders, undefined);
  expectError(await t.api('POST', `/v1/orders/${s.id}/refunds/`, { amount: 0, description: 'x' }), 400, 'ValidationError');
  expectError(await t.api('POST', `/v1/orders/${s.id}/refunds/`, { description: 'x' }), 400, 'ValidationError');
});

test('a captured pre-authorization is refunded on its original order (or through its capture order)', async () => {
  const o = await preauth();
  await voidPart(o, 995);
  const c = (await capture(o)).body;
  expectError(await refund(o, 1001), 422, 'RefundError');
  assert.equal((await refund(o, 400)).status, 201);
  const viaCapture = await refund(c, 600);
  assert.equal(viaCapture.status, 201, viaCapture.text);
  assert.equal(viaCapture.body.refund_of_order_id, o.id);
  assert.equal((await get(o.id)).refunded_amount, 1000);
  await ledgerSound();
});

// ---------- Chargebacks and reversals ----------

test('chargeback and reversal orders, with their limits', async () => {
  const s = await sale(); // 1995
  await refund(s, 495);
  const cb = await t.api('POST', `/v1/test/orders/${s.id}/chargeback/`, { amount: 1000 });
  assert.equal(cb.status, 201, cb.text);
  assert.equal(cb.body.chargeback_of_order_id, s.id);
  assert.equal(cb.body.related_order_id, s.id);
  assert.equal(cb.body.transactions[0].credit_debit, 'debit');
  assert.equal(cb.body.transactions[0].chargeback_of_transaction_id, s.transactions[0].id);
  assert.ok(cb.body.flags.includes('is-chargeback'));
  expectError(await t.api('POST', `/v1/test/orders/${s.id}/chargeback/`, { amount: 501 }), 422, 'RefundError');
  expectError(await refund(s, 501), 422, 'RefundError');

  const rv = await t.api('POST', `/v1/test/orders/${s.id}/reversal/`, { amount: 400 });
  assert.equal(rv.status, 201, rv.text);
  assert.equal(rv.body.reversal_of_order_id, s.id);
  assert.equal(rv.body.transactions[0].credit_debit, 'credit');
  assert.equal(rv.body.transactions[0].reversal_of_transaction_id, s.transactions[0].id);
  assert.ok(rv.body.flags.includes('is-reversal'));
  expectError(await t.api('POST', `/v1/test/orders/${s.id}/reversal/`, { amount: 601 }), 422, 'RefundError');
  // the reversed money is the merchant's again: it can be refunded
  assert.equal((await refund(s, 900)).status, 201);
  expectError(await refund(s, 1), 422, 'RefundError');

  const after = await get(s.id);
  assert.deepEqual(after.chargeback_orders, [cb.body.id]);
  assert.deepEqual(after.reversal_orders, [rv.body.id]);
  assert.ok(after.flags.includes('has-chargebacks'));
  assert.ok(after.flags.includes('has-reversals'));
  assert.equal(after.related_orders.length, 4);
  await ledgerSound();
});

test('chargeback without amount takes all that remains; reversal without amount gives all back', async () => {
  const s = await sale();
  await refund(s, 995);
  const cb = await t.api('POST', `/v1/test/orders/${s.id}/chargeback/`, {});
  assert.equal(cb.status, 201, cb.text);
  assert.equal(cb.body.amount, 1000);
  expectError(await t.api('POST', `/v1/test/orders/${s.id}/chargeback/`), 422, 'RefundError');
  const rv = await t.api('POST', `/v1/test/orders/${s.id}/reversal/`);
  assert.equal(rv.status, 201, rv.text);
  assert.equal(rv.body.amount, 1000);
  expectError(await t.api('POST', `/v1/test/orders/${s.id}/reversal/`), 422, 'RefundError');
});

test('chargeback, reversal and settle answer 403 on a live project', async () => {
  const live = await t.newProject('live');
  for (const path of ['chargeback', 'reversal', 'settle'])
    expectError(await t.api('POST', `/v1/test/orders/${randomUUID()}/${path}/`, {}, { key: live.api_key }), 403, 'Forbidden');
});

test('the whole store passes the ledger check at the end', async () => {
  const r = await checkLedger(t.db);
  assert.deepEqual(r.violations, []);
  assert.ok(r.journals > 10);
});
