// New orders are written in groups (store/coalesce.ts), but not an order created with an
// Idempotency-Key: that one is written inside its own request's transaction. Grouped, it ran in
// whichever request's transaction started the batch, so a 201 could come back for an order
// another request had not yet committed (found by npm run test:cluster: the vault, on another
// node, answered "setup_token is not known" for an order just acknowledged).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, type TestService } from '../helpers/service.ts';

let t: TestService;
before(async () => (t = await startTestService()));
after(async () => t?.close());

test('every order acknowledged under concurrent idempotent creation is committed when its 201 arrives', async () => {
  const n = 40;
  const seen = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const created = await t.api('POST', '/v1/orders/', cardOrder({ merchant_order_id: `idem-${i}` }), { headers: { 'idempotency-key': `k-${i}` } });
      assert.equal(created.status, 201, created.text);
      // read at once on the store's own connections, outside any request's transaction
      const rows = await t.db.query('SELECT id FROM orders WHERE id = $1', [created.body.id]);
      return rows.length;
    }),
  );
  assert.deepEqual(seen, Array(n).fill(1));
});
