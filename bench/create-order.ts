// Benchmark: POST /v1/orders/ on PostgreSQL against a yardstick measured in the same run (a bare
// Fastify route inserting one row, same pool size). Writes docs/performance-create-order.md.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/create-order.ts
//
// Settings: BENCH_DURATION (s per target, default 30), BENCH_ROUNDS (6: the targets take turns),
// BENCH_CONNECTIONS (20), BENCH_POOL (10), BENCH_WARMUP (3 s), BENCH_OUT (the markdown file; "-" to
// skip writing). Uses its own schema, dropped at the end.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { pgDb } from '../src/store/db/pg.ts';
import { validOrder } from '../test/helpers/service.ts';
import { migrate } from '../src/store/db/migrate.ts';
import { startService } from '../src/main.ts';
import { createProject } from '../src/services/platform/tenancy.ts';
import { startYardstick } from './yardstick.ts';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const duration = Number(process.env.BENCH_DURATION ?? 30);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);
const poolSize = Number(process.env.BENCH_POOL ?? 10);
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const root = fileURLToPath(new URL('..', import.meta.url));
const out = process.env.BENCH_OUT ?? `${root}docs/performance-create-order.md`;
const loadAtStart = loadavg();
const START = '<!-- bench/create-order.ts: last run -->';
const END = '<!-- end of last run -->';
const HEADER = `# Performance: creating an order

\`bench/create-order.ts\` loads \`POST /v1/orders/\` on PostgreSQL with autocannon and, in the same
run, a yardstick: a bare Fastify route that inserts the same JSON body as one row
(\`bench/yardstick.ts\`), with the same pool size. Target: create-order at least 50 % of the
yardstick's throughput.

\`\`\`sh
DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/create-order.ts
\`\`\`

Settings (environment): \`BENCH_DURATION\` (s per target), \`BENCH_ROUNDS\` (the targets take turns
in this many rounds, so a change in the machine's load weighs on all alike), \`BENCH_CONNECTIONS\`,
\`BENCH_POOL\`, \`BENCH_WARMUP\` (s), \`BENCH_OUT\` (\`-\` to only print). Besides requests/s and latency, each
round records the CPU time per request of the serving Node process and of all PostgreSQL
processes (from \`/proc\`), which a shared machine disturbs less than throughput. The run uses a schema of its own
and drops it.
`;

/** A webshop's order: customer with billing address, return and webhook URLs, one card transaction. */
const base = validOrder();
const order = {
  ...base,
  merchant_order_id: 'shop-100042',
  description: 'Order 100042: 2 x Mug, 1 x Teapot',
  amount: 4985,
  return_url: 'https://shop.example/checkout/return?order=100042',
  webhook_url: 'https://shop.example/hooks/tender',
  customer: { ...base.customer, merchant_customer_id: 'cust-7781', phone_numbers: ['+31 20 123 4567'], ip_address: '203.0.113.7' },
  client: { platform_name: 'WooCommerce', platform_version: '8.2.1', plugin_name: 'tender-woocommerce', plugin_version: '1.4.0' },
  extra: { cart_id: 'c-55ab' },
};
/** Server-to-server: the order with its card transaction (the answer carries setup_token and payment_url). */
const body = JSON.stringify({ ...order, transactions: [{ payment_method: 'credit-card' }] });
/** Hosted payment page: the same order without a transaction (the answer carries order_url). */
const hostedBody = JSON.stringify(order);

interface Result {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** CPU time per answered request (ms): this process (service or yardstick), and all of PostgreSQL's processes */
  nodeCpu: number;
  pgCpu: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux
/**
 * CPU time (ms) of every PostgreSQL process on this machine, read from /proc (with the exited
 * children the postmaster reaped); 0 where PostgreSQL is elsewhere or /proc is not there.
 */
function postgresCpuMs(): number {
  let ticks = 0;
  for (const pid of existsSync('/proc') ? readdirSync('/proc').filter((d) => /^\d+$/.test(d)) : []) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]); // utime stime cutime cstime
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * TICK_MS;
}

/** autocannon in its own process, so the load generator does not share the server's event loop. */
function load(target: string, headers: Record<string, string>, seconds: number, payload = body): Promise<Result> {
  const opts = {
    url: target,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  };
  const script = `require('autocannon')(JSON.parse(process.argv[1]), (err, r) => { if (err) throw err; process.stdout.write(JSON.stringify(r)); })`;
  const cpu0 = process.cpuUsage();
  const pg0 = postgresCpuMs();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, JSON.stringify(opts)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      const r = JSON.parse(text);
      const cpu = process.cpuUsage(cpu0);
      const n = Math.max(1, r['2xx']);
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        total: r['2xx'],
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
        nodeCpu: (cpu.user + cpu.system) / 1000 / n,
        pgCpu: (postgresCpuMs() - pg0) / n,
      });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * The targets take turns (rounds of duration/rounds seconds each), so a change in the
 * machine's load during the run weighs on all alike. Throughput is over all rounds; latency
 * percentiles and CPU times are the median of the rounds'. Also returns every round's results.
 */
async function measureBoth(targets: Array<{ name: string; url: string; headers: Record<string, string>; body?: string }>) {
  if (warmup > 0) for (const t of targets) await load(t.url, t.headers, warmup, t.body);
  const runs = new Map<string, Result[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const t of targets) {
      const r = await load(t.url, t.headers, duration / rounds, t.body);
      if (r.non2xx || r.errors) throw new Error(`${t.name}: ${r.non2xx} non-2xx answers and ${r.errors} errors`);
      console.log(
        `  round ${round + 1} ${t.name.padEnd(13)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   CPU/request: node ${r.nodeCpu.toFixed(3)} ms, postgres ${r.pgCpu.toFixed(3)} ms`,
      );
      runs.get(t.name)!.push(r);
    }
  }
  const total = (rs: Result[]) => rs.reduce((n, r) => n + r.total, 0);
  const results = Object.fromEntries(
    targets.map((t) => {
      const rs = runs.get(t.name)!;
      const r: Result = {
        rps: total(rs) / duration,
        p50: median(rs.map((x) => x.p50)),
        p99: median(rs.map((x) => x.p99)),
        total: total(rs),
        non2xx: 0,
        errors: 0,
        nodeCpu: median(rs.map((x) => x.nodeCpu)),
        pgCpu: median(rs.map((x) => x.pgCpu)),
      };
      console.log(`${t.name.padEnd(13)} ${r.rps.toFixed(0).padStart(6)} req/s   p50 ${r.p50} ms   p99 ${r.p99} ms   (${r.total} requests)`);
      return [t.name, r];
    }),
  ) as Record<string, Result>;
  return { results, runs };
}

const schema = `bench_${randomBytes(5).toString('hex')}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`CREATE SCHEMA ${schema}`);
await admin.end();

const db = pgDb({ url, schema, max: poolSize });
let svc: Awaited<ReturnType<typeof startService>> | undefined;
let yardstick: Awaited<ReturnType<typeof startYardstick>> | undefined;
try {
  await migrate(db);
  const config = loadConfig(
    { DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '0' },
    { port: 0, masterKey: randomBytes(32).toString('hex') },
  );
  svc = await startService({ config, db, log: createLogger('silent') });
  const project = await createProject(svc.ctx, { name: 'Bench shop', mode: 'test' });
  const auth = { authorization: 'Basic ' + Buffer.from(`${project.api_key}:`).toString('base64') };
  yardstick = await startYardstick({ databaseUrl: url, schema, poolSize });

  console.log(`${duration} s each, ${connections} connections, pool ${poolSize}, PostgreSQL ${url.replace(/\/\/[^@]*@/, '//')}`);
  const { results, runs } = await measureBoth([
    { name: 'yardstick', url: yardstick.url, headers: {} },
    { name: 'create-order', url: `${svc.url}/v1/orders/`, headers: auth },
    { name: 'hosted-order', url: `${svc.url}/v1/orders/`, headers: auth, body: hostedBody },
  ]);
  const ys = results.yardstick;
  const co = results['create-order'];
  const ho = results['hosted-order'];
  const [{ n }] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM orders o JOIN transactions t ON t.order_id = o.id JOIN jobs j ON j.ref_id = t.id::text',
  );
  if (n < co.total) throw new Error(`only ${n} complete orders stored for ${co.total} answers`);
  const [{ stored }] = await db.query<{ stored: number }>('SELECT count(*)::int AS stored FROM orders');
  if (stored < co.total + ho.total) throw new Error(`only ${stored} orders stored for ${co.total + ho.total} answers`);
  const ratio = co.rps / ys.rps;
  const hostedRatio = ho.rps / ys.rps;
  const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
  const roundRatios = runs
    .get('create-order')!
    .map((r, i) => pct(r.rps / runs.get('yardstick')![i].rps))
    .join(', ');
  console.log(
    `ratio        ${pct(ratio)} of the yardstick (target >= 50 %; rounds ${roundRatios}); without a transaction ${pct(hostedRatio)}`,
  );

  if (out !== '-') {
    const model = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? 'unknown';
    const [{ version }] = await db.query<{ version: string }>("SELECT current_setting('server_version') AS version");
    const cpu = (ms: number) => (ms ? ms.toFixed(3) : 'n/a');
    const row = (name: string, r: Result) =>
      `| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${cpu(r.nodeCpu)} | ${cpu(r.pgCpu)} | ${r.total} |`;
    const lastRun = `${START}
## Last run

- Date: ${new Date().toISOString()}
- Machine: ${cpus().length} cores (nproc), ${model}; PostgreSQL ${version} on the same machine;
  load average ${loadAtStart.map((l) => l.toFixed(1)).join(' / ')} (1/5/15 min) when the run started
- Node ${process.version}; ${duration} s per target in ${rounds} alternating rounds after a ${warmup} s warm-up,
  ${connections} connections, pool ${poolSize}; latency percentiles and CPU times are the median of the rounds'
- CPU per request: the one Node process serving the route, and every PostgreSQL process (the
  load generator runs in a process of its own, not counted); steadier than requests/s on a shared machine
- Body: an order with customer, billing address, URLs, client, extra and one credit-card transaction
  (the answer carries the transaction with its setup_token and payment_url); the hosted-page row
  sends the same order without a transaction (the answer carries order_url)

| route | requests/s | p50 latency (ms) | p99 latency (ms) | Node CPU per request (ms) | PostgreSQL CPU per request (ms) | requests |
|---|---|---|---|---|---|---|
${row('yardstick: insert one row', ys)}
${row('POST /v1/orders/ with a card transaction', co)}
${row('POST /v1/orders/ for the hosted page (no transaction)', ho)}

Creating an order with its card transaction reaches **${pct(ratio)}** of the yardstick's
throughput (target 50 %; round by round ${roundRatios}); an order for the hosted page, without a
transaction, ${pct(hostedRatio)}.
${END}`;
    // Only the "Last run" section is rewritten: the notes around it are kept.
    const old = existsSync(out) ? readFileSync(out, 'utf8') : '';
    const doc =
      old.includes(START) && old.includes(END)
        ? old.slice(0, old.indexOf(START)) + lastRun + old.slice(old.indexOf(END) + END.length)
        : `${HEADER}\n${lastRun}\n`;
    writeFileSync(out, doc);
    console.log(`wrote ${out}`);
  }
} finally {
  await yardstick?.close();
  await svc?.close();
  await db.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP SCHEMA ${schema} CASCADE`);
  await c.end();
}
