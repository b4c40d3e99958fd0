/**
 * Benchmark of the full frictionless card flow on PostgreSQL (bench/common.ts, cardFlow):
 *   create order -> vault the card -> authenticate -> follow the 3-D Secure redirect (authorizes)
 * N concurrent clients loop over the flow for a fixed time; prints flows/s and p50/p90/p99, and
 * the request rate of the flow (4 requests a flow) against the yardstick's (bench/yardstick.ts:
 * a bare Fastify route inserting one row) measured in the same run by the same clients. The
 * targets take turns in `--rounds` rounds, so a change in the machine's load weighs on all alike.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/card-flow.ts --clients 8 --seconds 20 --rounds 4
 *
 * `--against <checkout>` runs another checkout of Tender (its own `bench/card-flow.ts --serve`, on
 * a throwaway database of its own) beside this one and sends it the same four requests in the
 * same rounds, the two flows' order alternating: it prints both flows' rates, this one's over the
 * other's, and each one's ratio to the same yardstick rounds. That is how a change is compared
 * with the code before it "in the same hour": two separate runs differ by the yardstick's own
 * spread between runs (on this machine 1,400 to 2,200 requests/s), which is larger than the
 * difference measured (docs/performance-cards.md).
 *
 * `--live` adds a live project of the same merchant bound to `tender acquirer-host` (a process
 * of its own, ISO 8583 over a loopback TCP socket) and runs the same four requests against it in
 * the same rounds (the two projects' order alternates): it prints both flows' rates, the ratio
 * live / simulator, and each one's ratio to the yardstick. The live flow differs from the test
 * project's in what the service does, not in the requests: its 3-D Secure is `U` (no 3-D Secure
 * server yet; the page goes straight to the authorization), and the authorization is a journaled
 * 0200 sale answered by the host instead of the in-process simulator (docs/performance-cards.md).
 *
 * The service and the yardstick each run in a child process of their own (own event loop, as in
 * production) on a throwaway database `tender_bench_<random>` that is dropped at the end. Rate
 * limiting is off, logs at warn. `--seconds` is per target, split over the rounds.
 * BENCH_PROFILE=<dir> writes a CPU profile of the service process there (node --cpu-prof).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postgresBackendsCpuMs, postgresCpuSince, processCpuMs } from './cpu.ts';
import { arg, benchDatabase, textArg, cardFlow, child, pct, serveYardstick, startBenchService, stop, yardstickRow } from './common.ts';
import { startHostProcess, type HostProcess } from '../test/helpers/acquirer-host.ts';

interface Ready {
  url: string;
  vaultUrl: string;
  key: string;
  /** the live project's key (with --live) */
  liveKey?: string;
  pool: number;
}

/** The service, a test project, and with BENCH_ACQUIRER a live project of the same merchant bound to that host. */
async function serve() {
  const { svc, config } = await startBenchService({ LIVE_REQUIRES_TLS: 'false' });
  const { createBoundProject } = await import('../src/services/payments/acquirer-link.ts');
  const project = await createBoundProject(svc.ctx, { name: 'Bench shop', mode: 'test' });
  const live = process.env.BENCH_ACQUIRER
    ? await createBoundProject(svc.ctx, {
        merchantId: project.merchant_id,
        name: 'Bench shop live',
        mode: 'live',
        acquirer: process.env.BENCH_ACQUIRER,
        terminalId: 'BENCH001',
        cardAcceptorId: 'BENCHSHOP000001',
      })
    : undefined;
  const ready: Ready = {
    url: svc.url,
    vaultUrl: config.vaultUrl,
    key: project.api_key,
    liveKey: live?.api_key,
    pool: config.databasePool.size,
  };
  process.send!(ready);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const percent = (x: number) => `${Math.round(x * 100)} %`;

type Target = 'flow' | 'live' | 'base' | 'row';

async function main() {
  const clients = arg('clients', 8);
  const seconds = arg('seconds', 20);
  const warmup = arg('warmup', 3);
  const rounds = Math.max(1, arg('rounds', 4));
  const withLive = process.argv.includes('--live');
  const against = textArg('against'); // a checkout of Tender
  const loadAtStart = loadavg();
  const db = await benchDatabase(process.env.DATABASE_URL);
  const self = fileURLToPath(import.meta.url);
  let service: ChildProcess | undefined;
  let stick: ChildProcess | undefined;
  let host: HostProcess | undefined;
  let other: ChildProcess | undefined;
  const otherDb = against ? await benchDatabase(process.env.DATABASE_URL) : undefined;
  const settlement = withLive ? mkdtempSync(join(tmpdir(), 'tender-bench-host-')) : undefined;
  try {
    if (settlement) host = await startHostProcess(settlement);
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
    const started = await child<Ready>(self, '--serve', { DATABASE_URL: db.url, BENCH_ACQUIRER: host?.url ?? '' }, profile);
    service = started.proc;
    const svc = started.ready;
    const ys = await child<{ url: string }>(self, '--yardstick', { DATABASE_URL: db.url, BENCH_POOL: String(svc.pool) });
    stick = ys.proc;
    const base = against
      ? await child<Ready>(join(against, 'bench', 'card-flow.ts'), '--serve', { DATABASE_URL: otherDb!.url, BENCH_ACQUIRER: '' })
      : undefined;
    other = base?.proc;
    const steps: Record<Target, () => Promise<unknown>> = {
      flow: cardFlow(svc, svc.key),
      live: cardFlow(svc, svc.liveKey ?? ''),
      base: base ? cardFlow(base.ready, base.ready.key) : async () => undefined,
      row: yardstickRow(ys.ready.url),
    };

    const run = async (step: () => Promise<unknown>, ms: number, latencies: number[]) => {
      const end = Date.now() + ms;
      let errors = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (Date.now() < end) {
            const t0 = performance.now();
            try {
              await step();
              latencies.push(performance.now() - t0);
            } catch (err) {
              if (++errors <= 3) console.error((err as Error).message);
            }
          }
        }),
      );
      return errors;
    };
    const flows: Target[] = ['flow', ...(withLive ? ['live' as const] : []), ...(against ? ['base' as const] : [])];
    for (const t of [...flows, 'row' as const]) await run(steps[t], warmup * 1000, []);
    // A server with autovacuum off (this machine's CI setting) never analyzes the tables, so the
    // planner keeps the plans it made for empty tables (sequential scans), and never vacuums them,
    // so every update's dead rows stay in the tables and indexes a flow reads; a production
    // server's autovacuum does both as they grow. Do its work here, outside the measured time, on
    // every database of the run (--against has its own).
    const stats = new pg.Client({ connectionString: db.url });
    await stats.connect();
    const [{ autovacuum }] = (await stats.query<{ autovacuum: string }>('SHOW autovacuum')).rows;
    const others = otherDb ? [new pg.Client({ connectionString: otherDb.url })] : [];
    for (const c of others) await c.connect();
    const maintain = async () => {
      if (autovacuum === 'off') for (const c of [stats, ...others]) await c.query('VACUUM (ANALYZE)');
    };
    const blank = () => ({ latencies: [] as number[], time: 0, node: 0, pg: 0, host: 0 });
    const got: Record<Target, ReturnType<typeof blank>> = { flow: blank(), live: blank(), base: blank(), row: blank() };
    let errors = 0;
    const perRound = (seconds * 1000) / rounds;
    const lines: string[] = [];
    /** One target's turn: its rate (steps a second) and the CPU time (ms) its processes spent. */
    const turn = async (target: Target) => {
      const g = got[target];
      const pid = { row: stick, base: other, flow: service, live: service }[target]!.pid!;
      const database = target === 'base' ? otherDb!.name : db.name;
      const before = g.latencies.length;
      const n0 = processCpuMs(pid);
      const h0 = host ? processCpuMs(host.child.pid!) : 0;
      const p0 = postgresBackendsCpuMs(database);
      const t0 = performance.now();
      errors += await run(steps[target], perRound, g.latencies);
      const s = (performance.now() - t0) / 1000;
      g.time += s;
      g.node += processCpuMs(pid) - n0;
      g.host += host ? processCpuMs(host.child.pid!) - h0 : 0;
      g.pg += postgresCpuSince(database, p0);
      return (g.latencies.length - before) / s;
    };
    for (let r = 0; r < rounds; r++) {
      await maintain();
      // the two flows' order alternates, so neither always runs on the warmer database
      const rate = { flow: 0, live: 0, base: 0, row: 0 };
      for (const t of r % 2 ? [...flows].reverse() : flows) rate[t] = await turn(t);
      rate.row = await turn('row');
      const parts = flows.map(
        (t) =>
          `${{ flow: 'simulator', live: 'live', base: 'against' }[t as 'flow']} ${rate[t].toFixed(1)} flows/s, ${percent((rate[t] * 4) / rate.row)}`,
      );
      if (withLive) parts.push(`live / simulator ${percent(rate.live / rate.flow)}`);
      if (against) parts.push(`this / against ${percent(rate.flow / rate.base)}`);
      lines.push(`round ${r + 1}: ${parts.join('; ')} (yardstick ${rate.row.toFixed(0)} requests/s)`);
      console.error(lines.at(-1));
    }
    // what each flow's payments ended as (a live payment the host refused still answers the 302)
    const outcomes = await stats.query<{ project: string; status: string; n: number }>(
      `SELECT CASE WHEN p.mode = 'live' THEN 'live' ELSE 'simulator' END AS project, t.status, count(*)::int AS n
       FROM transactions t JOIN projects p ON p.id = t.project_id GROUP BY 1, 2 ORDER BY 1, 2`,
    );
    await stats.end();
    for (const c of others) await c.end();
    const perS = (t: Target) => got[t].latencies.length / got[t].time;
    const summary = (t: 'flow' | 'live' | 'base') => {
      const g = got[t];
      const sorted = [...g.latencies].sort((a, b) => a - b);
      const requests = g.latencies.length * 4;
      return {
        flows: g.latencies.length,
        flows_per_s: Math.round(perS(t) * 10) / 10,
        requests_per_s: Math.round(perS(t) * 4),
        p50_ms: Math.round(pct(sorted, 50)),
        p90_ms: Math.round(pct(sorted, 90)),
        p99_ms: Math.round(pct(sorted, 99)),
        ratio: `${percent((perS(t) * 4) / perS('row'))} of the yardstick's request rate`,
        // CPU per request (ms): the serving Node process, the database's backends, the acquiring host
        cpu_per_request_ms: {
          node: round3(g.node / requests),
          postgres: round3(g.pg / requests),
          ...(t === 'live' ? { host: round3(g.host / requests) } : {}),
        },
      };
    };
    const result = {
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}`,
      load_average_at_start: loadAtStart.map((l) => Math.round(l * 10) / 10),
      load_average_at_end: loadavg().map((l) => Math.round(l * 10) / 10),
      vacuumed_and_analyzed_each_round: autovacuum === 'off',
      store: 'PostgreSQL',
      clients,
      seconds_per_target: Math.round(got.flow.time),
      rounds,
      errors,
      ...summary('flow'),
      ...(withLive ? { live: summary('live'), live_over_simulator: `${percent(perS('live') / perS('flow'))} (target >= 80 %)` } : {}),
      ...(against ? { against: { checkout: against, ...summary('base') }, this_over_against: percent(perS('flow') / perS('base')) } : {}),
      yardstick_requests_per_s: Math.round(perS('row')),
      yardstick_cpu_per_request_ms: {
        node: round3(got.row.node / got.row.latencies.length),
        postgres: round3(got.row.pg / got.row.latencies.length),
      },
      target: 'the simulator flow >= 40 % of the yardstick',
      rounds_detail: lines,
      outcomes: Object.fromEntries(outcomes.rows.map((o) => [`${o.project} ${o.status}`, o.n])),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await stop(stick);
    await stop(service);
    await stop(other);
    host?.stop();
    if (settlement) rmSync(settlement, { recursive: true, force: true });
    await db.drop();
    await otherDb?.drop();
  }
}

if (process.argv.includes('--serve')) await serve();
else if (process.argv.includes('--yardstick')) await serveYardstick();
else await main();
