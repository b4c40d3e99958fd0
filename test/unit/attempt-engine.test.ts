import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { pgliteDb } from '../../src/store/db/lite.ts';
import { applyOnce, runAttempt, type Operation } from '../../src/services/payments/attempts/runner.ts';
import { HeldTransactionError } from '../../src/services/payments/attempts/call.ts';
import type { Ctx } from '../../src/services/platform/context.ts';

// The attempt engine (src/services/payments/attempts/runner.ts): every kind is an Operation that
// runAttempt drives record -> send -> apply, never inside a transaction the caller holds.

const db = await pgliteDb('memory://');
after(() => db.close());
const ctx = { db } as unknown as Ctx;

/** An operation that notes each step it is asked for, and whether a transaction was held then. */
function noting(steps: string[], record: () => Promise<{ recorded: number } | { done: string }>): Operation<number, string, string> {
  return {
    kind: 'capture',
    record: async () => (steps.push('record'), record()),
    send: async (n) => (steps.push(`send ${n} held=${db.holding()}`), `answer ${n}`),
    apply: async (n, reply) => (steps.push(`apply ${n} ${reply}`), 'applied'),
  };
}

test('runAttempt records, then sends with no transaction held, then applies what came back', async () => {
  const steps: string[] = [];
  assert.equal(
    await runAttempt(
      ctx,
      noting(steps, async () => ({ recorded: 7 })),
    ),
    'applied',
  );
  assert.deepEqual(steps, ['record', 'send 7 held=false', 'apply 7 answer 7']);
});

test('an operation answered from its record (a retried key, a refusal) sends nothing', async () => {
  const steps: string[] = [];
  assert.equal(
    await runAttempt(
      ctx,
      noting(steps, async () => ({ done: 'earlier result' })),
    ),
    'earlier result',
  );
  assert.deepEqual(steps, ['record']);
});

test('inside a transaction the caller holds, runAttempt throws before anything is recorded', async () => {
  const steps: string[] = [];
  await assert.rejects(
    db.tx(() =>
      runAttempt(
        ctx,
        noting(steps, async () => ({ recorded: 1 })),
      ),
    ),
    (err: Error) => err instanceof HeldTransactionError && /inside a database transaction/.test(err.message),
  );
  assert.deepEqual(steps, [], 'no record, no call');
});

test('applyOnce: a plan from the recorded rows with nothing to write stands, with no transaction', async () => {
  let locked = 0;
  const got = await applyOnce(ctx, {
    asRecorded: () => 'as recorded',
    underLock: async () => (locked++, 'under lock'),
  });
  assert.equal(got, 'as recorded');
  assert.equal(locked, 0);
});

test('applyOnce: rows that cannot be planned from the record are read again under the lock, in a transaction', async () => {
  let heldThere = false;
  const got = await applyOnce(ctx, {
    asRecorded: () => undefined,
    underLock: async (q) => {
      heldThere = db.holding();
      const [row] = await q.query<{ n: number }>('SELECT 41 + 1 AS n');
      return `under lock ${row!.n}`;
    },
  });
  assert.equal(got, 'under lock 42');
  assert.equal(heldThere, true);
  // without a plan from the record (the recovery job) it goes under the lock at once
  assert.equal(await applyOnce(ctx, { underLock: async () => 'job' }), 'job');
});
