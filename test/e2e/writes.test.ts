import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { freshStore } from '../helpers/service.ts';
import { WriteSet } from '../../src/store/db/writes.ts';
import type { Db } from '../../src/store/db/db.ts';

/**
 * store/writes.ts on a real store (both): one statement for all of a change's rows, patches of
 * one row merged, and a gate that holds every write back when its row is no longer as read.
 * Plain tables of this test's own, so nothing else of the schema is involved.
 */
let store: { db: Db; drop(): Promise<void> };
before(async () => {
  store = await freshStore();
  await store.db.exec(`
    CREATE TABLE w_items (id uuid PRIMARY KEY, status text NOT NULL, amount bigint NOT NULL CHECK (amount >= 0), tags text[] NOT NULL DEFAULT '{}', body jsonb, at timestamptz);
    CREATE TABLE w_log (id bigserial PRIMARY KEY, item_id uuid NOT NULL REFERENCES w_items(id), note text NOT NULL);`);
});
after(async () => store?.drop());

const item = async (status = 'new', amount = 10) => {
  const id = randomUUID();
  await store.db.query('INSERT INTO w_items (id, status, amount) VALUES ($1, $2, $3)', [id, status, amount]);
  return id;
};
interface Item {
  status: string;
  amount: number;
  tags: string[] | null;
  body: unknown;
  at: Date;
}
const read = async (id: string) => (await store.db.query<Item>('SELECT * FROM w_items WHERE id = $1', [id]))[0];
const notes = async (id: string) =>
  (await store.db.query<{ note: string }>('SELECT note FROM w_log WHERE item_id = $1 ORDER BY id', [id])).map((r) => r.note);

test('one statement writes every row; patches of one row are merged, typed by the columns', async () => {
  const id = await item();
  const fresh = randomUUID();
  const w = new WriteSet();
  w.update('w_items', id, { status: 'done' });
  w.update('w_items', id, { amount: 7, tags: ['a', 'b'], body: { n: 1, s: "it's" }, at: new Date('2026-01-02T03:04:05.006Z') });
  w.insert('w_items', { id: fresh, status: 'new', amount: 3 });
  w.insertMany('w_log', [
    { item_id: id, note: 'one' },
    { item_id: id, note: 'two' },
  ]);
  const sent: string[] = [];
  const stop = store.db.observe((sql) => sent.push(sql));
  assert.equal(await w.run(store.db), true);
  stop();
  assert.equal(sent.length, 1, 'one round trip');
  const row = await read(id);
  assert.equal(row.status, 'done');
  assert.equal(row.amount, 7);
  assert.deepEqual(row.tags, ['a', 'b']);
  assert.deepEqual(row.body, { n: 1, s: "it's" });
  assert.equal(new Date(row.at).toISOString(), '2026-01-02T03:04:05.006Z');
  assert.equal((await read(fresh)).amount, 3);
  assert.deepEqual(await notes(id), ['one', 'two']);
});

test('a gate that no longer holds writes nothing at all; one that holds writes everything', async () => {
  const id = await item('pending');
  const w = new WriteSet();
  w.guard('w_items', id, { status: 'done' }, { status: 'new' });
  w.insertMany('w_log', [{ item_id: id, note: 'moved' }]);
  assert.equal(await w.run(store.db), false);
  assert.equal((await read(id)).status, 'pending');
  assert.deepEqual(await notes(id), []);

  const open = await item('new');
  const v = new WriteSet();
  v.guard('w_items', open, { status: 'done' }, { status: 'new', at: null });
  v.update('w_items', open, { amount: 4 }); // merged into the gate's own row
  v.insert('w_log', { item_id: open, note: 'moved' });
  assert.equal(await v.run(store.db), true);
  const row = await read(open);
  assert.deepEqual([row.status, row.amount], ['done', 4]);
  assert.deepEqual(await notes(open), ['moved']);
});

test('a statement fails whole: a CHECK violation in one part leaves every other part unwritten', async () => {
  const id = await item();
  const w = new WriteSet();
  w.insertMany('w_log', [{ item_id: id, note: 'before' }]);
  w.update('w_items', id, { amount: -1 });
  await assert.rejects(w.run(store.db), (err: { code?: string }) => err.code === '23514');
  assert.deepEqual(await notes(id), []);
  assert.equal((await read(id)).amount, 10);
});

/** Reads the row with a lock in a transaction of its own, as a step's record does: its version then, and the reader's id. */
const seenBy = async (id: string, alsoWrite = false) =>
  store.db.tx(async (q) => {
    const [row] = await q.query<{ version: string; by: string }>(
      'SELECT xmin::text AS version, xid(pg_current_xact_id())::text AS by FROM w_items WHERE id = $1 FOR UPDATE',
      [id],
    );
    if (alsoWrite) await q.query("UPDATE w_items SET status = 'recorded' WHERE id = $1", [id]);
    return row;
  });

/** The change planned from what was seen: one row changed, one logged, gated on the row as seen. */
const applyAsSeen = (id: string, seen: { version: string; by: string }) => {
  const w = new WriteSet();
  w.lockedAsSeen([{ table: 'w_items', id, version: seen.version }], seen.by);
  w.update('w_items', id, { status: 'applied' });
  w.insert('w_log', { item_id: id, note: 'applied' });
  return w.run(store.db);
};

test('a gate on rows as seen: it writes while no one wrote or locked them since, the reader excepted', async () => {
  // untouched since the read
  const quiet = await item();
  assert.equal(await applyAsSeen(quiet, await seenBy(quiet)), true);
  assert.deepEqual([(await read(quiet)).status, await notes(quiet)], ['applied', ['applied']]);

  // written by the reading transaction itself (a record that moved the row): still as that one left it
  const recorded = await item();
  assert.equal(await applyAsSeen(recorded, await seenBy(recorded, true)), true);
  assert.equal((await read(recorded)).status, 'applied');

  // written by someone else since: nothing at all is written
  const changed = await item();
  const seen = await seenBy(changed);
  await store.db.query('UPDATE w_items SET amount = amount WHERE id = $1', [changed]);
  assert.equal(await applyAsSeen(changed, seen), false);
  assert.deepEqual([(await read(changed)).status, await notes(changed)], ['new', []]);

  // only locked by someone else since (a step that may have changed other rows under that lock): the same
  const locked = await item();
  const before = await seenBy(locked);
  await seenBy(locked);
  assert.equal(await applyAsSeen(locked, before), false);
  assert.deepEqual([(await read(locked)).status, await notes(locked)], ['new', []]);

  // and a condition on other rows the change was planned from, read by the statement itself
  // (the log row is written first: its foreign key check locks the item too)
  const logged = await item();
  await store.db.query("INSERT INTO w_log (item_id, note) VALUES ($1, 'before')", [logged]);
  const planned = await seenBy(logged);
  const also = (n: number) => ({ sql: '(SELECT count(*) FROM w_log l WHERE l.item_id = g0.id) = $1', params: [n] });
  const stale = new WriteSet();
  stale.lockedAsSeen([{ table: 'w_items', id: logged, version: planned.version }], planned.by, also(0));
  stale.update('w_items', logged, { status: 'applied' });
  assert.equal(await stale.run(store.db), false);
  const fresh = new WriteSet();
  fresh.lockedAsSeen([{ table: 'w_items', id: logged, version: planned.version }], planned.by, also(1));
  fresh.update('w_items', logged, { status: 'applied' });
  assert.equal(await fresh.run(store.db), true);
  assert.equal((await read(logged)).status, 'applied');

  // one gate per statement
  const w = new WriteSet();
  w.lockedAsSeen([{ table: 'w_items', id: quiet, version: '1' }], '2');
  assert.throws(() => w.guard('w_items', quiet, {}, {}), /one gate/);
});

// the test's own tables, typed for WriteSet like the product's
declare module '../../src/store/db/writes.ts' {
  interface Tables {
    w_items: { id: string; status: string; amount: number; tags: string[]; body: unknown; at: Date };
    w_log: { id: number; item_id: string; note: string };
  }
}
