// Fair shares (issue 28, findings 3 and 4): a stalled CSV download is cut off and frees what it
// held, one project's reports and searches are limited to its share (429), a search's cost is
// bounded before it runs, statements have a timeout, and a search whose client went away is
// cancelled in PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestService, type TestService } from '../helpers/service.ts';
import { csvDownload, runningCopies } from '../helpers/search.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';
import { takeReportShare } from '../../src/services/platform/fair-share.ts';
import { basic } from '../helpers/service.ts';
import { loadConfig } from '../../src/config.ts';
import { pgDb } from '../../src/store/db/pg.ts';

let t: TestService;
const SEEDED = 3000;
before(async () => {
  t = await startTestService({
    env: {
      REFUSAL_DELAY_MS: '2500',
      REPORT_READ_TIMEOUT_MS: '1500',
      REPORT_CONCURRENCY_PER_PROJECT: '1',
      DATABASE_STATEMENT_TIMEOUT_MS: '3000',
    },
  });
  await seedOrders(t.svc.ctx, { projectId: t.project.project_id, orders: SEEDED, batch: 10_000 });
  // long descriptions: a report (over 12 MB) far larger than the socket buffers between server and
  // client hold, so an unread download stalls in the server
  await t.db.query("UPDATE orders SET description = repeat('x', 4000) WHERE project_id = $1", [t.project.project_id]);
});
after(async () => t?.close());

/** A CSV download by a client that reads the answer's first bytes, then nothing more (its socket paused, kept open). */
function stalledDownload(key: string): Promise<{ head: string; rest: () => Promise<string> }> {
  const url = new URL(t.url);
  const body = JSON.stringify({ query: '*', sort: 'created asc' });
  return new Promise((resolve, reject) => {
    const s = connect(Number(url.port), url.hostname, () => {
      s.write(
        `POST /v1/search/orders/?format=csv HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${basic(key)}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    s.once('data', (chunk) => {
      s.pause(); // reads no more: the kernel's buffers fill, then the server's writes wait
      // what is left, read once the client goes on: up to where the server cut the connection
      const rest = () =>
        new Promise<string>((done) => {
          const parts: Buffer[] = [];
          s.on('data', (c: Buffer) => parts.push(c));
          s.once('close', () => done(Buffer.concat(parts).toString('latin1')));
          s.resume();
        });
      resolve({ head: chunk.toString('latin1').slice(0, 100), rest });
    });
    s.once('error', reject);
  });
}

test("a stalled CSV download is cut off after REPORT_READ_TIMEOUT_MS and frees its report connection; meanwhile its project's next report is 429 and another merchant's runs", async () => {
  const stalled = await stalledDownload(t.project.api_key);
  assert.match(stalled.head, /^HTTP\/1\.1 200/);
  // the stalled project's share is in use: another report of it is refused at once
  const second = await csvDownload(t, t.project.api_key, { query: '*' });
  assert.equal(second.status, 429);
  assert.ok(Number(second.headers.get('retry-after')) >= 1);
  assert.equal((await second.json()).error.type, 'RateLimitExceeded');
  // another merchant's report is not held up
  const other = await t.newProject('test');
  const made = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 }, { key: other.api_key });
  assert.equal(made.status, 201);
  const theirs = await csvDownload(t, other.api_key, { query: '*' });
  assert.equal(theirs.status, 200);
  assert.equal((await theirs.text()).trim().split('\n').length, 2, 'header and one row');
  // the stalled client is cut off and everything it held is free again: the project may report again
  let again: Response | undefined;
  for (let i = 0; i < 100 && again?.status !== 200; i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    again = await csvDownload(t, t.project.api_key, { query: 'merchant_order_id:none' });
  }
  assert.equal(again!.status, 200, 'the project may report again');
  await again!.text();
  // the client, reading again, gets what was on its way and then the closed connection: no end of the body
  const rest = await stalled.rest();
  assert.ok(!rest.endsWith('0\r\n\r\n'), 'the chunked body was never finished');
  if (t.db.kind === 'postgres') {
    let copying = -1;
    for (let i = 0; i < 50 && copying !== 0; i++) {
      if (i) await new Promise((r) => setTimeout(r, 100));
      copying = await runningCopies(t.db);
    }
    assert.equal(copying, 0, 'no COPY left running for the cut-off download');
  }
});

test('a search costing more than SEARCH_MAX_QUERY_COST is a ValidationError before it runs, for JSON and CSV', async () => {
  const words = Array.from({ length: 1500 }, (_, i) => `w${i}`).join(' ');
  const ors = Array.from({ length: 1000 }, (_, i) => `a${i}`).join(' OR ');
  const fields = Array.from({ length: 370 }, (_, i) => `merchant_order_id:x${i}`).join(' OR ');
  for (const query of [words, ors, fields])
    for (const qs of ['', '?format=csv']) {
      const res = await t.api('POST', `/v1/search/orders/${qs}`, { query });
      assert.equal(res.status, 400, res.text.slice(0, 300));
      assert.equal(res.body.error.type, 'ValidationError');
      assert.equal(res.body.error.field, 'query');
      assert.match(res.text, /too costly/);
    }
  // a query within the bound runs
  const ok = await t.api('POST', '/v1/search/orders/', { query: 'status:completed OR status:new OR currency:EUR' });
  assert.equal(ok.status, 200, ok.text);
});

test('searches of one project wait in line for its share instead of being refused; a report beyond its share is 429', async () => {
  // the default share is one search at a time: five at once all answer, one after the other
  const all = await Promise.all(Array.from({ length: 5 }, () => t.api('POST', '/v1/search/orders/', { query: 'status:new', size: 200 })));
  assert.deepEqual(
    all.map((r) => r.status),
    [200, 200, 200, 200, 200],
  );
  const ctx = t.svc.ctx;
  const held = takeReportShare(ctx, t.project.project_id);
  const refused = await csvDownload(t, t.project.api_key, { query: '*' });
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.type, 'RateLimitExceeded');
  held();
  held(); // releasing twice frees one slot only
  const again = takeReportShare(ctx, t.project.project_id);
  assert.throws(
    () => takeReportShare(ctx, t.project.project_id),
    (err: { kind?: string; retryAfter?: number }) => err.kind === 'rate_limited' && err.retryAfter === 1,
  );
  again();
});

test('the refusal brake: a project refused by a limit more than REFUSALS_PER_SECOND times is slowed; another project is not', async () => {
  const noisy = await t.newProject('test');
  const other = await t.newProject('test');
  const costly = Array.from({ length: 40 }, (_, i) => `w${i}*`).join(' OR ');
  // eleven refusals (the default allows ten a second) in a burst
  const refusals = await Promise.all(
    Array.from({ length: 11 }, () => t.api('POST', '/v1/search/orders/', { query: costly }, { key: noisy.api_key })),
  );
  assert.deepEqual(new Set(refusals.map((r) => r.status)), new Set([400]));
  // the noisy project's next request, even a good one, waits; meanwhile another project's is answered
  let slowedDone = false;
  const slowed = t
    .api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 }, { key: noisy.api_key })
    .then((r) => ((slowedDone = true), r));
  const theirs = await t.api('POST', '/v1/search/orders/', { query: 'status:new' }, { key: other.api_key });
  assert.equal(theirs.status, 200);
  const made = await t.api('POST', '/v1/orders/', { currency: 'EUR', amount: 100 }, { key: other.api_key });
  assert.equal(made.status, 201);
  assert.equal(slowedDone, false, 'the noisy project is still held back');
  // and then answered, not refused: the brake slows, it does not block
  assert.equal((await slowed).status, 201);
});

test('PostgreSQL: every statement has DATABASE_STATEMENT_TIMEOUT_MS (503 to the client), and a cancelled search stops in the server', async () => {
  if (t.db.kind !== 'postgres') {
    // PGlite runs in this process: no statement can be interrupted there; the cost bound above is its limit
    assert.equal(t.db.withCancel, undefined);
    return;
  }
  await assert.rejects(t.db.query('SELECT pg_sleep(10)'), (err: { type?: string; kind?: string }) => err.kind === 'unavailable');
  const ac = new AbortController();
  const started = t.db.withCancel!(ac.signal, (q) => q.query("SELECT pg_sleep(2.5), 'cancel-me' AS tag"));
  setTimeout(() => ac.abort(), 300);
  await assert.rejects(started, (err: { kind?: string }) => err.kind === 'unavailable');
  const [{ n }] = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE '%cancel-me%' AND state = 'active' AND pid <> pg_backend_pid()",
  );
  assert.equal(n, 0, 'the cancelled statement is not running any more');
});

test("one merchant's query may not take every core: Tender's PostgreSQL sessions run without parallel workers unless DATABASE_PARALLEL_WORKERS says otherwise", async () => {
  const workersOf = (env: NodeJS.ProcessEnv) => loadConfig({ ...env, TENDER_MASTER_KEY: 'a'.repeat(64) }).limits.parallelWorkers;
  assert.equal(workersOf({}), 0);
  assert.equal(workersOf({ DATABASE_PARALLEL_WORKERS: '2' }), 2);
  assert.equal(workersOf({ DATABASE_PARALLEL_WORKERS: 'server' }), undefined);
  assert.throws(() => loadConfig({ DATABASE_PARALLEL_WORKERS: 'many', TENDER_MASTER_KEY: 'a'.repeat(64) }), /DATABASE_PARALLEL_WORKERS/);
  if (t.db.kind !== 'postgres') return; // PGlite runs in this process, on one core: nothing to share out
  for (const [workers, shown] of [
    [0, '0'],
    [undefined, undefined],
  ] as const) {
    const db = pgDb({ url: process.env.DATABASE_URL!, parallelWorkers: workers });
    try {
      const [row] = await db.query<{ v: string }>("SELECT current_setting('max_parallel_workers_per_gather') AS v");
      const [server] = await db.query<{ v: string }>(
        "SELECT reset_val AS v FROM pg_settings WHERE name = 'max_parallel_workers_per_gather'",
      );
      assert.equal(row.v, shown ?? server.v);
    } finally {
      await db.close();
    }
  }
});
