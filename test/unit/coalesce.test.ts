import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batcher, coalescer } from '../../src/store/db/coalesce.ts';
import { DomainError } from '../../src/domain/errors.ts';

/** A run() whose batches finish only when told, recording each batch and the peak running at once. */
function gated(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const gates: Array<() => void> = [];
  let running = 0;
  let peak = 0;
  const run = (items: number[]) => {
    batches.push(items);
    running++;
    peak = Math.max(peak, running);
    return new Promise<void>((resolve, reject) =>
      gates.push(() => {
        running--;
        if (items.some(fail)) reject(new Error(`bad ${items.filter(fail).join(',')}`));
        else resolve();
      }),
    );
  };
  /** Lets every batch started so far finish, then lets the follow-ups start. */
  const release = async () => {
    gates.splice(0).forEach((g) => g());
    await new Promise((r) => setImmediate(r));
  };
  return { run, batches, release, peak: () => peak };
}

test('a lone item runs at once, alone', async () => {
  const g = gated();
  const write = coalescer(g.run, { maxInFlight: 2, maxBatch: 10 });
  const done = write(1);
  assert.deepEqual(g.batches, [[1]]);
  await g.release();
  await done;
});

test('items arriving while the batches in flight run go together, in arrival order', async () => {
  const g = gated();
  const write = coalescer(g.run, { maxInFlight: 2, maxBatch: 10 });
  const all = [1, 2, 3, 4, 5, 6].map((i) => write(i));
  assert.deepEqual(g.batches, [[1], [2]]);
  await g.release();
  assert.deepEqual(g.batches, [[1], [2], [3, 4, 5, 6]]);
  await g.release();
  await Promise.all(all);
  assert.equal(g.peak(), 2);
});

test('a batch holds at most maxBatch items; never more than maxInFlight batches run', async () => {
  const g = gated();
  const write = coalescer(g.run, { maxInFlight: 1, maxBatch: 3 });
  const all = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => write(i));
  for (let i = 0; i < 4; i++) await g.release();
  await Promise.all(all);
  assert.deepEqual(g.batches, [[1], [2, 3, 4], [5, 6, 7], [8]]);
  assert.equal(g.peak(), 1);
});

test('when a batch fails, its items run again alone: only the bad one fails', async () => {
  const g = gated((i) => i === 4);
  const write = coalescer(g.run, { maxInFlight: 1, maxBatch: 10 });
  const results = [1, 2, 3, 4, 5].map((i) =>
    write(i).then(
      () => 'ok',
      (e: Error) => e.message,
    ),
  );
  for (let i = 0; i < 6; i++) await g.release(); // [1]; [2,3,4,5] fails; [2], [3], [4], [5] alone
  assert.deepEqual(await Promise.all(results), ['ok', 'ok', 'ok', 'bad 4', 'ok']);
  assert.deepEqual(g.batches, [[1], [2, 3, 4, 5], [2], [3], [4], [5]]);
  assert.equal(g.peak(), 1);
});

test('a failing item alone gets its own error, and the queue goes on', async () => {
  const g = gated((i) => i === 1);
  const write = coalescer(g.run, { maxInFlight: 1, maxBatch: 10 });
  const first = write(1).then(
    () => 'ok',
    (e: Error) => e.message,
  );
  const second = write(2);
  await g.release();
  assert.equal(await first, 'bad 1');
  await g.release();
  await second;
  assert.deepEqual(g.batches, [[1], [2]]);
});

test('when a batch fails because the connection was lost, its items are not run again: each gets the 503', async () => {
  const batches: number[][] = [];
  let first = true;
  const run = async (items: number[]) => {
    batches.push(items);
    if (first) return void (first = false); // [1] goes alone while the others queue
    throw new DomainError('ServiceUnavailable', 'the database is temporarily unavailable; retry later');
  };
  const write = coalescer(run, { maxInFlight: 1, maxBatch: 10 });
  const results = [1, 2, 3].map((i) =>
    write(i).then(
      () => 'ok',
      (e: DomainError) => e.kind,
    ),
  );
  assert.deepEqual(await Promise.all(results), ['ok', 'unavailable', 'unavailable']);
  assert.deepEqual(batches, [[1], [2, 3]], 'no item of the lost batch ran again');
});

// ---------- batcher: answers per item, what starts together goes together ----------

/** A run() for batcher that answers each item with item * 10, or fails a batch holding a bad item. */
function answering(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const run = async (items: number[]) => {
    batches.push(items);
    await new Promise((r) => setTimeout(r, 5));
    if (items.some(fail)) throw new Error(`bad ${items.filter(fail).join(',')}`);
    return items.map((i) => i * 10);
  };
  return { run, batches };
}

test('batcher: items started in the same turn go out as one batch, and each gets its own answer', async () => {
  const a = answering();
  const ask = batcher(a.run, { maxInFlight: 2, maxBatch: 10 });
  const answers = await Promise.all([1, 2, 3].map((i) => ask(i)));
  assert.deepEqual(answers, [10, 20, 30]);
  assert.deepEqual(a.batches, [[1, 2, 3]]);
});

test('batcher: items arriving while batches are in flight wait and go together; at most maxBatch each', async () => {
  const a = answering();
  const ask = batcher(a.run, { maxInFlight: 1, maxBatch: 2 });
  const first = ask(1);
  await new Promise((r) => setImmediate(r)); // the first batch is under way
  const later = [2, 3, 4].map((i) => ask(i));
  assert.deepEqual(await Promise.all([first, ...later]), [10, 20, 30, 40]);
  assert.deepEqual(a.batches, [[1], [2, 3], [4]]);
});

test('batcher: a failed batch is retried item by item, so only the bad item fails', async () => {
  const a = answering((i) => i === 2);
  const ask = batcher(a.run, { maxInFlight: 2, maxBatch: 10 });
  const results = await Promise.allSettled([1, 2, 3].map((i) => ask(i)));
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  assert.deepEqual(
    results.map((r) => (r.status === 'fulfilled' ? r.value : undefined)),
    [10, undefined, 30],
  );
  assert.deepEqual(a.batches, [[1, 2, 3], [1], [2], [3]]);
});

test('batcher: a batch lost with the connection is not retried item by item; each caller gets the 503', async () => {
  const batches: number[][] = [];
  const ask = batcher(
    async (items: number[]) => {
      batches.push(items);
      throw new DomainError('ServiceUnavailable', 'the database is temporarily unavailable; retry later');
    },
    { maxInFlight: 1, maxBatch: 10 },
  );
  const results = await Promise.all(
    [1, 2, 3].map((i) =>
      ask(i).then(
        () => 'ok',
        (e: DomainError) => e.kind,
      ),
    ),
  );
  assert.deepEqual(results, ['unavailable', 'unavailable', 'unavailable']);
  assert.deepEqual(batches, [[1, 2, 3]], 'no item ran again');
});
