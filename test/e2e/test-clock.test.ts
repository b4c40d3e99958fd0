// run-due-jobs of the test clock: when it answers, every job due on the project's clock has run,
// including one the background worker happened to be running at that moment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { advanceClock } from '../../src/store/platform/projects.ts';
import { claimDue, finishJob } from '../../src/store/platform/jobs.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';

let t: TestService;
before(async () => {
  t = await startTestService({ env: { TENDER_WORKER: 'off' } });
});
after(async () => t?.close());

/** A card order whose expiry job is due on the project's clock (moved on 31 minutes). */
async function orderWithDueExpiry() {
  const order = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'credit-card' }] }));
  assert.equal(order.status, 201, order.text);
  await advanceClock(t.db, t.project.project_id, 31 * 60_000);
  t.svc.ctx.keyCache?.clear();
  return order.body;
}

test('run-due-jobs answers only after a due job held by another runner is done', async () => {
  await orderWithDueExpiry();
  const held = await claimDue(t.db, 10, 60_000, t.project.project_id); // "the worker" holds it
  assert.equal(held.length, 1);

  let released = false;
  const answered = t.api('POST', '/v1/test/clock/run-due-jobs/', {}).then((res) => ({ res, released }));
  await new Promise((r) => setTimeout(r, 300));
  released = true;
  await finishJob(t.db, held[0]);
  const { res, released: wasReleased } = await answered;
  assert.equal(res.status, 200, res.text);
  assert.equal(wasReleased, true, 'run-due-jobs answered while another runner still held a due job');
});

test('run-due-jobs runs what is due and answers at once when no one else holds a job', async () => {
  const order = await t.api('POST', '/v1/orders/', validOrder({ transactions: [{ payment_method: 'credit-card' }] }));
  const res = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT31M' });
  assert.equal(res.status, 200, res.text);
  assert.ok(res.body.jobs_run >= 1);
  assert.equal((await t.api('GET', `/v1/orders/${order.body.id}/`)).body.status, 'expired');
});

test('run-due-jobs waits for a due job that another runner is claiming right now (row locked, lease not yet committed)', async () => {
  const order = await orderWithDueExpiry();
  let answered = false;
  let call: Promise<Awaited<ReturnType<TestService['api']>>> | undefined;
  const claimFailed = new Error('the other runner gives up its claim');
  // "the worker" claims the job in a transaction it has not committed: elsewhere the row reads
  // unleased, and a claim with SKIP LOCKED passes it over
  const other = t.db.tx(async (q) => {
    assert.equal((await claimDue(q, 10, 60_000, t.project.project_id)).length, 1);
    call = t.api('POST', '/v1/test/clock/run-due-jobs/', {}).then((res) => ((answered = true), res));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(answered, false, 'run-due-jobs answered while another runner was claiming a due job');
    throw claimFailed;
  });
  await assert.rejects(other, (err) => err === claimFailed);
  const res = await call!;
  assert.equal(res.status, 200, res.text);
  assert.equal((await t.api('GET', `/v1/orders/${order.id}/`)).body.status, 'expired');
});

test("a clock moved ahead: run-due-jobs, the portal's test banner and the API reference say so and by how much", async () => {
  const shop = await t.newProject('test');
  const key = { key: shop.api_key };
  const user = await portalUser(t, shop.merchant_id);
  const portal = new PortalClient(t);
  assert.equal((await portal.signIn(user.email, user.password)).status, 303);
  const home = `/projects/${shop.project_id}/`;
  const before = (await portal.get(home)).text;
  assert.match(before, /data-test-mode/);
  assert.doesNotMatch(before, /data-clock-ahead/, 'a clock at real time is not mentioned');
  const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT31M' }, key);
  assert.equal(ran.status, 200, ran.text);
  assert.equal(ran.body.offset_ms, 31 * 60_000);
  assert.equal(ran.body.ahead, 'PT31M');
  const order = await t.api('POST', '/v1/orders/', validOrder(), key);
  const dated = new Date(order.body.created).getTime() - Date.now();
  assert.ok(dated > 30 * 60_000 && dated <= 31 * 60_000, `created ${order.body.created}`);
  const banner = /<span data-clock-ahead="1860000">([^<]+)<\/span>/.exec((await portal.get(home)).text);
  assert.ok(banner, 'the banner tells the clock ahead');
  assert.match(
    banner[1],
    /31 minutes ahead of real time \(PT31M, .*only goes forward\): new orders are dated \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
  );
  assert.ok(banner[1].includes(order.body.created.slice(0, 10)), banner[1]);
  const doc = (await t.api('GET', '/openapi.json', undefined, { key: null })).body;
  const op = doc.paths['/v1/test/clock/run-due-jobs/'].post;
  assert.match(op.description, /only moves forward/);
  assert.match(op.description, /dated ahead by `offset_ms`/);
  const answer = op.responses['200'].content['application/json'].schema;
  assert.match(JSON.stringify(answer), /ISO 8601 duration/);
});
