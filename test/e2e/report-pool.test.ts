// CSV downloads last as long as their clients read. On PostgreSQL they run on connections of their
// own (REPORT_CONNECTIONS), so downloads held open can never take the connections payments need.
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

    if (t.db.kind === 'postgres') {
      const n = await within10s('a query', runningCopies(t.db));
      assert.equal(n, 1, `one COPY runs, held by its unread client; the others wait for the one report connection (${n} running)`);
    }
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
  // on PostgreSQL the two that waited for the report connection began after it, so they hold it;
  // the one the server took first (not always the first asked) began before, and does not
  if (t.db.kind === 'postgres') {
    const holding = rows.map((r) => r.at(-1)!.id === created!.body.id);
    assert.equal(holding.filter(Boolean).length, 2, `the downloads ending with the order made meanwhile: ${holding}`);
  }
});
