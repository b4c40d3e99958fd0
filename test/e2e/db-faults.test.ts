// Database faults (docs/security.md "Faults"). On PostgreSQL: every connection of this test's
// service is dropped with pg_terminate_backend while card payments run; the process stays up,
// requests caught in the drop answer 503 with Retry-After and the error body, the next ones
// succeed, both LISTEN connections come back, and the books still balance. On both stores: the
// service in a child process is killed (SIGKILL) during an idempotent refund; after a restart the
// retry with the same key makes the refund once, and a refund committed before the kill replays.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { basic, request, startTestService, validOrder, type ApiResponse, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { runTender } from '../helpers/cli.ts';
import { childStore, killed, pgUrl, sleep, waitFor, withPg } from '../helpers/child-service.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';

/** A 503 as the contract says: error body, Retry-After. */
function assertUnavailable(res: ApiResponse) {
  assert.equal(res.status, 503, res.text);
  assert.equal(res.body.error.status, 503);
  assert.equal(res.body.error.type, 'ServiceUnavailable');
  assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After ${res.headers.get('retry-after')}`);
}

let t: TestService;
before(async () => {
  // a long key cache: only the NOTIFY over LISTEN can clear it within the test
  if (pgUrl) t = await startTestService({ env: { API_KEY_CACHE_MS: '600000' } });
});
after(async () => t?.close());

// PGlite has no connections to drop: on it this test does not exist (its fault test is the crash below)
if (pgUrl)
  test(
    'every database connection dropped under concurrent card flows: 503s with the error body, 2xx right after, LISTEN resumes, the ledger balances',
    { timeout: 280_000 },
    async () => {
      const [{ schema }] = await t.db.query<{ schema: string }>('SELECT current_schema() AS schema');
      // only this service's connections (other test services share the server): named by schema
      const ours = ['tender', 'tender-report', 'tender-listen'].map((n) => `${n} ${schema}`);
      const admin = new pg.Client({ connectionString: pgUrl });
      await admin.connect();
      // the card flows below run until told to stop: a failed step must stop them too, or they would
      // run on until the runner's time limit for the file
      let stop = false;
      try {
        const listens = async () =>
          (
            await admin.query<{ query: string }>(
              "SELECT query FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%' ORDER BY query",
              [`tender-listen ${schema}`],
            )
          ).rows
            .map((r) => r.query)
            .join(',');
        await waitFor('both LISTEN connections', async () => (await listens()) === 'LISTEN tender_jobs,LISTEN tender_projects');

        // card payments, four at a time, until told to stop; every answer is kept
        const answers: ApiResponse[] = [];
        let paid = 0;
        const keep = (r: ApiResponse) => (answers.push(r), r);
        const flows = Array.from({ length: 4 }, async () => {
          while (!stop) {
            try {
              await payOrder({ ...t, api: async (...a: Parameters<TestService['api']>) => keep(await t.api(...a)) });
              paid++;
            } catch {
              /* a step caught in the drop: its answer is among `answers` */
            }
          }
        });
        await waitFor('some payments', async () => paid >= 4);

        // requests held at a lock inside their transaction when the connections drop
        await admin.query('BEGIN');
        await admin.query(`LOCK TABLE ${schema}.orders IN EXCLUSIVE MODE`);
        const held = Array.from({ length: 3 }, () => t.api('POST', '/v1/orders/', validOrder()));
        // Concurrent new orders are written in groups (store/coalesce.ts), one statement for several
        // orders: the three held ones and the flows' may all wait in one or two backends, so what is
        // waited for is a backend at the lock, not one per request.
        await waitFor('requests waiting at the lock', async () => {
          const { rows } = await admin.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
            [`tender ${schema}`],
          );
          return rows[0].n >= 1;
        });
        const killed = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ANY($1)', [ours]);
        assert.ok(killed.rowCount! >= 5, `${killed.rowCount} connections dropped`);
        // The lock goes before the held requests are awaited: a request that had not reached the
        // database yet (queued behind a grouped order write) reaches it on a new connection after the
        // drop, and would wait at the lock for ever. Such a request succeeds; one caught in the drop is a 503.
        await admin.query('ROLLBACK');
        const heldAnswers = await Promise.all(held);
        for (const res of heldAnswers) if (res.status !== 201) assertUnavailable(res);
        const dropped = [...heldAnswers, ...answers].filter((r) => r.status === 503);
        assert.ok(dropped.length >= 1, 'requests caught in the drop answer 503');

        // right after: the pool reconnects on demand
        const next = await t.api('POST', '/v1/orders/', validOrder());
        assert.equal(next.status, 201, next.text);
        const before = paid;
        await waitFor('payments after the drop', async () => paid >= before + 4);
        stop = true;
        await Promise.all(flows);

        // every answer of the card flows: a success, or a 503 with the error body
        for (const a of answers) if (a.status >= 500) assertUnavailable(a);

        // LISTEN is back: a key revoked by another node (NOTIFY) stops working at once, not at the cache's 10 minutes
        await waitFor('both LISTEN connections again', async () => (await listens()) === 'LISTEN tender_jobs,LISTEN tender_projects');
        const other = await t.newProject('test');
        assert.equal(
          (await t.api('GET', `/v1/orders/${randomUUID()}/`, undefined, { key: other.api_key })).status,
          404,
          'the key works (and is cached)',
        );
        await admin.query(`UPDATE ${schema}.api_keys SET revoked = now() WHERE project_id = $1`, [other.project_id]);
        await admin.query('NOTIFY tender_projects');
        await waitFor(
          'the revoked key refused',
          async () => (await t.api('GET', `/v1/orders/${randomUUID()}/`, undefined, { key: other.api_key })).status === 401,
          20_000,
        );

        const ledger = await checkLedger(t.db);
        assert.deepEqual(ledger.violations, []);
      } finally {
        stop = true;
        await admin.query('ROLLBACK').catch(() => {});
        await admin.end();
      }
    },
  );

// ---------- SIGKILL during an idempotent refund (both stores) ----------

const store = childStore('faults');
const { schema } = store;

test(
  'SIGKILL during an idempotent refund: after a restart the retry with the same key refunds once; a committed refund replays',
  { timeout: 900_000 },
  async () => {
    const { env, url } = await store.env();
    let server = await store.serve(env, url);
    const created = await runTender(['project', 'create', '--name', 'Crash shop', '--json'], env, 240_000);
    assert.equal(created.code, 0, created.stderr);
    const project = JSON.parse(created.stdout.trim());
    const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      request(`${url}${path}`, method, body, { authorization: basic(project.api_key), ...headers });
    const client = {
      url,
      config: { vaultUrl: `${url}/vault` },
      project,
      api: (m: string, p: string, b?: unknown) => api(m, p, b),
    } as unknown as TestService;
    const order = await payOrder(client);
    assert.equal(order.status, 'completed');
    const refund = (key: string, amount: number) => api('POST', `/v1/orders/${order.id}/refunds/`, { amount }, { 'idempotency-key': key });

    // a refund answered before the kill
    const committed = await refund('refund-committed', 300);
    assert.equal(committed.status, 201, committed.text);

    // a refund under way when the process is killed
    if (pgUrl) {
      // PostgreSQL: held at a lock inside its transaction, so the kill surely lands mid-refund
      await withPg(async (c) => {
        await c.query('BEGIN');
        await c.query(`LOCK TABLE ${schema}.orders IN EXCLUSIVE MODE`);
        const waiting = async () =>
          (
            await c.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class r ON r.oid = l.relation JOIN pg_namespace s ON s.oid = r.relnamespace
             WHERE s.nspname = $1 AND r.relname = 'orders' AND NOT l.granted`,
              [schema],
            )
          ).rows[0].n > 0;
        // the refund reaches the lock (the order insert): then the process dies
        const inner = refund('refund-killed', 500).catch(() => undefined);
        await waitFor('the refund at the lock', waiting);
        await killed(server);
        await c.query('ROLLBACK');
        await inner;
      });
    } else {
      // PGlite: killed while the refund runs (the moment varies; every moment must hold)
      const inFlight = refund('refund-killed', 500).catch(() => undefined);
      await sleep(30);
      await killed(server);
      await inFlight;
    }

    server = await store.serve(env, url);
    // the same key again: never a second refund, never a 409 that lasts. The key's claim holds
    // for 10 s; a refund recorded before the kill is then answered from its attempt once the
    // recovery has settled it: refunded, or (the in-process simulator of the killed process
    // forgot it: "never sent") not done. Killed before it was recorded, the retry runs it.
    const retry = await waitFor(
      'the retried refund',
      async () => {
        const r = await refund('refund-killed', 500);
        return r.status === 409 ? undefined : r;
      },
      180_000,
    );
    const done = retry.status === 201;
    if (done) assert.equal(retry.body.amount, 500);
    else
      assert.match(
        `${retry.status} ${retry.body.error?.type} ${retry.body.error?.value}`,
        /^422 RefundError .*(did not go through|refused)/,
      );
    const again = await refund('refund-killed', 500);
    assert.equal(again.text, retry.text, 'then it replays');
    // the refund answered before the kill replays byte for byte
    const replay = await refund('refund-committed', 300);
    assert.equal(replay.status, 201);
    assert.equal(replay.text, committed.text);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');

    const after = await api('GET', `/v1/orders/${order.id}/`);
    assert.equal(after.body.refunded_amount, done ? 800 : 300, 'each refund once, or the killed one not at all');
    await killed(server);
  },
);

// PGlite runs one transaction at a time: two cannot deadlock there
if (pgUrl)
  test('two transactions that deadlock: PostgreSQL stops one, it runs again, both commit', async () => {
    const table = `deadlock_probe_${randomUUID().slice(0, 8)}`;
    await t.db.exec(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL); INSERT INTO ${table} VALUES (1, 0), (2, 0)`);
    try {
      let locked = 0;
      let tries = 0;
      const bothLocked = async () => {
        locked++;
        await waitFor('both rows locked', async () => locked >= 2, 10_000);
      };
      // each locks one row, waits until the other has locked its row, then wants the other's
      const crossing = (first: number, second: number) =>
        t.db.tx(async (q) => {
          const round = ++tries;
          await q.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [first]);
          if (round <= 2) await bothLocked();
          await q.query(`UPDATE ${table} SET n = n + 1 WHERE id = $1`, [second]);
        });
      await Promise.all([crossing(1, 2), crossing(2, 1)]);
      assert.equal(tries, 3, 'one of the two was stopped by the deadlock detector and ran again');
      const rows = await t.db.query<{ n: number }>(`SELECT n FROM ${table} ORDER BY id`);
      assert.deepEqual(
        rows.map((r) => r.n),
        [2, 2],
        'both committed once: the stopped one left nothing behind',
      );
    } finally {
      await t.db.exec(`DROP TABLE ${table}`);
    }
  });
