// DATABASE_REPLICA_URL: search, CSV reports and the portal's lists read the replica; every write,
// and every read that must see the request's own writes, stays on the primary. Here the
// "replica" is the test's own store seen through a recorder: on PostgreSQL a second pool of
// read-only sessions (default_transaction_read_only, so a write there fails in the database)
// with its own application_name; on PGlite the same database (one connection is all it has).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, cardOrder, type TestService } from '../helpers/service.ts';
import { csvDownload } from '../helpers/search.ts';
import { payOrder } from '../helpers/pay.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { type Db } from '../../src/store/db/db.ts';
import { loadConfig, checkSettings } from '../../src/config.ts';
import { openReplica } from '../../src/store/db/open.ts';
import { linksOf } from '../../src/services/portal/actions.ts';
import { insightBetween } from '../../src/services/portal/money.ts';
import { findProject } from '../../src/store/platform/projects.ts';
import type { Json } from '../helpers/json.ts';

/** Every statement the replica ran, in order. */
const seen: string[] = [];
let own: Db | undefined;
let schema = '';

/** db with every statement recorded; close() closes only a pool of its own. */
function recorded(inner: Db, closeInner: boolean): Db {
  const note = (sql: string) => void seen.push(sql.trim());
  return {
    ...inner,
    query: (sql, params, opts) => (note(sql), inner.query(sql, params, opts)),
    exec: (sql) => (note(sql), inner.exec(sql)),
    tx: (fn) =>
      inner.tx((q) =>
        fn({ query: (sql, params, opts) => (note(sql), q.query(sql, params, opts)), exec: (sql) => (note(sql), q.exec(sql)) }),
      ),
    copyCsv: inner.copyCsv ? (select, params) => (note(select), inner.copyCsv!(select, params)) : undefined,
    copyCsvParts: inner.copyCsvParts
      ? (partsOf, ahead) =>
          inner.copyCsvParts!(async (q) => {
            const parts = await partsOf({
              query: (sql, params, opts) => (note(sql), q.query(sql, params, opts)),
              exec: (sql) => (note(sql), q.exec(sql)),
            });
            for (const part of parts) note(part.sql);
            return parts;
          }, ahead)
      : undefined,
    close: async () => {
      if (closeInner) await inner.close();
    },
  };
}

let t: TestService;
before(async () => {
  t = await startTestService({
    replica: async (db) => {
      if (db.kind === 'pglite') return recorded(db, false);
      [{ schema }] = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
      own = pgDb({ url: process.env.DATABASE_URL!, schema, max: 2, reportMax: 1, name: 'tender-replica', readOnly: true });
      return recorded(own, true);
    },
  });
});
after(async () => t?.close());

const isRead = (sql: string) => /^(SELECT|WITH)\b/i.test(sql);

test('writes go to the primary: paying an order runs nothing on the replica', async () => {
  const before = seen.length;
  await payOrder(t, { merchant_order_id: 'R-1' });
  const created = await t.api('POST', '/v1/orders/', cardOrder({ merchant_order_id: 'R-2' }));
  assert.equal(created.status, 201, created.text);
  // the order's own page must show what was just written: the primary
  const got = await t.api('GET', `/v1/orders/${created.body.id}/`);
  assert.equal(got.status, 200);
  assert.deepEqual(seen.slice(before), [], 'no statement of a write or of reading it back ran on the replica');
});

test('search reads the replica, and finds what the primary wrote', async () => {
  const before = seen.length;
  const res = await t.api('POST', '/v1/search/orders/', { query: 'R-*', sort: 'created asc' });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    res.body.orders.map((o: Json) => o.merchant_order_id),
    ['R-1', 'R-2'],
  );
  const ran = seen.slice(before);
  assert.ok(
    ran.some((sql) => /FROM orders/i.test(sql)),
    'the orders were read from the replica',
  );
  assert.ok(ran.every(isRead), `only reads on the replica: ${ran.filter((s) => !isRead(s)).join('; ')}`);
});

test('a CSV report reads the replica', async () => {
  const before = seen.length;
  const res = await csvDownload(t, t.project.api_key, { query: 'R-*', sort: 'created asc' });
  assert.equal(res.status, 200);
  const lines = (await res.text()).trim().split('\n');
  assert.equal(lines.length, 3, 'header and two orders');
  const ran = seen.slice(before);
  assert.ok(ran.length > 0, 'the report ran on the replica');
  assert.ok(ran.every(isRead), `only reads on the replica: ${ran.filter((s) => !isRead(s)).join('; ')}`);
});

test("the portal's lists (payment links, home figures) read the replica", async () => {
  const project = (await findProject(t.db, t.project.project_id))!;
  const before = seen.length;
  await linksOf(t.svc.ctx, project);
  const stats = await insightBetween(t.svc.ctx, project, new Date(Date.now() - 13 * 86_400_000), 14);
  assert.ok(stats.ended > 0);
  const ran = seen.slice(before);
  assert.ok(ran.length >= 2, 'links and the payments of the period were read from the replica');
  assert.ok(ran.every(isRead));
});

test('PostgreSQL: the replica pool is a connection of its own, and refuses writes', async (s) => {
  if (!own) return s.diagnostic('PGlite has one connection: the replica is the same database');
  const [{ n }] = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'tender-replica ' || $1",
    [schema],
  );
  assert.ok(n >= 1, 'search and reports opened connections named tender-replica');
  await assert.rejects(own.query("UPDATE orders SET description = 'x'"), /read-only transaction/);
});

test('DATABASE_REPLICA_URL is checked, and opens a pool only beside a PostgreSQL primary', async () => {
  assert.deepEqual(checkSettings({ DATABASE_REPLICA_URL: 'mysql://x' }), [
    'DATABASE_REPLICA_URL="mysql://x": expected a postgres:// connection URL',
  ]);
  assert.equal(
    openReplica(loadConfig({ DATABASE_REPLICA_URL: 'postgres://h/db' })),
    undefined,
    'PGlite: no replica, search reads the store',
  );
  assert.equal(openReplica(loadConfig({ DATABASE_URL: 'postgres://h/db' })), undefined, 'unset: the primary');
  const replica = openReplica(loadConfig({ DATABASE_URL: 'postgres://h/db', DATABASE_REPLICA_URL: 'postgres://r/db' }));
  assert.equal(replica?.kind, 'postgres');
  await replica!.close(); // never connected: pools connect on first use
  assert.equal(t.svc.ctx.replica === t.svc.ctx.db, false, 'the service reads search from the replica it was given');
});
