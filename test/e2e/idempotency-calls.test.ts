// The Idempotency-Key of a route that calls the acquirer is claimed and committed before the call
// (store/platform/idempotency.ts claimRunning): held until its time, then taken over; answered,
// it replays; freed, the next request runs. The times are given, not waited for.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { claimKey, claimRunning, releaseKey, storeResponse } from '../../src/store/platform/idempotency.ts';
import type { ProjectId } from '../../src/domain/ids.ts';
import { keyedAttemptId, withOperationKey } from '../../src/services/payments/operation-key.ts';
import { payOrder } from '../helpers/pay.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

const claim = (key: string, hash = 'h1') => ({
  project_id: t.project.project_id,
  key,
  method: 'POST',
  path: '/v1/orders/x/refunds',
  request_hash: hash,
  now: new Date(),
});
const soon = () => new Date(Date.now() + 60_000);
const past = () => new Date(Date.now() - 1000);

test('a running claim holds its key against another claim, of either kind, until its time', async () => {
  assert.equal(await claimRunning(t.db, claim('k-hold'), soon()), true);
  const held = await claimRunning(t.db, claim('k-hold'), soon());
  assert.notEqual(held, true);
  assert.equal((held as { response_status: number | null }).response_status, null, 'still running: no answer to replay');
  // a request of the other kind (its work in one transaction) finds it running too
  const open = await t.db.begin();
  try {
    const other = await claimKey(open.q, claim('k-hold'));
    assert.notEqual(other, true);
  } finally {
    await open.rollback();
  }
});

test('a running claim past its time is taken over (its request died); an answered one replays', async () => {
  assert.equal(await claimRunning(t.db, claim('k-over'), past()), true);
  assert.equal(await claimRunning(t.db, claim('k-over'), soon()), true, 'taken over');
  await storeResponse(t.db, t.project.project_id as ProjectId, 'k-over', 201, { 'content-type': 'application/json' }, '{"id":1}');
  const stored = await claimRunning(t.db, claim('k-over'), soon());
  assert.notEqual(stored, true);
  assert.equal((stored as { response_status: number }).response_status, 201);
  assert.equal((stored as { response_body: string }).response_body, '{"id":1}');
  assert.equal((stored as { running_until: Date | null }).running_until, null);
});

test('a freed key runs the next request; an answered key is not freed', async () => {
  assert.equal(await claimRunning(t.db, claim('k-free'), soon()), true);
  await releaseKey(t.db, t.project.project_id as ProjectId, 'k-free');
  assert.equal(await claimRunning(t.db, claim('k-free'), soon()), true);
  await storeResponse(t.db, t.project.project_id as ProjectId, 'k-free', 422, {}, '{}');
  await releaseKey(t.db, t.project.project_id as ProjectId, 'k-free');
  assert.notEqual(await claimRunning(t.db, claim('k-free'), soon()), true, 'the answer stays');
});

test('a keyed refund whose answer was never kept: the retry answers its attempt, the acquirer is not asked again', async () => {
  const order = await payOrder(t);
  const key = { 'idempotency-key': 'refund-lost-answer' };
  const first = await t.api('POST', `/v1/orders/${order.id}/refunds/`, { amount: 300 }, { headers: key });
  assert.equal(first.status, 201, first.text);
  // the attempt's id comes from the key
  const id = withOperationKey(t.project.project_id, 'refund-lost-answer', () => keyedAttemptId('refund'));
  const [attempt] = await t.db.query<{ kind: string; status: string; result_order_id: string }>(
    'SELECT kind, status, result_order_id FROM acquirer_attempts WHERE id = $1',
    [id],
  );
  assert.deepEqual([attempt.kind, attempt.status, attempt.result_order_id], ['refund', 'succeeded', first.body.id]);
  // as if the process died after the refund but before its answer was kept for the key
  await t.db.query('DELETE FROM idempotency_keys WHERE project_id = $1 AND key = $2', [t.project.project_id, 'refund-lost-answer']);
  const calls = (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM acquirer_attempts'))[0].n;
  const retry = await t.api('POST', `/v1/orders/${order.id}/refunds/`, { amount: 300 }, { headers: key });
  assert.equal(retry.status, 201, retry.text);
  assert.equal(retry.body.id, first.body.id, 'the same refund order');
  assert.equal((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM acquirer_attempts'))[0].n, calls, 'no new attempt');
  const after = await t.api('GET', `/v1/orders/${order.id}/`);
  assert.equal(after.body.refunded_amount, 300, 'refunded once');
  // the answer is kept now: a third request replays it
  const again = await t.api('POST', `/v1/orders/${order.id}/refunds/`, { amount: 300 }, { headers: key });
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  assert.equal(again.text, retry.text);
});
