// The API-key cache: a key's project is kept in memory, but a change made by another process
// (the CLI on PostgreSQL, a second node) reaches this one through NOTIFY tender_projects, long
// before the cache's TTL, which is set to ten minutes here so only the notification can explain it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestService, validOrder, type TestService } from '../helpers/service.ts';
import { rotateKey } from '../../src/services/platform/tenancy.ts';
import { advanceClock } from '../../src/store/platform/projects.ts';

let t: TestService;
before(async () => {
  t = await startTestService({ env: { API_KEY_CACHE_MS: '600000' } });
});
after(async () => t?.close());

/** Another process's view: the same store, no cache of this service's to clear. */
const elsewhere = () => ({ ...t.svc.ctx, keyCache: undefined });

async function eventually(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await sleep(30);
  }
  assert.fail(`${what} within 3 s`);
}

test('a key rotated by another process stops working here without waiting for the TTL', async () => {
  const p = await t.newProject();
  const created = await t.api('POST', '/v1/orders/', validOrder(), { key: p.api_key });
  assert.equal(created.status, 201, 'the key is now cached');
  const rotated = await rotateKey(elsewhere(), p.project_id);
  await eventually(
    async () => (await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: p.api_key })).status === 401,
    'the old key is refused',
  );
  const fresh = await t.api('GET', `/v1/orders/${created.body.id}/`, undefined, { key: rotated.api_key });
  assert.equal(fresh.status, 200);
});

test("a project change made elsewhere (the test clock) reaches this process's cached project", async () => {
  const p = await t.newProject();
  const clock = () => t.api('POST', '/v1/test/clock/run-due-jobs/', {}, { key: p.api_key });
  assert.equal((await clock()).body.offset_ms, 0);
  await advanceClock(t.db, p.project_id, 3_600_000);
  await eventually(async () => (await clock()).body.offset_ms === 3_600_000, 'the advanced clock is seen');
});

test('an unknown key is never cached: a project created afterwards with any key is found at once', async () => {
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: 'test_nope' })).status, 401);
  const p = await t.newProject();
  assert.equal((await t.api('GET', '/v1/merchants/self/projects/self/', undefined, { key: p.api_key })).status, 200);
});

test('a request that changes its own project object does not change the cached one', async () => {
  const p = await t.newProject();
  // run-due-jobs with advance sets req.project.clock_offset_ms; the next request must read the store's value, not a shared object
  const advanced = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT1M' }, { key: p.api_key });
  assert.equal(advanced.body.offset_ms, 60_000);
  const again = await t.api('POST', '/v1/test/clock/run-due-jobs/', {}, { key: p.api_key });
  assert.equal(again.body.offset_ms, 60_000);
});
