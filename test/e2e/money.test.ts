// Pre-authorizations, captures, voids, refunds, chargebacks, fees, settlement, the ledger and
// Idempotency-Key, black-box through the API (authorizations come from the real card flow).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { runTender } from '../helpers/cli.ts';
import { checkLedger } from '../../src/services/ledger-check.ts';
import { findProject, updateProjectSettings } from '../../src/store/projects.ts';
import { canonicalJson } from '../../src/http/idempotency.ts';
import { liveConnectors } from '../../src/acquirer/connector.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';
import { runDueJobs } from '../../src/jobs/worker.ts';
import { pgliteDb, pgDb, type Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createHash } from 'node:crypto';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

type Key = { key?: string };
const txnPath = (o: any) => `/v1/orders/${o.id}/transactions/${o.transactions[0].id}`;
const capture = (o: any, k: Key = {}) => t.api('POST', `${txnPath(o)}/captures/`, undefined, k);
const voidAll = (o: any, k: Key = {}) => t.api('POST', `${txnPath(o)}/voids/`, undefined, k);
const voidPart = (o: any, amount: number, k: Key = {}) => t.api('POST', `${txnPath(o)}/voids/amount/`, { amount, description: 'one mug less' }, k);
const refund = (o: any, amount: number, k: Key = {}) => t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount, description: 'returned' }, k);
const get = async (id: string, k: Key = {}) => (await t.api('GET', `/v1/orders/${id}/`, undefined, k)).body;
const runJobs = (advance: string, key: string) => t.api('POST', '/v1/test/clock/run-due-jobs/', { advance }, { key });
const preauth = (mode: 'manual' | 'delayed' = 'manual', k: Key = {}) => payOrder(t, {}, { capture_mode: mode, key: k.key });
const sale = (k: Key = {}) => payOrder(t, {}, { key: k.key });

async function ledgerSound(projectId = t.project.project_id) {
  const r = await checkLedger(t.db, projectId);
  assert.deepEqual(r.violations, []);
}

/**
 * The background worker may claim a due job a moment before run-due-jobs does; what the job
 * does is then visible a moment later. Retries the assertion for a few seconds.
 */
async function eventually(fn: () => Promise<void>, ms = 8000) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function expectError(res: { status: number; body: any; text: string }, status: number, type: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.type, type, res.text);
  assert.equal(res.body.error.status, status);
}

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

// ---------- Fees and settlement ----------

test('fee and settlement figures are filled for every captured transaction, from the fee schedule', async () => {
  const s = await sale(); // 1995: 1.8 % = 35.91 -> 36, + 25
  const st = s.transactions[0];
  assert.deepEqual([st.fee_currency, st.fee_amount, st.settlement_currency, st.settlement_amount], ['EUR', 61, 'EUR', 1934]);
  const o = await preauth();
  await voidPart(o, 495);
  const c = (await capture(o)).body.transactions[0]; // 1500: 27 + 25
  assert.deepEqual([c.fee_currency, c.fee_amount, c.settlement_currency, c.settlement_amount], ['EUR', 52, 'EUR', 1448]);
  const r = (await refund(s, 300)).body.transactions[0];
  assert.deepEqual([r.fee_currency, r.fee_amount, r.settlement_currency, r.settlement_amount], ['EUR', 0, 'EUR', 300]);
  // the pre-authorization itself moves no money: its figures are zero, the capture carries them
  const orig = (await get(o.id)).transactions[0];
  assert.deepEqual([orig.fee_amount, orig.settlement_amount], [0, 0]);

  const p = await t.newProject('test');
  const row = (await findProject(t.db, p.project_id))!;
  const fees = { ...row.settings.fees, 'credit-card': { bps: 250, fixed: 10 }, refund: { bps: 0, fixed: 15 }, chargeback: { bps: 0, fixed: 1500 } };
  await updateProjectSettings(t.db, p.project_id, { ...row.settings, fees });
  const s2 = await sale({ key: p.api_key }); // 1995 * 2.5 % = 49.875 -> 50, + 10
  assert.deepEqual([s2.transactions[0].fee_amount, s2.transactions[0].settlement_amount], [60, 1935]);
  const r2 = (await refund(s2, 1000, { key: p.api_key })).body.transactions[0];
  assert.deepEqual([r2.fee_amount, r2.settlement_amount], [15, 1015], 'a debit costs the merchant amount + fee');
  const cb = (await t.api('POST', `/v1/test/orders/${s2.id}/chargeback/`, { amount: 995 }, { key: p.api_key })).body.transactions[0];
  assert.deepEqual([cb.fee_amount, cb.settlement_amount], [1500, 2495]);
  const missing = await t.db.query(
    `SELECT t.id FROM transactions t JOIN orders o ON o.id = t.order_id
     WHERE t.project_id = ANY($1::uuid[]) AND o.kind <> 'void' AND t.status IN ('accepted', 'completed')
       AND (t.fee_amount IS NULL OR t.settlement_amount IS NULL OR t.fee_currency IS NULL OR t.settlement_currency IS NULL)`,
    [[t.project.project_id, p.project_id]],
  );
  assert.deepEqual(missing, []);
  await ledgerSound(p.project_id);
});

test('settle (test projects) settles the order and the orders created from it; a settled sale is completed', async () => {
  const s = await sale();
  const r = (await refund(s, 200)).body;
  const res = await t.api('POST', `/v1/test/orders/${s.id}/settle/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.id, s.id);
  assert.equal(res.body.transactions[0].status, 'completed');
  const rows = await t.db.query<{ order_id: string; settled: Date | null }>('SELECT order_id, settled FROM transactions WHERE order_id = ANY($1::uuid[])', [[s.id, r.id]]);
  assert.equal(rows.length, 2);
  assert.ok(rows.every((x) => x.settled), 'both settled');
  const journals = await t.db.query<{ n: number }>("SELECT count(DISTINCT journal_id)::int AS n FROM ledger_entries WHERE kind = 'settlement' AND order_id = ANY($1::uuid[])", [[s.id, r.id]]);
  assert.equal(journals[0].n, 2);
  // settling again moves nothing more
  const legs = async () => (await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'settlement' AND order_id = ANY($1::uuid[])", [[s.id, r.id]]))[0].n;
  const before = await legs();
  await t.api('POST', `/v1/test/orders/${s.id}/settle/`);
  assert.equal(await legs(), before);
  // a refund after settlement still works
  assert.equal((await refund(s, 100)).status, 201);
  await ledgerSound();
});

test('live projects settle by the daily settlement job', async () => {
  const live = await t.newProject('live');
  liveConnectors.forProject = (p) => (p.id === live.project_id ? simulator : undefined);
  try {
    const s = await payOrder(t, {}, { key: live.api_key });
    assert.equal(s.transactions[0].status, 'accepted');
    const [job] = await t.db.query<{ run_at: Date }>("SELECT run_at FROM jobs WHERE kind = 'settlement' AND ref_id = $1", [live.project_id]);
    assert.ok(job, 'the next settlement run is scheduled');
    const runAt = new Date(job.run_at);
    assert.equal(runAt.getUTCHours() + runAt.getUTCMinutes() + runAt.getUTCSeconds(), 0, 'at 00:00 UTC');
    assert.ok(runAt.getTime() > Date.now() && runAt.getTime() <= Date.now() + 86_400_000);
    // the day passes
    await t.db.query("UPDATE jobs SET run_at = now() WHERE kind = 'settlement' AND ref_id = $1", [live.project_id]);
    await runDueJobs(t.svc.ctx, live.project_id);
    await eventually(async () => assert.equal((await get(s.id, { key: live.api_key })).transactions[0].status, 'completed'));
    const [row] = await t.db.query('SELECT settled FROM transactions WHERE id = $1', [s.transactions[0].id]);
    assert.ok(row.settled);
    await ledgerSound(live.project_id);
  } finally {
    liveConnectors.forProject = undefined;
  }
});

// ---------- Ledger ----------

test('every movement is journaled, balanced, in the same transaction', async () => {
  const o = await preauth();
  const txn = o.transactions[0].id;
  const kinds = async () =>
    (await t.db.query<{ kind: string }>('SELECT DISTINCT kind FROM ledger_entries WHERE payment_transaction_id = $1', [txn])).map((r) => r.kind).sort();
  assert.deepEqual(await kinds(), ['hold']);
  await voidPart(o, 100);
  await capture(o);
  await refund(o, 200);
  await t.api('POST', `/v1/test/orders/${o.id}/chargeback/`, { amount: 300 });
  await t.api('POST', `/v1/test/orders/${o.id}/reversal/`, { amount: 100 });
  await t.api('POST', `/v1/test/orders/${o.id}/settle/`);
  assert.deepEqual(await kinds(), ['capture', 'chargeback', 'fee', 'hold', 'refund', 'reversal', 'settlement', 'void']);
  const sums = await t.db.query<{ s: number }>('SELECT sum(amount)::bigint AS s FROM ledger_entries WHERE payment_transaction_id = $1 GROUP BY journal_id', [txn]);
  assert.ok(sums.length >= 7);
  assert.ok(sums.every((r) => Number(r.s) === 0));
  await ledgerSound();
});

test('the database refuses a journal that does not balance', async () => {
  const s = await sale();
  await assert.rejects(
    t.db.tx(async (q) => {
      await q.query(
        `INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
         VALUES ($1, $2, $3, $4, $4, 'bank', 'EUR', 5, 'fee', now())`,
        [t.project.project_id, randomUUID(), s.id, s.transactions[0].id],
      );
    }),
    (err: any) => err.code === '23514',
  );
});

test('the ledger check names each broken invariant', async () => {
  const p = await t.newProject('test');
  const s = await preauth('manual', { key: p.api_key });
  assert.deepEqual((await checkLedger(t.db, p.project_id)).violations, []);
  // tamper: a void no order records, and a refunded_amount out of step
  await t.db.query('UPDATE transactions SET voided_amount = 5 WHERE id = $1', [s.transactions[0].id]);
  await t.db.query('UPDATE orders SET refunded_amount = 7 WHERE id = $1', [s.id]);
  const r = await checkLedger(t.db, p.project_id);
  assert.equal(r.ok, false);
  assert.ok(r.violations.some((v) => v.includes(s.id) && v.includes(s.transactions[0].id) && v.includes('void orders add up to 0, voided_amount is 5')), r.violations.join('\n'));
  assert.ok(r.violations.some((v) => v.includes("refunded_amount 7")), r.violations.join('\n'));
  assert.ok(r.violations.some((v) => v.includes('the ledger holds 1995 for it, the open authorization is 1990')), r.violations.join('\n'));
  await t.db.query('UPDATE transactions SET voided_amount = 0 WHERE id = $1', [s.transactions[0].id]);
  await t.db.query('UPDATE orders SET refunded_amount = 0 WHERE id = $1', [s.id]);
  assert.deepEqual((await checkLedger(t.db, p.project_id)).violations, []);
});

test('`tender ledger check` exits 0 on a sound store and 1 naming each violation', async () => {
  const store = await cliStore();
  try {
    const ok = await tender(['ledger', 'check'], store.env);
    assert.equal(ok.code, 0, ok.stderr + ok.stdout);
    assert.match(ok.stdout, /ledger check passed/);
    await store.db.query('UPDATE transactions SET captured_amount = 3, refunded_amount = 2 WHERE id = $1', [store.txnId]);
    const bad = await tender(['ledger', 'check'], store.env);
    assert.equal(bad.code, 1, bad.stdout);
    assert.match(bad.stdout, new RegExp(`order ${store.orderId} transaction ${store.txnId}`));
    assert.match(bad.stdout, /refund orders add up to 0, refunded_amount is 2/);
    const json = await tender(['ledger', 'check', '--json'], store.env);
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stdout).ok, false);
  } finally {
    await store.close();
  }
});

// ---------- Idempotency-Key ----------

test('a retried POST with the same Idempotency-Key answers the first response byte for byte', async () => {
  const key = `order-${randomUUID()}`;
  const body = { currency: 'EUR', amount: 1234, description: 'idempotent', transactions: [{ payment_method: 'credit-card' }] };
  const first = await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201, first.text);
  const second = await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } });
  assert.equal(second.status, 201);
  assert.equal(second.text, first.text, 'byte for byte');
  assert.equal(second.headers.get('content-type'), first.headers.get('content-type'));
  assert.equal(second.headers.get('idempotent-replayed'), 'true');
  // the same JSON in another key order, and the path without its slash, is the same request
  const reordered = await t.api('POST', '/v1/orders', { transactions: body.transactions, amount: 1234, description: 'idempotent', currency: 'EUR' }, { headers: { 'idempotency-key': key } });
  assert.equal(reordered.text, first.text);
  const count = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE description = 'idempotent' AND project_id = $1", [t.project.project_id]);
  assert.equal(count[0].n, 1, 'one order created');
});

test('the same Idempotency-Key with a different body is a 422 IdempotencyError; other projects have their own keys', async () => {
  const key = randomUUID();
  const first = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 }, { headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201);
  const diff = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 101 }, { headers: { 'idempotency-key': key } });
  expectError(diff, 422, 'IdempotencyError');
  const otherPath = await t.api('POST', `/v1/orders/${first.body.id}/refunds/`, { currency: 'EUR', amount: 100 }, { headers: { 'idempotency-key': key } });
  expectError(otherPath, 422, 'IdempotencyError');
  const other = await t.newProject('test');
  const theirs = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 101 }, { key: other.api_key, headers: { 'idempotency-key': key } });
  assert.equal(theirs.status, 201);
  assert.notEqual(theirs.body.id, first.body.id);
});

test('a retried capture or refund with its Idempotency-Key moves the money once and answers the same', async () => {
  const o = await preauth();
  const k = { headers: { 'idempotency-key': `cap-${o.id}` } };
  const first = await t.api('POST', `${txnPath(o)}/captures/`, undefined, k);
  assert.equal(first.status, 201);
  const again = await t.api('POST', `${txnPath(o)}/captures/`, undefined, k);
  assert.equal(again.status, 201, 'the stored answer, not a 409');
  assert.equal(again.text, first.text);
  const rk = { headers: { 'idempotency-key': `ref-${o.id}` } };
  const r1 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 700 }, rk);
  const r2 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 700 }, rk);
  assert.equal(r1.status, 201);
  assert.equal(r2.text, r1.text);
  const after = await get(o.id);
  assert.equal(after.refunded_amount, 700);
  assert.equal(after.related_orders.length, 2);
  // errors are answers too: a refused request replays its refusal
  const ek = { headers: { 'idempotency-key': `err-${o.id}` } };
  const e1 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 99999 }, ek);
  expectError(e1, 422, 'RefundError');
  const e2 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 99999 }, ek);
  assert.equal(e2.status, 422);
  assert.equal(e2.text, e1.text);
});

test('a request still in flight with the same key is a 409 IdempotencyError', async () => {
  const key = randomUUID();
  const body = { currency: 'EUR', amount: 1 };
  // the first request holds the key (claimed, no response yet), as while its handler runs
  const hash = createHash('sha256').update(`POST /v1/orders\n${canonicalJson(body)}`).digest('hex');
  await t.db.query('INSERT INTO idempotency_keys (project_id, key, method, path, request_hash, created) VALUES ($1, $2, $3, $4, $5, now())', [
    t.project.project_id, key, 'POST', '/v1/orders', hash,
  ]);
  expectError(await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } }), 409, 'IdempotencyError');
});

test('Idempotency-Key is validated, also in its quoted form', async () => {
  expectError(await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 1 }, { headers: { 'idempotency-key': 'x'.repeat(256) } }), 400, 'ValidationError');
  const key = randomUUID();
  const a = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 2 }, { headers: { 'idempotency-key': `"${key}"` } });
  const b = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 2 }, { headers: { 'idempotency-key': key } });
  assert.equal(a.status, 201);
  assert.equal(b.text, a.text);
});

test('keys are kept 24 h, then the cleanup job forgets them', async () => {
  const p = await t.newProject('test');
  const key = randomUUID();
  const first = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 5 }, { key: p.api_key, headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201);
  await runJobs('PT23H', p.api_key);
  expectError(await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 6 }, { key: p.api_key, headers: { 'idempotency-key': key } }), 422, 'IdempotencyError');
  await runJobs('PT2H', p.api_key);
  await eventually(async () => {
    const rows = await t.db.query('SELECT 1 FROM idempotency_keys WHERE project_id = $1 AND key = $2', [p.project_id, key]);
    assert.equal(rows.length, 0, 'deleted by idempotency_cleanup');
  });
  const fresh = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 6 }, { key: p.api_key, headers: { 'idempotency-key': key } });
  assert.equal(fresh.status, 201);
  assert.notEqual(fresh.body.id, first.body.id);
});

test('the whole store passes the ledger check at the end', async () => {
  const r = await checkLedger(t.db);
  assert.deepEqual(r.violations, []);
  assert.ok(r.journals > 10);
});

// ---------- helpers for the CLI test ----------

interface CliStore {
  db: Db;
  env: Record<string, string>;
  orderId: string;
  txnId: string;
  close(): Promise<void>;
}

/** A store of its own with one captured sale booked by the service code, for the CLI to read. */
async function cliStore(): Promise<CliStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tender-ledger-'));
  const url = process.env.DATABASE_URL;
  let db: Db;
  let env: Record<string, string>;
  let drop = async () => {};
  if (url) {
    const schema = `l_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    db = pgDb({ url, schema, max: 2 });
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env = { DATABASE_URL: u.toString() };
    drop = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    };
  } else {
    db = await pgliteDb(join(dir, 'data'));
    env = { TENDER_DATA_DIR: join(dir, 'data'), DATABASE_URL: '' };
  }
  await migrate(db);
  const projectId = randomUUID();
  const merchantId = randomUUID();
  const orderId = randomUUID();
  const txnId = randomUUID();
  await db.query("INSERT INTO merchants (id, name) VALUES ($1, 'm')", [merchantId]);
  await db.query("INSERT INTO projects (id, merchant_id, name, mode) VALUES ($1, $2, 'p', 'test')", [projectId, merchantId]);
  await db.query("INSERT INTO orders (id, project_id, merchant_id, status, currency, amount, created, modified) VALUES ($1, $2, $3, 'completed', 'EUR', 1000, now(), now())", [
    orderId, projectId, merchantId,
  ]);
  await db.query(
    `INSERT INTO transactions (id, project_id, order_id, status, payment_method, currency, amount, credit_debit, expiration_period, created, modified)
     VALUES ($1, $2, $3, 'accepted', 'credit-card', 'EUR', 1000, 'credit', 'PT30M', now(), now())`,
    [txnId, projectId, orderId],
  );
  const { onAuthorized } = await import('../../src/services/money.ts');
  await db.tx(async (q) => {
    const [txn] = await q.query('SELECT * FROM transactions WHERE id = $1', [txnId]);
    const [project] = await q.query('SELECT * FROM projects WHERE id = $1', [projectId]);
    await onAuthorized(q, project as any, txn as any, new Date());
  });
  if (!url) await db.close(); // PGlite: one process per data directory; the CLI opens it next
  const reopen = async (): Promise<Db> => (url ? db : pgliteDb(join(dir, 'data')));
  const handle: CliStore = {
    db: {
      kind: db.kind,
      // each statement on a short-lived handle, so the CLI can open the PGlite directory in between
      query: async (sql: string, params?: unknown[]) => {
        const d = await reopen();
        try {
          return await d.query(sql, params);
        } finally {
          if (!url) await d.close();
        }
      },
    } as unknown as Db,
    env,
    orderId,
    txnId,
    async close() {
      if (url) await db.close();
      await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}


function tender(args: string[], extra: Record<string, string>) {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', TENDER_WORKER: 'off', TENDER_MASTER_KEY: randomBytes(32).toString('hex'), ...extra };
  if (!env.DATABASE_URL) delete env.DATABASE_URL;
  return runTender(args, env);
}
