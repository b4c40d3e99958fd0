/**
 * What metrics and tracing cost: the card flow of bench/card-flow.ts (create order, vault the
 * card, authenticate, the 3-D Secure redirect that authorizes) against two services in the same
 * run, one with telemetry off, one with it on (METRICS_PORT scraped every second, and
 * OTEL_EXPORTER_OTLP_ENDPOINT exporting every span to a local OTLP/HTTP receiver that reads and
 * drops them), and the one-row yardstick (bench/yardstick.ts). The three take turns in
 * `--rounds` rounds, so the machine's load weighs on all alike; the result is each service's
 * request rate as a share of the yardstick's, and the ratio of the two (docs/performance.md).
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/telemetry-cost.ts --clients 8 --seconds 30 --rounds 5
 *
 * `--only metrics` or `--only tracing` turns one of the two on in the second service.
 * Each runs in a child process of its own on a throwaway database `tender_bench_<random>`.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { processCpuMs } from './cpu.ts';
import { arg, benchDatabase, cardFlow, child, serveYardstick, startBenchService, stop, yardstickRow } from './common.ts';

async function serve() {
  const { svc, config } = await startBenchService({ LOG_FORMAT: 'json' });
  const { createProject } = await import('../src/services/platform/tenancy.ts');
  const project = await createProject(svc.ctx, { name: 'Bench shop', mode: 'test' });
  process.send!({ url: svc.url, vaultUrl: config.vaultUrl, key: project.api_key, pool: config.databasePool.size });
}

interface Svc {
  url: string;
  vaultUrl: string;
  key: string;
  pool: number;
}

async function main() {
  const clients = arg('clients', 8);
  const seconds = arg('seconds', 30);
  const rounds = Math.max(1, arg('rounds', 5));
  const loadAtStart = loadavg();
  const db = await benchDatabase(process.env.DATABASE_URL);
  const self = fileURLToPath(import.meta.url);
  // the OTLP receiver: reads every export and drops it
  let exported = 0;
  const receiver = createServer((req, res) => {
    req.on('data', (c: Buffer) => (exported += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const otlpPort = (receiver.address() as { port: number }).port;
  const metricsPort = 20_000 + Math.floor(Math.random() * 20_000);
  const procs: ChildProcess[] = [];
  let scraper: NodeJS.Timeout | undefined;
  try {
    const off = await child<Svc>(self, '--serve', { DATABASE_URL: db.url, METRICS_PORT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    procs.push(off.proc);
    // --only metrics|tracing: one of the two on, to see which costs what
    const only = process.argv[process.argv.indexOf('--only') + 1];
    const on = await child<Svc>(self, '--serve', {
      DATABASE_URL: db.url,
      METRICS_PORT: only === 'tracing' ? '' : String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: only === 'metrics' ? '' : `http://127.0.0.1:${otlpPort}`,
    });
    procs.push(on.proc);
    const ys = await child<{ url: string }>(self, '--yardstick', { DATABASE_URL: db.url, BENCH_POOL: String(off.ready.pool) });
    procs.push(ys.proc);
    // Prometheus's part: a scrape of the service with telemetry every second
    let scrapes = 0;
    scraper = setInterval(() => {
      fetch(`http://127.0.0.1:${metricsPort}/metrics`)
        .then((r) => r.text())
        .then(() => scrapes++)
        .catch(() => {});
    }, 1000);
    const flowOf = (svc: Svc) => cardFlow(svc, svc.key);
    const row = yardstickRow(ys.ready.url);
    /** requests a second of `step` by `clients` clients for ms (a flow is 4 requests) */
    const rate = async (step: () => Promise<unknown>, ms: number, requestsPerStep: number, pid?: number) => {
      const cpu0 = pid ? processCpuMs(pid) : 0;
      const end = Date.now() + ms;
      let n = 0;
      let errors = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (Date.now() < end) {
            try {
              await step();
              n++;
            } catch (err) {
              if (++errors <= 3) console.error((err as Error).message);
            }
          }
        }),
      );
      return {
        perS: (n * requestsPerStep) / ((performance.now() - t0) / 1000),
        errors,
        cpuMs: pid ? processCpuMs(pid) - cpu0 : 0,
        requests: n * requestsPerStep,
      };
    };
    const flowOff = flowOf(off.ready);
    const flowOn = flowOf(on.ready);
    await rate(flowOff, 3000, 4);
    await rate(flowOn, 3000, 4);
    await rate(row, 3000, 1);
    const perRound = (seconds * 1000) / rounds;
    const sums = { off: 0, on: 0, row: 0 };
    // CPU time of each service's process and the requests it served: steadier than rates on a shared machine
    const cpu = { off: { ms: 0, requests: 0 }, on: { ms: 0, requests: 0 } };
    const lines: string[] = [];
    let errors = 0;
    for (let r = 0; r < rounds; r++) {
      // the order of the two services alternates, so neither always runs on a warmer database
      const order = r % 2 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      const got = { off: 0, on: 0, row: 0 };
      for (const which of order) {
        const x = await rate(which === 'off' ? flowOff : flowOn, perRound, 4, (which === 'off' ? off : on).proc.pid);
        got[which] = x.perS;
        cpu[which].ms += x.cpuMs;
        cpu[which].requests += x.requests;
        errors += x.errors;
      }
      const y = await rate(row, perRound, 1);
      got.row = y.perS;
      errors += y.errors;
      for (const k of ['off', 'on', 'row'] as const) sums[k] += got[k];
      lines.push(
        `round ${r + 1}: off ${Math.round((got.off / got.row) * 100)} %, on ${Math.round((got.on / got.row) * 100)} % of the yardstick (${got.row.toFixed(0)} requests/s)`,
      );
      console.error(lines.at(-1));
    }
    const offRatio = sums.off / sums.row;
    const onRatio = sums.on / sums.row;
    console.log(
      JSON.stringify(
        {
          date: new Date().toISOString().slice(0, 10),
          machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}`,
          load_average_at_start: loadAtStart.map((l) => Math.round(l * 10) / 10),
          load_average_at_end: loadavg().map((l) => Math.round(l * 10) / 10),
          clients,
          rounds,
          seconds_per_target: seconds,
          errors,
          requests_per_s: {
            telemetry_off: Math.round(sums.off / rounds),
            telemetry_on: Math.round(sums.on / rounds),
            yardstick: Math.round(sums.row / rounds),
          },
          ratio_to_yardstick: {
            telemetry_off: `${Math.round(offRatio * 1000) / 10} %`,
            telemetry_on: `${Math.round(onRatio * 1000) / 10} %`,
          },
          service_cpu_ms_per_request: {
            telemetry_off: Math.round((cpu.off.ms / cpu.off.requests) * 1000) / 1000,
            telemetry_on: Math.round((cpu.on.ms / cpu.on.requests) * 1000) / 1000,
          },
          on_over_off: `${Math.round((onRatio / offRatio) * 1000) / 10} % (target: >= 90 %)`,
          scrapes,
          otlp_bytes_exported: exported,
          rounds_detail: lines,
        },
        null,
        2,
      ),
    );
  } finally {
    if (scraper) clearInterval(scraper);
    for (const p of procs) await stop(p);
    receiver.close();
    await db.drop();
  }
}

if (process.argv.includes('--serve')) await serve();
else if (process.argv.includes('--yardstick')) await serveYardstick();
else await main();
