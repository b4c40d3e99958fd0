// New orders are written in groups (store/coalesce.ts), but not an order created with an
// Idempotency-Key: that one is written inside its own request's transaction. Grouped, it ran in
// whichever request's transaction started the batch, so a 201 could come back for an order
// another request had not yet committed (found by npm run test:cluster: the vault, on another
// node, answered "setup_token is not known" for an order just acknowledged).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, type TestService } from '../helpers/service.ts';
import { newOrderRows } from '../../src/services/payments/orders.ts';
import { insertNewOrder } from '../../src/store/payments/orders.ts';
import { findProject } from '../../src/store/platform/projects.ts';

let t: TestService;
before(async () => (t = await startTestService()));
after(async () => t?.close());

test('every order acknowledged under concurrent idempotent creation is committed when its 201 arrives', async () => {
  const n = 40;
  const seen = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const created = await t.api('POST', '/v1/orders/', cardOrder({ merchant_order_id: `idem-${i}` }), {
        headers: { 'idempotency-key': `k-${i}` },
      });
      assert.equal(created.status, 201, created.text);
      // read at once on the store's own connections, outside any request's transaction
      const rows = await t.db.query('SELECT id FROM orders WHERE id = $1', [created.body.id]);
      return rows.length;
    }),
  );
  assert.deepEqual(seen, Array(n).fill(1));
});

test("an order written inside a request's transaction never takes another request's order with it", async () => {
  const project = (await findProject(t.db, t.project.project_id))!;
  const rows = (ref: string) => newOrderRows(project, cardOrder({ merchant_order_id: ref }) as never, new Date());
  const [a1, a2, b] = [rows('in-1'), rows('in-2'), rows('outside')];
  // two writes inside an open transaction (two batches in flight), then one outside it, which
  // would have waited for a free batch and then run in the context of the first
  const open = await t.db.begin();
  const inside = t.db.within(open, () => Promise.all([insertNewOrder(t.db, a1), insertNewOrder(t.db, a2)]));
  const outside = insertNewOrder(t.db, b);
  await inside;
  await open.rollback(); // the request failed: its own orders go, nobody else's
  await outside;
  const ids = (r: typeof a1) => r.order.id;
  const found = await t.db.query<{ id: string }>('SELECT id FROM orders WHERE id = ANY($1::uuid[])', [[ids(a1), ids(a2), ids(b)]]);
  assert.deepEqual(
    found.map((r) => r.id),
    [ids(b)],
    'the outside order is committed; the rolled-back ones are not',
  );
});
