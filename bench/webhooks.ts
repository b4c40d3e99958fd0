// Benchmark: webhook deliveries per second to a local receiver, draining 10,000 pending deliveries
// on PostgreSQL. The receiver runs in a child process (answers 204 at once), so the figure is the
// service's: claiming jobs, signing, the POST, and writing each attempt down. Yardstick, measured in
// the same run against the same receiver: a bare loop of the same POSTs (same body size, undici with
// keep-alive, WEBHOOK_CONCURRENCY at a time), no database. Also counts the SQL statements the drain
// sent per delivery (a measure that does not depend on the machine's load).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/webhooks.ts [rows]
//
// Uses its own schema and drops it afterwards. Settings from the environment apply
// (WEBHOOK_CONCURRENCY, TENDER_WORKER_CONCURRENCY).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { Agent, request } from 'undici';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { pgDb } from '../src/store/db/pg.ts';
import { migrate } from '../src/store/db/migrate.ts';
import { jobTable, startService } from '../src/main.ts';
import { createProject } from '../src/services/platform/tenancy.ts';
import { setProjectWebhookUrl } from '../src/services/webhooks/endpoints.ts';
import { setOrderStatus } from '../src/services/payments/transitions.ts';
import { findOrder } from '../src/store/payments/orders.ts';
import { findProject } from '../src/store/platform/projects.ts';
import { nowFor } from '../src/services/platform/context.ts';
import { startWorker } from '../src/jobs/worker.ts';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL: this benchmark runs on PostgreSQL');
const rows = Number(process.argv[2] ?? 10_000);
const schema = `bench_${randomBytes(4).toString('hex')}`;

const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);

const receiver = spawn(
  process.execPath,
  [
    '-e',
    `
  const http = require('node:http');
  let n = 0;
  const s = http.createServer((req, res) => { req.resume(); req.on('end', () => { n++; res.writeHead(204).end(); }); });
  s.keepAliveTimeout = 10000;
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));
  process.on('message', () => process.send(n));
`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
);
const port = await new Promise<number>((resolve) => receiver.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));

/** The yardstick: `n` POSTs of `body` to the receiver, `concurrency` at a time over keep-alive connections. */
async function bareLoop(n: number, concurrency: number, body: string): Promise<number> {
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  const t = performance.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < n) {
        sent++;
        const res = await request(`http://127.0.0.1:${port}/hook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          dispatcher: agent,
        });
        for await (const _ of res.body);
      }
    }),
  );
  const rate = n / ((performance.now() - t) / 1000);
  await agent.close();
  return rate;
}

// Statements sent to PostgreSQL, counted at the driver (the benchmark's own polling is not counted).
let statements = 0;
let counting = false;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting && this !== admin) statements++;
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof clientQuery;

const db = pgDb({ url, schema, max: 20 });
try {
  await migrate(db);
  const config = loadConfig(
    { ...process.env, TENDER_WORKER: 'off', LOG_LEVEL: 'warn', WEBHOOK_PRIVATE_ADDRESSES: 'allow' }, // the receiver is local
    { port: 0, masterKey: randomBytes(32).toString('hex') },
  );
  const svc = await startService({ config, db, log: createLogger('warn') });
  const created = await createProject(svc.ctx, { name: 'Bench shop', mode: 'test' });
  await setProjectWebhookUrl(svc.ctx, created.project_id, `http://127.0.0.1:${port}/hook`);
  const project = (await findProject(db, created.project_id))!;

  // rows orders, each cancelled: one outbox row, one pending delivery and its job each, written
  // in the status change's transaction as in production
  await db.query(
    `INSERT INTO orders (id, project_id, merchant_id, status, currency, amount, body, created, modified)
     SELECT gen_random_uuid(), $1, $2, 'new', 'EUR', 100, '{}', now(), now() FROM generate_series(1, $3)`,
    [project.id, project.merchant_id, rows],
  );
  const ids = (await db.query<{ id: string }>('SELECT id FROM orders WHERE project_id = $1', [project.id])).map((r) => r.id);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < ids.length) {
        const id = ids[next++];
        await db.tx(async (q) => setOrderStatus(svc.ctx, q, (await findOrder(q, project.id, id, true))!, 'cancelled', nowFor(project)));
      }
    }),
  );
  const enqueueS = (performance.now() - t0) / 1000;
  const [{ pending }] = await db.query<{ pending: number }>(
    "SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'",
  );
  if (pending !== rows) throw new Error(`expected ${rows} pending deliveries, found ${pending}`);

  const sampleBody = JSON.stringify({ event: 'status_changed', order_id: ids[0], project_id: project.id });
  const loads = [loadavg()[0]];
  const bareBefore = await bareLoop(Math.min(rows, 5_000), config.webhook.concurrency, sampleBody);
  loads.push(loadavg()[0]);
  const t1 = performance.now();
  counting = true;
  const cpu0 = process.cpuUsage();
  const worker = startWorker(svc.ctx, jobTable);
  for (;;) {
    const [{ done }] = (
      await admin.query<{ done: number }>(`SELECT count(*)::int AS done FROM ${schema}.webhook_deliveries WHERE status <> 'pending'`)
    ).rows;
    if (done >= rows) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const drainS = (performance.now() - t1) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await worker.stop();
  counting = false;
  loads.push(loadavg()[0]);
  const bareAfter = await bareLoop(Math.min(rows, 5_000), config.webhook.concurrency, sampleBody);
  loads.push(loadavg()[0]);
  const bare = (bareBefore + bareAfter) / 2;
  const [stats] = await db.query<{ ok: number; attempts: number; p50: number; p99: number }>(
    `SELECT count(*) FILTER (WHERE response_status BETWEEN 200 AND 299)::int AS ok, count(*)::int AS attempts,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99
     FROM webhook_attempts`,
  );
  const received = await new Promise<number>((resolve) => {
    receiver.once('message', (n) => resolve(Number(n)));
    receiver.send('count');
  });
  const result = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown cpu'}, node ${process.version}`,
    store: 'PostgreSQL',
    rows,
    webhook_concurrency: config.webhook.concurrency,
    worker_concurrency: config.worker.concurrency,
    enqueue_per_s: Math.round(rows / enqueueS),
    deliveries_per_s: Math.round(rows / drainS),
    bare_posts_per_s: Math.round(bare),
    bare_posts_per_s_before_after: [Math.round(bareBefore), Math.round(bareAfter)],
    ratio_to_bare: Number((rows / drainS / bare).toFixed(2)),
    statements_per_delivery: Number((statements / rows).toFixed(2)),
    // this process's CPU (the service's worker, and the benchmark's light polling) per delivery, and
    // the share of the drain it was busy: near 100 % means the process, not the database, is the limit
    cpu_ms_per_delivery: Number(((cpu.user + cpu.system) / 1000 / rows).toFixed(3)),
    cpu_busy_share: Number(((cpu.user + cpu.system) / 1e6 / drainS).toFixed(2)),
    drain_seconds: Number(drainS.toFixed(2)),
    load_average: loads.map((l) => Number(l.toFixed(1))),
    attempts: stats.attempts,
    succeeded: stats.ok,
    // the receiver also counted the two bare loops' POSTs
    received_from_service: received - 2 * Math.min(rows, 5_000),
    post_ms_p50: Number(stats.p50),
    post_ms_p99: Number(stats.p99),
  };
  console.log(JSON.stringify(result, null, 2));
  await svc.close();
} finally {
  await db.close().catch(() => {});
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  await admin.end();
  receiver.kill();
}
