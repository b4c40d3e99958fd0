import { randomBytes } from 'node:crypto';
import cliProgress from 'cli-progress';
import { loadConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { openStore } from '../store/db/open.ts';
import { readLock } from '../store/db/lock.ts';
import { buildContext } from '../main.ts';
import type { AdminAnswer } from './commands.ts';
import { MAX_SEED_ORDERS, seedOrders, type SeedResult } from '../services/platform/seed.ts';

export interface SeedCliOptions {
  project: string;
  orders: string;
  days?: string;
  json?: boolean;
}

/** Orders per request when a running server holds the embedded store: the bar moves between requests. */
const REMOTE_PART = 5000;

/**
 * `tender seed --project ID --orders N`: seeds on the store directly, or in parts through the
 * server that holds the embedded store, with a progress bar on stderr (stdout keeps the result).
 */
export async function seedCli(o: SeedCliOptions) {
  const total = Number(o.orders);
  if (!Number.isSafeInteger(total) || total < 1 || total > MAX_SEED_ORDERS)
    throw new Error(`--orders must be an integer from 1 to ${MAX_SEED_ORDERS}`);
  const days = o.days === undefined ? undefined : Number(o.days);
  if (days !== undefined && !(days > 0)) throw new Error('--days must be a positive number');
  const config = loadConfig();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: 'seeding {bar} {percentage}% | {value}/{total} orders | {rate} orders/s | ETA {eta_formatted}',
      hideCursor: true,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  bar.start(total, 0, { rate: 0 });
  const progress = (done: number) => bar.update(done, { rate: Math.round(done / Math.max(0.001, (Date.now() - started) / 1000)) });
  let result: SeedResult;
  try {
    const holder = config.databaseUrl ? undefined : readLock(config.dataDir);
    if (holder) {
      const prefix = `ORD-${randomBytes(3).toString('hex')}-`;
      let children = 0;
      let first: SeedResult | undefined;
      for (let from = 1; from <= total; from += REMOTE_PART) {
        const orders = Math.min(REMOTE_PART, total - from + 1);
        const res = await fetch(`${holder.url}/_admin/cli`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${holder.token}` },
          body: JSON.stringify({ command: 'seed', args: { project: o.project, orders, days, prefix, first: from } }),
        });
        const body = (await res.json()) as AdminAnswer<SeedResult>;
        if (!res.ok) throw new Error(body?.error?.value ?? `server answered ${res.status}`);
        first ??= body.result;
        children += body.result.child_orders;
        progress(from + orders - 1);
      }
      result = { ...first!, orders: total, child_orders: children };
    } else {
      const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
      const db = await openStore(config);
      try {
        const ctx = buildContext({ db, config, log });
        result = await seedOrders(ctx, { projectId: o.project, orders: total, days, concurrency: 2, onProgress: progress });
      } finally {
        await db.close();
      }
    }
  } finally {
    bar.stop();
  }
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(
    o.json
      ? JSON.stringify({ ...result, seconds }) + '\n'
      : `seeded ${result.orders} orders (+${result.child_orders} capture, void, refund and chargeback orders) into project ${result.project_id} in ${seconds.toFixed(1)} s\n` +
          `merchant_order_id ${result.prefix}00000001 ... created ${result.from} .. ${result.to}\n`,
  );
}
