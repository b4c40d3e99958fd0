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
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { processCpuMs } from './cpu.ts';

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};

async function serve() {
  const { loadConfig } = await import('../src/config.ts');
  const { startService } = await import('../src/main.ts');
  const { createProject } = await import('../src/services/platform/tenancy.ts');
  const config = loadConfig(
    { ...process.env, LOG_LEVEL: 'warn', LOG_FORMAT: 'json', RATE_LIMIT_PER_MINUTE: '0' },
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

async function child<T>(flag: string, env: Record<string, string>): Promise<{ proc: ChildProcess; ready: T }> {
  const proc = fork(fileURLToPath(import.meta.url), [flag], { execArgv: ['--import', 'tsx'], env: { ...process.env, ...env } });
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

interface Svc {
  url: string;
  vaultUrl: string;
  key: string;
  pool: number;
}

async function main() {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('set DATABASE_URL to a PostgreSQL server (the benchmark creates and drops its own database)');
  const clients = arg('clients', 8);
  const seconds = arg('seconds', 30);
  const rounds = Math.max(1, arg('rounds', 5));
  const loadAtStart = loadavg();
  const dbName = `tender_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
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
    const off = await child<Svc>('--serve', { DATABASE_URL: url.toString(), METRICS_PORT: '', OTEL_EXPORTER_OTLP_ENDPOINT: '' });
    procs.push(off.proc);
    // --only metrics|tracing: one of the two on, to see which costs what
    const only = process.argv[process.argv.indexOf('--only') + 1];
    const on = await child<Svc>('--serve', {
      DATABASE_URL: url.toString(),
      METRICS_PORT: only === 'tracing' ? '' : String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: only === 'metrics' ? '' : `http://127.0.0.1:${otlpPort}`,
    });
    procs.push(on.proc);
    const ys = await child<{ url: string }>('--yardstick', { DATABASE_URL: url.toString(), BENCH_POOL: String(off.ready.pool) });
    procs.push(ys.proc);
    // Prometheus's part: a scrape of the service with telemetry every second
    let scrapes = 0;
    scraper = setInterval(() => {
      fetch(`http://127.0.0.1:${metricsPort}/metrics`)
        .then((r) => r.text())
        .then(() => scrapes++)
        .catch(() => {});
    }, 1000);
    const expiry = `12${new Date().getUTCFullYear() + 3}`;
    const orderBody = {
      currency: 'EUR',
      amount: 1995,
      merchant_order_id: 'bench',
      return_url: 'https://shop.example/return',
      transactions: [{ payment_method: 'credit-card' }],
    };
    const flowOf = (svc: Svc) => {
      const auth = { authorization: 'Basic ' + Buffer.from(`${svc.key}:`).toString('base64'), 'content-type': 'application/json' };
      const post = async (u: string, body: unknown) => {
        const res = await fetch(u, { method: 'POST', headers: auth, body: JSON.stringify(body) });
        const json = (await res.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
        if (!res.ok) throw new Error(`${u}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      };
      return async () => {
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
        if (done.status !== 302) throw new Error(`3DS page answered ${done.status}`);
      };
    };
    const row = async () => {
      const res = await fetch(ys.ready.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(orderBody),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`yardstick answered ${res.status}`);
    };
    /** requests a second of `step` by `clients` clients for ms (a flow is 4 requests) */
    const rate = async (step: () => Promise<void>, ms: number, requestsPerStep: number, pid?: number) => {
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
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((e) => console.error(e.message));
    await admin.end();
  }
}

if (process.argv.includes('--serve')) await serve();
else if (process.argv.includes('--yardstick')) await yardstick();
else await main();
