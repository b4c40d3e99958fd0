/**
 * What the service benchmarks share (card-flow.ts, telemetry-cost.ts, two-merchants.ts): command
 * line numbers, a throwaway database, the service and the yardstick in child processes of their
 * own, and one card flow through the API as a shop and its customer make it.
 */
import { randomPan } from '../test/helpers/cards.ts';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Json } from '../test/helpers/json.ts';

/** `--name N` from the command line, or d. */
export const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};

/** A text option's value (`--name value`); undefined when absent, a throw when given without one. */
export const textArg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith('--')) throw new Error(`--${name} needs a value`);
  return v;
};

/** The p-th percentile of sorted values (NaN when there are none). */
export const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;

/** `tender_bench_<random>` on the server of `base`, created now; drop() removes it whatever still uses it. */
export async function benchDatabase(base: string | undefined) {
  if (!base) throw new Error('set DATABASE_URL to a PostgreSQL server (the benchmark creates and drops its own database)');
  const name = `tender_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch((e: Error) => console.error(e.message));
      await admin.end();
    },
  };
}

/**
 * In a child process: the service on DATABASE_URL with logs at `warn` (unless `env` says
 * otherwise) and rate limiting off, on a free port, closed when the parent disconnects.
 */
export async function startBenchService(env: Record<string, string> = {}) {
  const { loadConfig } = await import('../src/config.ts');
  const { startService } = await import('../src/main.ts');
  const config = loadConfig(
    { ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '0', ...env },
    { port: 0, masterKey: randomBytes(32).toString('hex') },
  );
  const svc = await startService({ config });
  process.on('disconnect', () => void svc.close().then(() => process.exit(0)));
  return { svc, config };
}

/** In a child process: the yardstick (bench/yardstick.ts) on DATABASE_URL with BENCH_POOL connections; sends its url. */
export async function serveYardstick() {
  const { startYardstick } = await import('./yardstick.ts');
  const y = await startYardstick({ databaseUrl: process.env.DATABASE_URL!, schema: 'public', poolSize: Number(process.env.BENCH_POOL) });
  process.send!({ url: y.url });
  process.on('disconnect', () => void y.close().then(() => process.exit(0)));
}

/** Starts `file` (a benchmark's own path) with `flag` in a child process and answers what it sends when ready. */
export async function child<T>(
  file: string,
  flag: string,
  env: Record<string, string>,
  execArgv: string[] = [],
): Promise<{ proc: ChildProcess; ready: T }> {
  const proc = fork(file, [flag], { execArgv: ['--import', 'tsx', ...execArgv], env: { ...process.env, ...env } });
  const ready = await new Promise<T>((resolve, reject) => {
    proc.once('message', (m) => resolve(m as T));
    proc.once('exit', (code) => reject(new Error(`${flag} exited with ${code}`)));
  });
  return { proc, ready };
}

/** Disconnects a child (it closes and exits), and kills it when it has not exited within ms. */
export async function stop(proc: ChildProcess | undefined, ms = 5000) {
  if (!proc?.connected) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.disconnect();
  await Promise.race([exited, new Promise((r) => setTimeout(r, ms))]);
  if (proc.exitCode === null) proc.kill();
}

/** The order every card flow creates (and the yardstick inserts as one row). */
export const ORDER_BODY = {
  currency: 'EUR',
  amount: 1995,
  merchant_order_id: 'bench',
  return_url: 'https://shop.example/return',
  transactions: [{ payment_method: 'credit-card' }],
};

/**
 * The full frictionless card flow, four requests: create the order, vault the card,
 * authenticate, follow the 3-D Secure redirect (the page authorizes and answers the 302 to
 * return_url). Answers the order's id. `order` adds to the order's body (a webhook_url); `pan`
 * gives each flow's card: by default a random card each time, as a shop's customers pay, so the
 * velocity limits (on by default, as in production) let every flow through; one card paying
 * hundreds of times a minute is what the per-card limit refuses (docs/risk.md).
 */
export function cardFlow(
  svc: { url: string; vaultUrl: string },
  key: string,
  order: Record<string, Json> = {},
  pan: () => string = () => randomPan('4'),
) {
  const headers = { authorization: 'Basic ' + Buffer.from(`${key}:`).toString('base64'), 'content-type': 'application/json' };
  const post = async (u: string, body: unknown) => {
    const res = await fetch(u, { method: 'POST', headers, body: JSON.stringify(body) });
    const json: Json = await res.json();
    if (!res.ok) throw new Error(`${u}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const expiry = `12${new Date().getUTCFullYear() + 3}`;
  const body = { ...ORDER_BODY, ...order };
  return async (): Promise<string> => {
    const created = await post(`${svc.url}/v1/orders/`, body);
    const txn = created.transactions[0];
    const card = await post(`${svc.vaultUrl}/v1/cards/`, {
      pan: pan(),
      expiry,
      name: 'Bench Customer',
      setup_token: txn.payment_method_details.setup_token,
    });
    const { redirect_url } = await post(`${svc.url}/v1/orders/${created.id}/transactions/${txn.id}/authenticate/`, {
      vault_token: card.vault_token,
      cvc: '123',
    });
    const done = await fetch(redirect_url, { redirect: 'manual' });
    await done.arrayBuffer();
    if (done.status !== 302 || !done.headers.get('location')?.startsWith(body.return_url))
      throw new Error(`3DS page answered ${done.status}`);
    return created.id;
  };
}

/** One request of the yardstick at `url`: the order body inserted as one row. */
export function yardstickRow(url: string) {
  return async () => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ORDER_BODY) });
    await res.arrayBuffer();
    if (res.status !== 201) throw new Error(`yardstick answered ${res.status}`);
  };
}
