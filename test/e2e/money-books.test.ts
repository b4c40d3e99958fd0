// Fees, settlement, the ledger and Idempotency-Key, black-box through the API (authorizations
// come from the real card flow); the ledger check's CLI on a store of its own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { runTender } from '../helpers/cli.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { findProject, updateProjectSettings } from '../../src/store/platform/projects.ts';
import { canonicalJson } from '../../src/http/idempotency.ts';
import { lockKey } from '../../src/store/platform/idempotency.ts';
import { simulator } from '../../src/acquirer/simulator/index.ts';
import type { Json } from '../helpers/json.ts';

/** Live projects whose acquirer is the simulator, for as long as a test needs (the service asks through its liveConnector). */
const simulatedLive = new Set<string>();
const liveConnector = (project: { id: string }) => (simulatedLive.has(project.id) ? simulator : undefined);
import { runDueJobs } from '../../src/jobs/worker.ts';
import { jobTable } from '../../src/main.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import { type Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { createHash } from 'node:crypto';
import { moneyClient, eventually, expectError } from '../helpers/money.ts';

let t: TestService;
before(async () => {
  t = await startTestService({ liveConnector });
});
after(async () => t?.close());

const { txnPath, capture, voidPart, refund, get, runJobs, preauth, sale, ledgerSound } = moneyClient(() => t);

// ---------- Fees and settlement ----------

test('fee and settlement figures are filled for every captured transaction, from the fee schedule', async () => {
  const s = await sale(); // 1995: 1.8 % = 35.91 -> 36, + 25
  const st = s.transactions[0];
  assert.deepEqual([st.fee_currency, st.fee_amount, st.settlement_currency, st.settlement_amount], ['EUR', 61, 'EUR', 1934]);
  const o = await preauth();
  await voidPart(o, 495);
  const c = (await capture(o)).body.transactions[0]; // 1500: 27 + 25
  assert.deepEqual([c.fee_currency, c.fee_amount, c.settlement_currency, c.settlement_amount], ['EUR', 52, 'EUR', 1448]);
  const r = (await refund(s, 300)).body.transactions[0];
  assert.deepEqual([r.fee_currency, r.fee_amount, r.settlement_currency, r.settlement_amount], ['EUR', 0, 'EUR', 300]);
  // the pre-authorization itself moves no money: its figures are zero, the capture carries them
  const orig = (await get(o.id)).transactions[0];
  assert.deepEqual([orig.fee_amount, orig.settlement_amount], [0, 0]);

  const p = await t.newProject('test');
  const row = (await findProject(t.db, p.project_id))!;
  const fees = {
    ...row.settings.fees,
    'credit-card': { bps: 250, fixed: 10 },
    refund: { bps: 0, fixed: 15 },
    chargeback: { bps: 0, fixed: 1500 },
  };
  await updateProjectSettings(t.db, p.project_id, { ...row.settings, fees });
  const s2 = await sale({ key: p.api_key }); // 1995 * 2.5 % = 49.875 -> 50, + 10
  assert.deepEqual([s2.transactions[0].fee_amount, s2.transactions[0].settlement_amount], [60, 1935]);
  const r2 = (await refund(s2, 1000, { key: p.api_key })).body.transactions[0];
  assert.deepEqual([r2.fee_amount, r2.settlement_amount], [15, 1015], 'a debit costs the merchant amount + fee');
  const cb = (await t.api('POST', `/v1/test/orders/${s2.id}/chargeback/`, { amount: 995 }, { key: p.api_key })).body.transactions[0];
  assert.deepEqual([cb.fee_amount, cb.settlement_amount], [1500, 2495]);
  const missing = await t.db.query(
    `SELECT t.id FROM transactions t JOIN orders o ON o.id = t.order_id
     WHERE t.project_id = ANY($1::uuid[]) AND o.kind <> 'void' AND t.status IN ('accepted', 'completed')
       AND (t.fee_amount IS NULL OR t.settlement_amount IS NULL OR t.fee_currency IS NULL OR t.settlement_currency IS NULL)`,
    [[t.project.project_id, p.project_id]],
  );
  assert.deepEqual(missing, []);
  await ledgerSound(p.project_id);
});

test('settle (test projects) settles the order and the orders created from it; a settled sale is completed', async () => {
  const s = await sale();
  const r = (await refund(s, 200)).body;
  const res = await t.api('POST', `/v1/test/orders/${s.id}/settle/`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.id, s.id);
  assert.equal(res.body.transactions[0].status, 'completed');
  const rows = await t.db.query<{ order_id: string; settled: Date | null }>(
    'SELECT order_id, settled FROM transactions WHERE order_id = ANY($1::uuid[])',
    [[s.id, r.id]],
  );
  assert.equal(rows.length, 2);
  assert.ok(
    rows.every((x) => x.settled),
    'both settled',
  );
  const journals = await t.db.query<{ n: number }>(
    "SELECT count(DISTINCT journal_id)::int AS n FROM ledger_entries WHERE kind = 'settlement' AND order_id = ANY($1::uuid[])",
    [[s.id, r.id]],
  );
  assert.equal(journals[0].n, 2);
  // settling again moves nothing more
  const legs = async () =>
    (
      await t.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM ledger_entries WHERE kind = 'settlement' AND order_id = ANY($1::uuid[])",
        [[s.id, r.id]],
      )
    )[0].n;
  const before = await legs();
  await t.api('POST', `/v1/test/orders/${s.id}/settle/`);
  assert.equal(await legs(), before);
  // a refund after settlement still works
  assert.equal((await refund(s, 100)).status, 201);
  await ledgerSound();
});

test('live projects settle by the daily settlement job', async () => {
  const live = await t.newProject('live');
  simulatedLive.add(live.project_id);
  try {
    const s = await payOrder(t, {}, { key: live.api_key });
    assert.equal(s.transactions[0].status, 'accepted');
    const [job] = await t.db.query<{ run_at: Date }>("SELECT run_at FROM jobs WHERE kind = 'settlement' AND ref_id = $1", [
      live.project_id,
    ]);
    assert.ok(job, 'the next settlement run is scheduled');
    const runAt = new Date(job.run_at);
    assert.equal(runAt.getUTCHours() + runAt.getUTCMinutes() + runAt.getUTCSeconds(), 0, 'at 00:00 UTC');
    assert.ok(runAt.getTime() > Date.now() && runAt.getTime() <= Date.now() + 86_400_000);
    // the day passes
    await t.db.query("UPDATE jobs SET run_at = now() WHERE kind = 'settlement' AND ref_id = $1", [live.project_id]);
    await runDueJobs(t.svc.ctx, jobTable, live.project_id);
    await eventually(async () => assert.equal((await get(s.id, { key: live.api_key })).transactions[0].status, 'completed'));
    const [row] = await t.db.query('SELECT settled FROM transactions WHERE id = $1', [s.transactions[0].id]);
    assert.ok(row.settled);
    await ledgerSound(live.project_id);
  } finally {
    simulatedLive.delete(live.project_id);
  }
});

// ---------- Ledger ----------

test('every movement is journaled, balanced, in the same transaction', async () => {
  const o = await preauth();
  const txn = o.transactions[0].id;
  const kinds = async () =>
    (await t.db.query<{ kind: string }>('SELECT DISTINCT kind FROM ledger_entries WHERE payment_transaction_id = $1', [txn]))
      .map((r) => r.kind)
      .sort();
  assert.deepEqual(await kinds(), ['hold']);
  await voidPart(o, 100);
  await capture(o);
  await refund(o, 200);
  await t.api('POST', `/v1/test/orders/${o.id}/chargeback/`, { amount: 300 });
  await t.api('POST', `/v1/test/orders/${o.id}/reversal/`, { amount: 100 });
  await t.api('POST', `/v1/test/orders/${o.id}/settle/`);
  assert.deepEqual(await kinds(), ['capture', 'chargeback', 'fee', 'hold', 'refund', 'reversal', 'settlement', 'void']);
  const sums = await t.db.query<{ s: number }>(
    'SELECT sum(amount)::bigint AS s FROM ledger_entries WHERE payment_transaction_id = $1 GROUP BY journal_id',
    [txn],
  );
  assert.ok(sums.length >= 7);
  assert.ok(sums.every((r) => Number(r.s) === 0));
  await ledgerSound();
});

test('the database refuses a journal that does not balance', async () => {
  const s = await sale();
  await assert.rejects(
    t.db.tx(async (q) => {
      await q.query(
        `INSERT INTO ledger_entries (project_id, journal_id, order_id, transaction_id, payment_transaction_id, account, currency, amount, kind, created)
         VALUES ($1, $2, $3, $4, $4, 'bank', 'EUR', 5, 'fee', now())`,
        [t.project.project_id, randomUUID(), s.id, s.transactions[0].id],
      );
    }),
    (err: { code?: string }) => err.code === '23514',
  );
});

test('the ledger check names each broken invariant', async () => {
  const p = await t.newProject('test');
  const s = await preauth('manual', { key: p.api_key });
  assert.deepEqual((await checkLedger(t.db, p.project_id)).violations, []);
  // tamper: a void no order records, and a refunded_amount out of step
  await t.db.query('UPDATE transactions SET voided_amount = 5 WHERE id = $1', [s.transactions[0].id]);
  await t.db.query('UPDATE orders SET refunded_amount = 7 WHERE id = $1', [s.id]);
  const r = await checkLedger(t.db, p.project_id);
  assert.equal(r.ok, false);
  assert.ok(
    r.violations.some(
      (v) => v.includes(s.id) && v.includes(s.transactions[0].id) && v.includes('void orders add up to 0, voided_amount is 5'),
    ),
    r.violations.join('\n'),
  );
  assert.ok(
    r.violations.some((v) => v.includes('refunded_amount 7')),
    r.violations.join('\n'),
  );
  assert.ok(
    r.violations.some((v) => v.includes('the ledger holds 1995 for it, the open authorization is 1990')),
    r.violations.join('\n'),
  );
  await t.db.query('UPDATE transactions SET voided_amount = 0 WHERE id = $1', [s.transactions[0].id]);
  await t.db.query('UPDATE orders SET refunded_amount = 0 WHERE id = $1', [s.id]);
  assert.deepEqual((await checkLedger(t.db, p.project_id)).violations, []);
});

test('`tender ledger check` exits 0 on a sound store and 1 naming each violation', async () => {
  const store = await cliStore();
  try {
    const ok = await tender(['ledger', 'check'], store.env);
    assert.equal(ok.code, 0, ok.stderr + ok.stdout);
    assert.match(ok.stdout, /ledger check passed/);
    await store.db.query('UPDATE transactions SET captured_amount = 3, refunded_amount = 2 WHERE id = $1', [store.txnId]);
    const bad = await tender(['ledger', 'check'], store.env);
    assert.equal(bad.code, 1, bad.stdout);
    assert.match(bad.stdout, new RegExp(`order ${store.orderId} transaction ${store.txnId}`));
    assert.match(bad.stdout, /refund orders add up to 0, refunded_amount is 2/);
    const json = await tender(['ledger', 'check', '--json'], store.env);
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.stdout).ok, false);
  } finally {
    await store.close();
  }
});

// ---------- Idempotency-Key ----------

test('a retried POST with the same Idempotency-Key answers the first response byte for byte', async () => {
  const key = `order-${randomUUID()}`;
  const body = { currency: 'EUR', amount: 1234, description: 'idempotent', transactions: [{ payment_method: 'credit-card' }] };
  const first = await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201, first.text);
  const second = await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } });
  assert.equal(second.status, 201);
  assert.equal(second.text, first.text, 'byte for byte');
  assert.equal(second.headers.get('content-type'), first.headers.get('content-type'));
  assert.equal(second.headers.get('idempotent-replayed'), 'true');
  // the same JSON in another key order, and the path without its slash, is the same request
  const reordered = await t.api(
    'POST',
    '/v1/orders',
    { transactions: body.transactions, amount: 1234, description: 'idempotent', currency: 'EUR' },
    { headers: { 'idempotency-key': key } },
  );
  assert.equal(reordered.text, first.text);
  const count = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM orders WHERE description = 'idempotent' AND project_id = $1",
    [t.project.project_id],
  );
  assert.equal(count[0].n, 1, 'one order created');
});

test('the same Idempotency-Key with a different body is a 422 IdempotencyError; other projects have their own keys', async () => {
  const key = randomUUID();
  const first = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 }, { headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201);
  const diff = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 101 }, { headers: { 'idempotency-key': key } });
  expectError(diff, 422, 'IdempotencyError');
  const otherPath = await t.api(
    'POST',
    `/v1/orders/${first.body.id}/refunds/`,
    { currency: 'EUR', amount: 100 },
    { headers: { 'idempotency-key': key } },
  );
  expectError(otherPath, 422, 'IdempotencyError');
  const other = await t.newProject('test');
  const theirs = await t.api(
    'POST',
    '/v1/orders/',
    { currency: 'EUR', amount: 101 },
    { key: other.api_key, headers: { 'idempotency-key': key } },
  );
  assert.equal(theirs.status, 201);
  assert.notEqual(theirs.body.id, first.body.id);
});

test('a retried capture or refund with its Idempotency-Key moves the money once and answers the same', async () => {
  const o = await preauth();
  const k = { headers: { 'idempotency-key': `cap-${o.id}` } };
  const first = await t.api('POST', `${txnPath(o)}/captures/`, undefined, k);
  assert.equal(first.status, 201);
  const again = await t.api('POST', `${txnPath(o)}/captures/`, undefined, k);
  assert.equal(again.status, 201, 'the stored answer, not a 409');
  assert.equal(again.text, first.text);
  const rk = { headers: { 'idempotency-key': `ref-${o.id}` } };
  const r1 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 700 }, rk);
  const r2 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 700 }, rk);
  assert.equal(r1.status, 201);
  assert.equal(r2.text, r1.text);
  const after = await get(o.id);
  assert.equal(after.refunded_amount, 700);
  assert.equal(after.related_orders.length, 2);
  // errors are answers too: a refused request replays its refusal
  const ek = { headers: { 'idempotency-key': `err-${o.id}` } };
  const e1 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 99999 }, ek);
  expectError(e1, 422, 'RefundError');
  const e2 = await t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 99999 }, ek);
  assert.equal(e2.status, 422);
  assert.equal(e2.text, e1.text);
});

test('a request still in flight with the same key is a 409 IdempotencyError', async () => {
  const key = randomUUID();
  const body = { currency: 'EUR', amount: 1 };
  if (t.db.kind === 'postgres') {
    // the first request holds the key's lock in its open transaction, as while its handler runs
    const open = await t.db.begin();
    try {
      assert.equal(await lockKey(open.q, t.project.project_id, key), true);
      expectError(await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } }), 409, 'IdempotencyError');
    } finally {
      await open.rollback();
    }
  }
  // Requests side by side: each answer is the first one's (or 409 while it runs); one order.
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } })),
  );
  const done = answers.filter((a) => a.status === 201);
  assert.ok(done.length >= 1);
  for (const a of answers) if (a.status !== 201) expectError(a, 409, 'IdempotencyError');
  for (const a of done) assert.equal(a.text, done[0].text);
  const [n] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE project_id = $1 AND id = $2', [
    t.project.project_id,
    done[0].body.id,
  ]);
  assert.equal(n.n, 1);
});

test('a key left claimed without an answer (its request died with its process) is taken over: the retry runs once', async () => {
  const key = randomUUID();
  const body = { currency: 'EUR', amount: 3, description: `orphan-${key}` };
  const hash = createHash('sha256')
    .update(`POST /v1/orders\n${canonicalJson(body)}`)
    .digest('hex');
  await t.db.query(
    'INSERT INTO idempotency_keys (project_id, key, method, path, request_hash, created) VALUES ($1, $2, $3, $4, $5, now())',
    [t.project.project_id, key, 'POST', '/v1/orders', hash],
  );
  const retry = await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } });
  assert.equal(retry.status, 201, retry.text);
  const again = await t.api('POST', '/v1/orders/', body, { headers: { 'idempotency-key': key } });
  assert.equal(again.text, retry.text);
  const [n] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE project_id = $1 AND description = $2', [
    t.project.project_id,
    body.description,
  ]);
  assert.equal(n.n, 1, 'one order');
});

test('Idempotency-Key is validated, also in its quoted form', async () => {
  expectError(
    await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 1 }, { headers: { 'idempotency-key': 'x'.repeat(256) } }),
    400,
    'ValidationError',
  );
  const key = randomUUID();
  const a = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 2 }, { headers: { 'idempotency-key': `"${key}"` } });
  const b = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 2 }, { headers: { 'idempotency-key': key } });
  assert.equal(a.status, 201);
  assert.equal(b.text, a.text);
});

test('keys are kept 24 h, then the cleanup job forgets them', async () => {
  const p = await t.newProject('test');
  const key = randomUUID();
  const first = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 5 }, { key: p.api_key, headers: { 'idempotency-key': key } });
  assert.equal(first.status, 201);
  await runJobs('PT23H', p.api_key);
  expectError(
    await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 6 }, { key: p.api_key, headers: { 'idempotency-key': key } }),
    422,
    'IdempotencyError',
  );
  await runJobs('PT2H', p.api_key);
  await eventually(async () => {
    const rows = await t.db.query('SELECT 1 FROM idempotency_keys WHERE project_id = $1 AND key = $2', [p.project_id, key]);
    assert.equal(rows.length, 0, 'deleted by idempotency_cleanup');
  });
  const fresh = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 6 }, { key: p.api_key, headers: { 'idempotency-key': key } });
  assert.equal(fresh.status, 201);
  assert.notEqual(fresh.body.id, first.body.id);
});

// ---------- helpers for the CLI test ----------

interface CliStore {
  db: Db;
  env: Record<string, string>;
  orderId: string;
  txnId: string;
  close(): Promise<void>;
}

/** A store of its own with one captured sale booked by the service code, for the CLI to read. */
async function cliStore(): Promise<CliStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tender-ledger-'));
  const url = process.env.DATABASE_URL;
  let db: Db;
  let env: Record<string, string>;
  let drop = async () => {};
  if (url) {
    const schema = `l_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    db = pgDb({ url, schema, max: 2 });
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env = { DATABASE_URL: u.toString() };
    drop = async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    };
  } else {
    db = await pgliteDb(join(dir, 'data'));
    env = { TENDER_DATA_DIR: join(dir, 'data'), DATABASE_URL: '' };
  }
  await migrate(db);
  const projectId = randomUUID();
  const merchantId = randomUUID();
  const orderId = randomUUID();
  const txnId = randomUUID();
  await db.query("INSERT INTO merchants (id, name) VALUES ($1, 'm')", [merchantId]);
  await db.query("INSERT INTO projects (id, merchant_id, name, mode) VALUES ($1, $2, 'p', 'test')", [projectId, merchantId]);
  await db.query(
    "INSERT INTO orders (id, project_id, merchant_id, status, currency, amount, created, modified) VALUES ($1, $2, $3, 'completed', 'EUR', 1000, now(), now())",
    [orderId, projectId, merchantId],
  );
  await db.query(
    `INSERT INTO transactions (id, project_id, order_id, status, payment_method, currency, amount, credit_debit, expiration_period, created, modified)
     VALUES ($1, $2, $3, 'accepted', 'credit-card', 'EUR', 1000, 'credit', 'PT30M', now(), now())`,
    [txnId, projectId, orderId],
  );
  const { planAuthorized } = await import('../../src/services/payments/operations.ts');
  const { WriteSet } = await import('../../src/store/db/writes.ts');
  await db.tx(async (q) => {
    const [txn] = await q.query('SELECT * FROM transactions WHERE id = $1', [txnId]);
    const [project] = await q.query('SELECT * FROM projects WHERE id = $1', [projectId]);
    const w = new WriteSet();
    planAuthorized(w, project as Json, txn as Json, new Date());
    await w.run(q);
  });
  if (!url) await db.close(); // PGlite: one process per data directory; the CLI opens it next
  const reopen = async (): Promise<Db> => (url ? db : pgliteDb(join(dir, 'data')));
  const handle: CliStore = {
    db: {
      kind: db.kind,
      // each statement on a short-lived handle, so the CLI can open the PGlite directory in between
      query: async (sql: string, params?: unknown[]) => {
        const d = await reopen();
        try {
          return await d.query(sql, params);
        } finally {
          if (!url) await d.close();
        }
      },
    } as unknown as Db,
    env,
    orderId,
    txnId,
    async close() {
      if (url) await db.close();
      await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

function tender(args: string[], extra: Record<string, string>) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'warn',
    TENDER_WORKER: 'off',
    TENDER_MASTER_KEY: randomBytes(32).toString('hex'),
    ...extra,
  };
  if (!env.DATABASE_URL) delete env.DATABASE_URL;
  return runTender(args, env);
}

test('the whole store passes the ledger check at the end', async () => {
  const r = await checkLedger(t.db);
  assert.deepEqual(r.violations, []);
  assert.ok(r.journals > 10);
});
