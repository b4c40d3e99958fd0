import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { followBrowser, startPayment } from '../helpers/cards.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';
import { sweepDueRecoveries } from '../../src/services/payments/attempts/inquiry.ts';
import { changePart } from '../../src/store/payments/attempts.ts';

// Recovery finds attempts in flight by their recover_at (docs/money.md "Recovery"): no job row
// is written per payment; the worker's sweep makes one for an attempt whose time has come. The
// background worker is off, so only this test sweeps.
let t: TestService;
before(async () => {
  t = await startTestService({
    env: { TENDER_WORKER: 'off' },
    config: { acquirer: { timeoutMs: 30_000, recoveryMs: 35_000, simSlowMs: 1000, simSettleMs: 0 } },
  });
});
after(async () => t?.close());

const recoveryJobs = (attemptId: string) => t.db.query("SELECT 1 FROM jobs WHERE kind = 'acquirer_recovery' AND ref_id = $1", [attemptId]);

test('an authorization whose answer was lost is swept once its recovery time has come, once, and its job reverses it', async () => {
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000000000001026', { key: shop.api_key });
  await followBrowser(p.redirect_url);
  const [auth] = await t.db.query<{ id: string; status: string }>(
    "SELECT id, status FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'authorization'",
    [p.txn.id],
  );
  assert.equal(auth.status, 'unknown');
  // recorded and answered (or not) with no job row: the applied 3-D Secure lookup left none either
  const [{ n }] = await t.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM jobs WHERE ref_id IN (SELECT id::text FROM acquirer_attempts WHERE transaction_id = $1)',
    [p.txn.id],
  );
  assert.equal(n, 0);

  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, shop.project_id), 0, 'not due before ACQUIRER_RECOVERY_MS');
  await advanceTestClock(t.svc.ctx, shop.project_id, 36_000);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, shop.project_id), 1);
  assert.equal((await recoveryJobs(auth.id)).length, 1);
  // swept: its recover_at moved on, so the next sweep passes it over even with its job gone
  await t.db.query("DELETE FROM jobs WHERE kind = 'acquirer_recovery' AND ref_id = $1", [auth.id]);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, shop.project_id), 0);
  await advanceTestClock(t.svc.ctx, shop.project_id, 36_000);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, shop.project_id), 1, 'asked again a recovery time later');

  // run-due-jobs sweeps and runs the job: the authorization is reversed, the payment declined
  const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', {}, { key: shop.api_key });
  assert.equal(ran.status, 200, ran.text);
  const order = (await t.api('GET', `/v1/orders/${p.order.id}/`, undefined, { key: shop.api_key })).body;
  assert.equal(order.transactions[0].status, 'declined');
  assert.equal(order.transactions[0].reason, 'processing_error');
  assert.equal((await recoveryJobs(auth.id)).length, 0, 'the job is done');
  await advanceTestClock(t.svc.ctx, shop.project_id, 36_000);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, shop.project_id), 0, 'settled: never swept again');
});

test('the sweep of one project leaves the attempts of another alone', async () => {
  const a = await t.newProject('test');
  const b = await t.newProject('test');
  const pb = await startPayment(t, '4000000000001026', { key: b.api_key });
  await followBrowser(pb.redirect_url);
  // both clocks past the recovery time; only a is swept
  await advanceTestClock(t.svc.ctx, a.project_id, 36_000);
  await advanceTestClock(t.svc.ctx, b.project_id, 36_000);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, a.project_id), 0);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, b.project_id), 1);
});

test('settling an attempt reads it by its key, however many attempts are in flight', async () => {
  // An outage leaves thousands of attempts in flight; each answer that then comes settles one. A
  // prepared statement keeps the generic plan made when it was first run, maybe while few were in
  // flight: that plan must find the one attempt by the primary key, not read the in-flight index
  // through (changePart, store/payments/attempts.ts).
  const shop = await t.newProject('test');
  const p = await startPayment(t, '4000000000001026', { key: shop.api_key });
  await followBrowser(p.redirect_url);
  const [auth] = await t.db.query<{ id: string }>("SELECT id FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'authorization'", [
    p.txn.id,
  ]);
  // attempts settled long ago, as a service in use has: the table is more than a page or two
  await t.db.query(
    `INSERT INTO acquirer_attempts (id, project_id, transaction_id, order_id, kind, amount, currency, status, idempotency_key, created, modified, settled)
     SELECT gen_random_uuid(), project_id, transaction_id, order_id, 'inquiry', 0, currency, 'succeeded', 'history-' || n, created, modified, modified
       FROM acquirer_attempts, generate_series(1, 2000) n WHERE id = $1`,
    [auth.id],
  );
  await t.db.query('ANALYZE acquirer_attempts');
  const settle = changePart(auth.id, { status: 'failed', settled: new Date(), modified: new Date() });
  const plan = await t.db.tx(async (q) => {
    await q.query("SET LOCAL plan_cache_mode = 'force_generic_plan'");
    await q.query(`PREPARE settle_plan (uuid, text) AS ${settle.sql.replace('$2::jsonb', '$2::text::jsonb')}`);
    const rows = await q.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE settle_plan('${auth.id}', '{}')`);
    await q.query('DEALLOCATE settle_plan');
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
  assert.match(plan, /Index Scan using acquirer_attempts_pkey/, plan);
  assert.doesNotMatch(plan, /acquirer_attempts_in_flight/, plan);

  // with a backlog in flight on the same payment, it settles that one attempt only
  await t.db.query(
    `INSERT INTO acquirer_attempts (id, project_id, transaction_id, order_id, kind, amount, currency, status, idempotency_key, created, modified, recover_at)
     SELECT gen_random_uuid(), project_id, transaction_id, order_id, 'inquiry', 0, currency, 'unknown', 'backlog-' || n, created, modified, recover_at
       FROM acquirer_attempts, generate_series(1, 300) n WHERE id = $1`,
    [auth.id],
  );
  await t.db.query(settle.sql, settle.params);
  await t.db.query(settle.sql, settle.params);
  const statuses = await t.db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM acquirer_attempts WHERE transaction_id = $1 GROUP BY status ORDER BY status',
    [p.txn.id],
  );
  assert.deepEqual(
    statuses.map((s) => [s.status, s.n]),
    [
      ['failed', 1],
      ['succeeded', 2001],
      ['unknown', 300],
    ],
  );
});
