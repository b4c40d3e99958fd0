// New orders are written in groups under load (store/coalesce.ts): each must still be stored
// whole, answered as stored, and a bad one must fail alone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, validOrder, type TestService } from '../helpers/service.ts';
import { newOrderRows } from '../../src/services/payments/orders.ts';
import { insertNewOrder } from '../../src/store/payments/orders.ts';
import { findProject } from '../../src/store/platform/projects.ts';
import type { OrderInput } from '../../src/domain/schemas/order.ts';

let t: TestService;
before(async () => {
  t = await startTestService();
});
after(async () => t?.close());

test('orders created at once are each stored whole and read back as they were answered', async () => {
  const bodies = Array.from({ length: 40 }, (_, i) =>
    i % 2
      ? cardOrder({ amount: 100 + i, merchant_order_id: `batch-${i}` })
      : validOrder({ amount: 100 + i, merchant_order_id: `batch-${i}` }),
  );
  const created = await Promise.all(bodies.map((b) => t.api('POST', '/v1/orders/', b)));
  for (const [i, res] of created.entries()) {
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.amount, 100 + i);
    assert.equal(res.body.merchant_order_id, `batch-${i}`);
    const got = await t.api('GET', `/v1/orders/${res.body.id}/`);
    assert.equal(got.status, 200);
    const { transactions: answered, ...order } = res.body;
    const { transactions: stored, ...read } = got.body;
    assert.deepEqual(read, order);
    assert.equal(stored.length, i % 2);
    if (i % 2) {
      const { setup_token, ...details } = answered[0].payment_method_details;
      assert.match(setup_token, /^[0-9a-f-]{36}$/);
      assert.deepEqual(stored[0], { ...answered[0], payment_method_details: details });
      assert.deepEqual(
        stored[0].events.map((e: { event: string }) => e.event),
        ['new'],
      );
    }
  }
  const txnIds = created.flatMap((r) => r.body.transactions.map((x: { id: string }) => x.id));
  const jobs = await t.db.query<{ ref_id: string; kind: string }>('SELECT ref_id, kind FROM jobs WHERE ref_id = ANY($1::text[])', [txnIds]);
  assert.equal(jobs.length, 20, 'one expiry job per transaction');
  assert.ok(jobs.every((j) => j.kind === 'expire_transaction'));
});

test('a new order that breaks a database rule fails alone; the ones written with it are stored', async () => {
  const project = (await findProject(t.db, t.project.project_id))!;
  const rows = Array.from({ length: 10 }, (_, i) =>
    newOrderRows(project, cardOrder({ merchant_order_id: `group-${i}` }) as OrderInput, new Date()),
  );
  const bad = rows[9];
  bad.order.amount = -1; // past validation, only the database's CHECK (amount >= 0) stops it
  // All ten are handed over in one tick: the first two run alone, the other eight queue as one group.
  const results = await Promise.allSettled(rows.map((r) => insertNewOrder(t.db, r)));
  assert.deepEqual(
    results.map((r) => r.status),
    [...Array(9).fill('fulfilled'), 'rejected'],
  );
  assert.match(String((results[9] as PromiseRejectedResult).reason), /check constraint/);
  const ids = rows.map((r) => r.order.id);
  const stored = await t.db.query<{ id: string }>('SELECT id FROM orders WHERE id = ANY($1::uuid[])', [ids]);
  assert.deepEqual(new Set(stored.map((r) => r.id)), new Set(ids.slice(0, 9)));
  const txns = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE order_id = ANY($1::uuid[])', [ids]);
  const events = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE transaction_id = ANY($1::uuid[])', [
    rows.map((r) => r.transaction!.id),
  ]);
  const jobs = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE ref_id = ANY($1::text[])', [
    rows.map((r) => r.transaction!.id),
  ]);
  assert.deepEqual([txns[0].n, events[0].n, jobs[0].n], [9, 9, 9]);
});
