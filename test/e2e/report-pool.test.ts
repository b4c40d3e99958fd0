// CSV downloads last as long as their clients read. On PostgreSQL they run on connections of their
// own (REPORT_CONNECTIONS), so downloads held open can never take the connections payments need,
// and each COPY is spooled to a file the client reads behind it, so a stalled client holds no
// report connection either: another merchant's report answers at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { cardOrder, startTestService, type ApiResponse, type TestService } from '../helpers/service.ts';
import { csvDownload, runningCopies } from '../helpers/search.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';

let t: TestService;
const SEEDED = process.env.DATABASE_URL ? 30_000 : 3_000;
before(async () => {
  // two connections for queries, one for reports: two held downloads would take every query connection if they shared them
  // three downloads of one project at once: no per-project report limit here (fair-shares.test.ts has it)
  t = await startTestService({ pool: { size: 2, reportSize: 1 }, env: { REPORT_CONCURRENCY_PER_PROJECT: '0' } });
  // On PostgreSQL a report far larger than the socket buffers between server and client, so an
  // unread download stays in its COPY. PGlite reads reports in batches between other queries and
  // holds nothing: there a smaller one shows the same answers and complete downloads.
  await seedOrders(t.svc.ctx, { projectId: t.project.project_id, orders: SEEDED, batch: 10_000 });
});
after(async () => t?.close());

const download = () => csvDownload(t, t.project.api_key, { query: '*', sort: 'created asc' });

/** The call's answer, or a failure naming it when it does not come within 10 s (a starved pool hangs). */
async function within10s<T>(what: string, call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within 10 s`)), 10_000)));
  try {
    return await Promise.race([call, late]);
  } finally {
    clearTimeout(timer);
  }
}

test('downloads held open, more than the report connections, leave the API answering; each then completes', async () => {
  const held = await Promise.all([download(), download(), download()]);
  for (const res of held) assert.equal(res.status, 200);
  const readers = held.map((res) => res.body!.getReader());
  const texts = ['', '', ''];
  const decoders = readers.map(() => new TextDecoder());
  /** Reads one chunk of download i; false at its end. */
  const readChunk = async (i: number) => {
    const c = await readers[i].read();
    if (!c.done) texts[i] += decoders[i].decode(c.value, { stream: true });
    return !c.done;
  };
  let created: ApiResponse | undefined;
  let pending: Array<Promise<boolean>> = [];
  try {
    for (const i of [0, 1, 2]) assert.ok(await readChunk(i), 'the header comes at once');
    // one of them (whichever the server took first) gets the report connection and sends rows
    pending = [0, 1, 2].map((i) => readChunk(i));
    await within10s('the first rows', Promise.race(pending));

    // the COPYs run to their end into their spools, one after the other, none held by its unread client
    if (t.db.kind === 'postgres') await copiesDone();
    created = await within10s('create order', t.api('POST', '/v1/orders/', cardOrder()));
    assert.equal(created.status, 201, created.text);
    const read = await within10s('get order', t.api('GET', `/v1/orders/${created.body.id}/`));
    assert.equal(read.status, 200);
    const page = await within10s('search', t.api('POST', '/v1/search/orders/', { query: `id:${created.body.id}` }));
    assert.deepEqual(
      page.body.orders.map((o: { id: string }) => o.id),
      [created.body.id],
    );
  } catch (err) {
    // a failure here must not leave the held downloads (and so the service's stop) hanging
    await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
    throw err;
  }

  // then every held download runs to its end, complete and the same
  await Promise.all(
    [0, 1, 2].map(async (i) => {
      if (!(await pending[i])) return;
      while (await readChunk(i));
    }),
  );
  const rows = texts.map((text) => parse(text, { columns: true }) as Array<{ id: string }>);
  assert.ok(rows[0].length >= SEEDED, `a row per transaction or transaction-less order: ${rows[0].length}`);
  // the same report, but for the order made meanwhile
  const seeded = rows.map((r) =>
    r
      .filter((x) => x.id !== created!.body.id)
      .map((x) => x.id)
      .join(),
  );
  assert.equal(seeded[1], seeded[0]);
  assert.equal(seeded[2], seeded[0]);
});

/**
 * PostgreSQL: resolves once every report connection has been idle for a second (each download's
 * COPY is in its spool, and none waits for a connection); fails after 60 s. A COPY held by a
 * client that reads nothing never lets its connection go idle.
 */
async function copiesDone() {
  const until = Date.now() + 60_000;
  let idleSince = 0;
  for (;;) {
    const [{ busy }] = await t.db.query<{ busy: number }>(
      `SELECT count(*)::int AS busy FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND state <> 'idle' AND application_name = 'tender-report ' || current_schema()`,
    );
    const now = Date.now();
    if (busy > 0) idleSince = 0;
    else if (!idleSince) idleSince = now;
    else if (now - idleSince >= 1000) return;
    assert.ok(now < until, `report connections still busy for clients that read nothing: ${busy} (${await runningCopies(t.db)} COPYs)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("three stalled downloads of one merchant leave another merchant's report answering within 5 s", async () => {
  const other = await t.newProject('test');
  await seedOrders(t.svc.ctx, { projectId: other.project_id, orders: 20, batch: 20 });
  const held = await Promise.all([download(), download(), download()]);
  const readers = held.map((res) => res.body!.getReader());
  try {
    // each has read its first bytes (the header, then its first rows), then its client reads nothing more
    for (const r of readers) for (const _ of [1, 2]) assert.equal((await r.read()).done, false);
    if (t.db.kind === 'postgres') await copiesDone();
    // PGlite: its one connection takes statements in turn; this one comes after the batches read ahead
    else await t.db.query('SELECT 1');
    const started = Date.now();
    const text = await within10s(
      "the other merchant's report",
      (async () => {
        const res = await csvDownload(t, other.api_key, { query: '*' });
        assert.equal(res.status, 200);
        return res.text();
      })(),
    );
    const took = Date.now() - started;
    const rows = parse(text, { columns: true }) as Array<{ project_id: string }>;
    assert.ok(rows.length >= 20, `every order of the other merchant: ${rows.length}`);
    assert.ok(rows.every((r) => r.project_id === other.project_id));
    assert.ok(took < 5000, `the other merchant's report took ${took} ms`);
  } finally {
    await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
  }
});
