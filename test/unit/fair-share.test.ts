// The shares of shared work (issue 28): searches wait in line for their project's slot and search
// time, reports are refused at once beyond theirs, and the refusal brake's counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Ctx } from '../../src/services/platform/context.ts';
import type { ProjectId } from '../../src/domain/ids.ts';
import { noteActive, takeReportShare, takeSearchShare } from '../../src/services/platform/fair-share.ts';
import { RefusalCounts } from '../../src/http/refusal-brake.ts';

type Limits = Ctx['config']['limits'];
const ctxWith = (limits: Partial<Limits>) =>
  ({
    db: {},
    config: { limits: { searchesPerProject: 1, reportsPerProject: 1, searchWaitMs: 2000, searchMsPerSecond: 0, ...limits } },
  }) as unknown as Ctx;
const P1 = 'p1' as ProjectId;
const P2 = 'p2' as ProjectId;
const tooMany = (err: { kind?: string; type?: string; byLimit?: boolean }) =>
  err.kind === 'rate_limited' && err.type === 'RateLimitExceeded' && err.byLimit === true;
const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
};

test("a search over its project's share waits in line and runs when a slot is handed on; other projects do not wait", async () => {
  const ctx = ctxWith({});
  const first = await takeSearchShare(ctx, P1);
  const second = takeSearchShare(ctx, P1);
  const third = takeSearchShare(ctx, P1);
  assert.equal(await settled(second), false, 'the second waits');
  const other = await takeSearchShare(ctx, P2); // another project's share is its own
  first();
  first(); // releasing twice hands on one slot only
  const secondRelease = await second;
  assert.equal(await settled(third), false, 'the third still waits: first come, first served');
  secondRelease();
  (await third)();
  other();
  // all free again: a search runs at once
  (await takeSearchShare(ctx, P1))();
});

test('a search that waited searchWaitMs for its slot, or whose client went away, is refused with 429 and leaves the line', async () => {
  const ctx = ctxWith({ searchWaitMs: 20 });
  const held = await takeSearchShare(ctx, P1);
  await assert.rejects(takeSearchShare(ctx, P1), tooMany);
  const ac = new AbortController();
  const gone = takeSearchShare(ctxWith({}), P1); // another node's state: not in this line
  (await gone)();
  const waiting = takeSearchShare(ctx, P1, ac.signal);
  ac.abort();
  await assert.rejects(waiting, tooMany);
  held();
  // nobody is left in line: the slot is free
  (await takeSearchShare(ctx, P1))();
});

test('beside another project at work, a project that used its search time waits for it or, beyond searchWaitMs, gets 429 with the Retry-After it needs', async () => {
  // 1 ms of search time a second, a burst of 10 ms
  const ctx = ctxWith({ searchMsPerSecond: 1, searchesPerProject: 0 });
  const release = await takeSearchShare(ctx, P1);
  await new Promise((r) => setTimeout(r, 40)); // a search of 40 ms: 30 ms over, at most a burst (10 ms) owed: 10 s to earn back
  release();
  // alone on the node, the project searches on (the budget is work-conserving)
  noteActive(ctx, P1);
  (await takeSearchShare(ctx, P1))();
  noteActive(ctx, P2); // another project at work
  await assert.rejects(takeSearchShare(ctx, P1), (err: { kind?: string; retryAfter?: number; message?: string }) => {
    assert.ok(tooMany(err as never));
    assert.ok(err.retryAfter! >= 5 && err.retryAfter! <= 11, String(err.retryAfter));
    assert.match(err.message!, /search time/);
    return true;
  });
  // another project's budget is its own
  (await takeSearchShare(ctx, P2))();
});

test('a report beyond its project share is refused at once (429, Retry-After 1)', () => {
  const ctx = ctxWith({});
  const held = takeReportShare(ctx, P1);
  assert.throws(
    () => takeReportShare(ctx, P1),
    (err: { retryAfter?: number }) => tooMany(err as never) && err.retryAfter === 1,
  );
  takeReportShare(ctx, P2)();
  held();
  takeReportShare(ctx, P1)();
  assert.doesNotThrow(() => takeReportShare(ctxWith({ reportsPerProject: 0 }), P1));
});

test('refusal counts: over the limit in the current or the last second, per key; quiet keys are forgotten', () => {
  let now = 1_000_000;
  const counts = new RefusalCounts(() => now);
  for (let i = 0; i < 3; i++) counts.add('a');
  assert.equal(counts.over('a', 3), false, 'three is not more than three');
  counts.add('a');
  assert.equal(counts.over('a', 3), true);
  assert.equal(counts.over('b', 3), false, 'another key is not slowed');
  now += 1000; // the next second still remembers the last
  assert.equal(counts.over('a', 3), true);
  now += 1000; // two seconds on: quiet
  assert.equal(counts.over('a', 3), false);
  assert.equal(counts.size, 0, 'a key with nothing counted in two seconds is forgotten');
});
