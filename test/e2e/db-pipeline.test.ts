import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import pg from 'pg';
import { freshStore } from '../helpers/service.ts';
import { pgUrl } from '../helpers/child-service.ts';
import { pipelined } from '../../src/store/db/pipeline.ts';
import type { Db } from '../../src/store/db/db.ts';

/**
 * A transaction's BEGIN goes with its first statement, and a statement marked `commit` takes the
 * COMMIT (store/pipeline.ts, QueryOptions.commit): on both stores, what is noted per round trip,
 * what commits and what rolls back; on PostgreSQL, the wire itself (one ReadyForQuery per round
 * trip) and the client's state after a failure.
 */
let store: { db: Db; drop(): Promise<void> };
before(async () => {
  store = await freshStore();
  await store.db.exec('CREATE TABLE p_items (id uuid PRIMARY KEY, amount bigint NOT NULL CHECK (amount >= 0))');
});
after(async () => store?.drop());

const amountOf = async (id: string) =>
  (await store.db.query<{ amount: number }>('SELECT amount FROM p_items WHERE id = $1', [id]))[0]?.amount;
async function noted<T>(fn: () => Promise<T>) {
  const sent: string[] = [];
  const stop = store.db.observe((sql) => sent.push(sql.replace(/\s+/g, ' ')));
  try {
    return { result: await fn().catch((err: Error) => err), sent };
  } finally {
    stop();
  }
}

test('a read and a write in a transaction: BEGIN goes with the read, COMMIT with the write', async () => {
  const id = randomUUID();
  await store.db.query('INSERT INTO p_items (id, amount) VALUES ($1, 10)', [id]);
  const { result, sent } = await noted(() =>
    store.db.tx(async (q) => {
      const [row] = await q.query<{ amount: number }>('SELECT amount FROM p_items WHERE id = $1 FOR UPDATE', [id]);
      await q.query('UPDATE p_items SET amount = $2 WHERE id = $1', [id, row.amount - 4], { prepare: 'p_take', commit: true });
      return row.amount;
    }),
  );
  assert.equal(result, 10);
  assert.deepEqual(sent, [
    'BEGIN; SELECT amount FROM p_items WHERE id = $1 FOR UPDATE',
    'UPDATE p_items SET amount = $2 WHERE id = $1; COMMIT',
  ]);
  assert.equal(await amountOf(id), 6);
});

test('a write marked commit that fails commits nothing of its transaction, which rolls back', async () => {
  const id = randomUUID();
  const { result, sent } = await noted(() =>
    store.db.tx(async (q) => {
      await q.query('INSERT INTO p_items (id, amount) VALUES ($1, 5)', [id]);
      await q.query('UPDATE p_items SET amount = amount - 9 WHERE id = $1', [id], { commit: true });
    }),
  );
  assert.match(String(result), /check constraint/);
  assert.deepEqual(sent, [
    'BEGIN; INSERT INTO p_items (id, amount) VALUES ($1, 5)',
    'UPDATE p_items SET amount = amount - 9 WHERE id = $1; COMMIT',
    'ROLLBACK',
  ]);
  assert.equal(await amountOf(id), undefined, 'the insert before it rolled back too');
});

test('after the statement that committed, the transaction takes no more statements', async () => {
  const id = randomUUID();
  const { result } = await noted(() =>
    store.db.tx(async (q) => {
      await q.query('INSERT INTO p_items (id, amount) VALUES ($1, 1)', [id], { commit: true });
      await q.query('UPDATE p_items SET amount = 2 WHERE id = $1', [id]);
    }),
  );
  assert.match(String(result), /the transaction has ended/);
  assert.equal(await amountOf(id), 1, 'what committed stays; the statement after it never ran');
});

test('a transaction that sends nothing costs no round trip; one that reads only ends with COMMIT', async () => {
  assert.deepEqual((await noted(() => store.db.tx(async () => 7))).sent, []);
  const { sent } = await noted(() => store.db.tx((q) => q.query('SELECT 1 AS one')));
  assert.deepEqual(sent, ['BEGIN; SELECT 1 AS one', 'COMMIT']);
});

test('inside within() a statement marked commit does not commit the open transaction: its rollback undoes it', async () => {
  const id = randomUUID();
  const open = await store.db.begin();
  await store.db.within(open, () => store.db.tx((q) => q.query('INSERT INTO p_items (id, amount) VALUES ($1, 3)', [id], { commit: true })));
  await store.db.within(open, () => store.db.query('UPDATE p_items SET amount = 4 WHERE id = $1', [id], { commit: true }));
  assert.equal(open.closed, false);
  await open.rollback();
  assert.equal(await amountOf(id), undefined);
});

// The wire, which only PostgreSQL has.
if (pgUrl)
  test('on the wire: one ReadyForQuery per pipelined round trip; a failed Parse after BEGIN is parsed again next time', async () => {
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      const internals = client as unknown as { connection: NodeJS.EventEmitter; _txStatus: string };
      let trips = 0;
      internals.connection.on('readyForQuery', () => trips++);
      const rows = await pipelined(client, { text: 'SELECT $1::int + 1 AS n', values: [41] }, { begin: true, commit: false });
      assert.deepEqual(rows, [{ n: 42 }]);
      assert.equal(trips, 1);
      assert.equal(internals._txStatus, 'T', 'in the transaction BEGIN opened');
      await pipelined(client, { name: 'p_now', text: 'SELECT 1 AS one' }, { begin: false, commit: true });
      assert.equal(trips, 2);
      assert.equal(internals._txStatus, 'I', 'committed');

      // a named statement whose Parse fails, sent after BEGIN: an error, a failed transaction
      const bad = { name: 'p_bad', text: 'SELECT no_such_column FROM pg_class' };
      // the error answers the caller before the server's ReadyForQuery, which carries the state
      const ready = once(internals.connection, 'readyForQuery');
      await assert.rejects(pipelined(client, bad, { begin: true, commit: false }), /no_such_column/);
      await ready;
      assert.equal(internals._txStatus, 'E');
      await client.query('ROLLBACK');
      // the client did not take the failed statement for parsed: the same error again, not "does not exist"
      await assert.rejects(client.query(bad), /no_such_column/);
    } finally {
      await client.end();
    }
  });
