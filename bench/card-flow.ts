/**
 * Benchmark of the full frictionless card flow on PostgreSQL:
 *   create order -> vault the card -> authenticate -> follow the 3-D Secure redirect (authorizes)
 * N concurrent clients loop over the flow for a fixed time; prints flows/s and p50/p90/p99.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/card-flow.ts --clients 8 --seconds 20
 *
 * The service runs in a child process (its own event loop, as in production) on a throwaway
 * database `tender_bench_<random>` that is dropped at the end. Rate limiting is off, logs at warn.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};

async function serve() {
  const { loadConfig } = await import('../src/config.ts');
  const { startService } = await import('../src/main.ts');
  const { createProject } = await import('../src/services/tenancy.ts');
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0' }, { port: 0, masterKey: randomBytes(32).toString('hex') });
  const svc = await startService({ config });
  const project = await createProject(svc.ctx, { name: 'Bench shop', mode: 'test' });
  process.send!({ url: svc.url, vaultUrl: config.vaultUrl, key: project.api_key });
  process.on('disconnect', () => void svc.close().then(() => process.exit(0)));
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('set DATABASE_URL to a PostgreSQL server (the benchmark creates and drops its own database)');
  const clients = arg('clients', 8);
  const seconds = arg('seconds', 20);
  const warmup = arg('warmup', 3);
  const dbName = `tender_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  let child: ChildProcess | undefined;
  try {
    child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'], env: { ...process.env, DATABASE_URL: url.toString() } });
    const svc = await new Promise<{ url: string; vaultUrl: string; key: string }>((resolve, reject) => {
      child!.once('message', (m) => resolve(m as any));
      child!.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
    });
    const auth = { authorization: 'Basic ' + Buffer.from(`${svc.key}:`).toString('base64'), 'content-type': 'application/json' };
    const post = async (u: string, body: unknown) => {
      const res = await fetch(u, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      const json: any = await res.json();
      if (!res.ok) throw new Error(`${u}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const expiry = `12${new Date().getUTCFullYear() + 3}`;
    const flow = async () => {
      const order = await post(`${svc.url}/v1/orders/`, {
        currency: 'EUR', amount: 1995, merchant_order_id: 'bench', return_url: 'https://shop.example/return',
        transactions: [{ payment_method: 'credit-card' }],
      });
      const txn = order.transactions[0];
      const card = await post(`${svc.vaultUrl}/v1/cards/`, { pan: '4111111111111111', expiry, name: 'Bench Customer', setup_token: txn.payment_method_details.setup_token });
      const { redirect_url } = await post(`${svc.url}/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, { vault_token: card.vault_token, cvc: '123' });
      const done = await fetch(redirect_url, { redirect: 'manual' });
      await done.arrayBuffer();
      if (done.status !== 302 || !done.headers.get('location')?.startsWith('https://shop.example/return')) throw new Error(`3DS page answered ${done.status}`);
    };

    const run = async (ms: number, latencies?: number[]) => {
      const end = Date.now() + ms;
      let errors = 0;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (Date.now() < end) {
            const t0 = performance.now();
            try {
              await flow();
              latencies?.push(performance.now() - t0);
            } catch (err) {
              if (++errors <= 3) console.error((err as Error).message);
            }
          }
        }),
      );
      return errors;
    };
    await run(warmup * 1000);
    const latencies: number[] = [];
    const t0 = performance.now();
    const errors = await run(seconds * 1000, latencies);
    const elapsed = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    const result = {
      date: new Date().toISOString().slice(0, 10),
      machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}`,
      store: 'PostgreSQL',
      clients,
      seconds: Math.round(elapsed),
      flows: latencies.length,
      errors,
      flows_per_s: Math.round((latencies.length / elapsed) * 10) / 10,
      p50_ms: Math.round(pct(latencies, 50)),
      p90_ms: Math.round(pct(latencies, 90)),
      p99_ms: Math.round(pct(latencies, 99)),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    if (child && child.connected) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.disconnect();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill();
    }
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch((e) => console.error(e.message));
    await admin.end();
  }
}

if (process.argv.includes('--serve')) await serve();
else await main();
