/**
 * Benchmark of the full frictionless card flow on PostgreSQL:
 *   create order -> vault the card -> authenticate -> follow the 3-D Secure redirect (authorizes)
 * N concurrent clients loop over the flow for a fixed time; prints flows/s and p50/p90/p99, and
 * the request rate of the flow (4 requests a flow) against the yardstick's (bench/yardstick.ts:
 * a bare Fastify route inserting one row) measured in the same run by the same clients. The two
 * take turns in `--rounds` rounds, so a change in the machine's load weighs on both alike.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/card-flow.ts --clients 8 --seconds 20 --rounds 4
 *
 * The service and the yardstick each run in a child process of their own (own event loop, as in
 * production) on a throwaway database `tender_bench_<random>` that is dropped at the end. Rate
 * limiting is off, logs at warn. `--seconds` is per target, split over the rounds.
 * BENCH_PROFILE=<dir> writes a CPU profile of the service process there (node --cpu-prof).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresCpuMs, processCpuMs } from './cpu.ts';
import type { Json } from '../test/helpers/json.ts';

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};

async function serve() {
  const { loadConfig } = await import('../src/config.ts');
  const { startService } = await import('../src/main.ts');
  const { createProject } = await import('../src/services/platform/tenancy.ts');
  const config = loadConfig(
    { ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' },
    { port: 0, masterKey: randomBytes(32).toString('hex') },
  );
  const svc = await startService({ config });
  const project = await createProject(svc.ctx, { name: 'Bench shop', mode: 'test' });
  process.send!({ url: svc.url, vaultUrl: config.vaultUrl, key: project.api_key, pool: config.databasePool.size });
  process.on('disconnect', () => void svc.close().then(() => process.exit(0)));
}

async function yardstick() {
  const { startYardstick } = await import('./yardstick.ts');
  const y = await startYardstick({ databaseUrl: process.env.DATABASE_URL!, schema: 'public', poolSize: Number(process.env.BENCH_POOL) });
  process.send!({ url: y.url });
  process.on('disconnect', () => void y.close().then(() => process.exit(0)));
}

/** Starts this file with `flag` in a child process and answers what it sends when ready. */
async function child<T>(flag: string, env: Record<string, string>): Promise<{ proc: ChildProcess; ready: T }> {
  const proc = fork(fileURLToPath(import.meta.url), [flag], {
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_PROFILE && flag === '--serve' ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
    ],
    env: { ...process.env, ...env },
  });
  const ready = await new Promise<T>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as T));
    proc.once('exit', (code) => reject(new Error(`${flag} exited with ${code}`)));
  });
  return { proc, ready };
}

async function stop(proc: ChildProcess | undefined) {
  if (!proc?.connected) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.disconnect();
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (proc.exitCode === null) proc.kill();
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('set DATABASE_URL to a PostgreSQL server (the benchmark creates and drops its own database)');
  const clients = arg('clients', 8);
  const seconds = arg('seconds', 20);
  const warmup = arg('warmup', 3);
  const rounds = Math.max(1, arg('rounds', 4));
  const loadAtStart = loadavg();
  const dbName = `tender_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  let service: ChildProcess | undefined;
  let stick: ChildProcess | undefined;
  try {
    const started = await child<{ url: string; vaultUrl: string; key: string; pool: number }>('--serve', { DATABASE_URL: url.toString() });
    service = started.proc;
    const svc = started.ready;
    const ys = await child<{ url: string }>('--yardstick', { DATABASE_URL: url.toString(), BENCH_POOL: String(svc.pool) });
    stick = ys.proc;
    const auth = { authorization: 'Basic ' + Buffer.from(`${svc.key}:`).toString('base64'), 'content-type': 'application/json' };
    const post = async (u: string, body: unknown) => {
      const res = await fetch(u, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      const json: Json = await res.json();
      if (!res.ok) throw new Error(`${u}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const expiry = `12${new Date().getUTCFullYear() + 3}`;
    const orderBody = {
      currency: 'EUR',
      amount: 1995,
      merchant_order_id: 'bench',
      return_url: 'https://shop.example/return',
      transactions: [{ payment_method: 'credit-card' }],
    };
    const flow = async () => {
      const order = await post(`${svc.url}/v1/orders/`, orderBody);
      const txn = order.transactions[0];
      const card = await post(`${svc.vaultUrl}/v1/cards/`, {
        pan: '4111111111111111',
        expiry,
        name: 'Bench Customer',
        setup_token: txn.payment_method_details.setup_token,
      });
      const { redirect_url } = await post(`${svc.url}/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, {
        vault_token: card.vault_token,
        cvc: '123',
      });
      const done = await fetch(redirect_url, { redirect: 'manual' });
      await done.arrayBuffer();
      if (done.status !== 302 || !done.headers.get('location')?.startsWith('https://shop.example/return'))
        throw new Error(`3DS page answered ${done.status}`);
    };
    /** One request of the yardstick: the same order body inserted as one row. */
    const row = async () => {
      const res = await fetch(ys.ready.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(orderBody),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`yardstick answered ${res.status}`);
    };

    const run = async (step: () => Promise<void>, ms: number, latencies?: number[]) => {
      const end = Date.now() + ms;
      let errors = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (Date.now() < end) {
            const t0 = performance.now();
            try {
              await step();
              latencies?.push(performance.now() - t0);
            } catch (err) {
              if (++errors <= 3) console.error((err as Error).message);
            }
          }
        }),
      );
      return errors;
    };
    await run(flow, warmup * 1000);
    await run(row, warmup * 1000);
    // A server with autovacuum off (this machine's CI setting) never analyzes the tables, so the
    // planner keeps the plans it made for empty tables (sequential scans); a production server's
    // autovacuum analyzes them as they grow. Do its work here, outside the measured time.
    const stats = new pg.Client({ connectionString: url.toString() });
    await stats.connect();
    const [{ autovacuum }] = (await stats.query<{ autovacuum: string }>('SHOW autovacuum')).rows;
    const analyze = async () => {
      if (autovacuum === 'off') await stats.query('ANALYZE');
    };
    const latencies: number[] = [];
    let rows = 0;
    let flowTime = 0;
    let rowTime = 0;
    let errors = 0;
    const perRound = (seconds * 1000) / rounds;
    const roundRatios: string[] = [];
    // CPU time (ms) of the serving process and of the database's backends, per target
    const cpu = { flow: { node: 0, pg: 0 }, row: { node: 0, pg: 0 } };
    const measured = async (target: 'flow' | 'row', pid: number, fn: () => Promise<number>) => {
      const n0 = processCpuMs(pid);
      const p0 = postgresCpuMs(dbName);
      const t0 = performance.now();
      errors += await fn();
      cpu[target].node += processCpuMs(pid) - n0;
      cpu[target].pg += postgresCpuMs(dbName) - p0;
      return (performance.now() - t0) / 1000;
    };
    for (let r = 0; r < rounds; r++) {
      await analyze();
      const before = latencies.length;
      const f = await measured('flow', service.pid!, () => run(flow, perRound, latencies));
      flowTime += f;
      const done: number[] = [];
      const y = await measured('row', stick.pid!, () => run(row, perRound, done));
      rowTime += y;
      rows += done.length;
      const ratio = ((latencies.length - before) * 4) / f / (done.length / y);
      roundRatios.push(`${Math.round(ratio * 100)} %`);
      console.error(
        `round ${r + 1}: ${((latencies.length - before) / f).toFixed(1)} flows/s (${(((latencies.length - before) * 4) / f).toFixed(0)} requests/s), yardstick ${(done.length / y).toFixed(0)} requests/s: ${roundRatios[r]}`,
      );
    }
    await stats.end();
    latencies.sort((a, b) => a - b);
    const flowsPerS = latencies.length / flowTime;
    const yardstickPerS = rows / rowTime;
    const result = {
      date: new Date().toISOString().slice(0, 10),
      machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}`,
      load_average_at_start: loadAtStart.map((l) => Math.round(l * 10) / 10),
      analyzed_each_round: autovacuum === 'off',
      store: 'PostgreSQL',
      clients,
      seconds_per_target: Math.round(flowTime),
      rounds,
      flows: latencies.length,
      errors,
      flows_per_s: Math.round(flowsPerS * 10) / 10,
      requests_per_s: Math.round(flowsPerS * 4),
      p50_ms: Math.round(pct(latencies, 50)),
      p90_ms: Math.round(pct(latencies, 90)),
      p99_ms: Math.round(pct(latencies, 99)),
      yardstick_requests_per_s: Math.round(yardstickPerS),
      ratio: `${Math.round(((flowsPerS * 4) / yardstickPerS) * 100)} % of the yardstick's request rate (target >= 40 %)`,
      round_ratios: roundRatios.join(', '),
      // CPU per request (ms): the serving Node process, and the database's PostgreSQL backends
      cpu_per_request_ms: {
        card_flow: { node: round3(cpu.flow.node / (latencies.length * 4)), postgres: round3(cpu.flow.pg / (latencies.length * 4)) },
        yardstick: { node: round3(cpu.row.node / rows), postgres: round3(cpu.row.pg / rows) },
      },
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await stop(stick);
    await stop(service);
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((e) => console.error(e.message));
    await admin.end();
  }
}

if (process.argv.includes('--serve')) await serve();
else if (process.argv.includes('--yardstick')) await yardstick();
else await main();
