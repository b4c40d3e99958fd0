/**
 * Two merchants on one Tender (issue 28): a well-behaved merchant runs card flows (create order,
 * vault the card, authenticate, follow the 3-D Secure redirect) with a webhook URL on each order,
 * first alone, then while a noisy merchant does its worst on the same service:
 *   - expensive searches (the costliest the bound lets through, and ones over it),
 *   - CSV exports of a large report whose client reads a little and then stalls,
 *   - orders whose webhooks go to an endpoint that accepts and never answers,
 *   - a stream of failed portal sign-ins.
 * Prints the good merchant's card-flow p50/p99 and its webhook delay (from the flow's last answer
 * to the webhook's arrival) in both phases, and what the noisy merchant got back.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/two-merchants.ts --clients 4 --seconds 20
 *
 * The service runs in a child process on a throwaway database `tender_bench_<random>` (dropped at
 * the end); every server and client is on loopback; every loop ends with its phase.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Json } from '../test/helpers/json.ts';
import { arg, benchDatabase, cardFlow, child, pct, startBenchService, stop } from './common.ts';

interface Ready {
  url: string;
  vaultUrl: string;
  portalUrl: string;
  good: string;
  noisy: string;
  noisyEmail: string;
}

async function serve() {
  const { svc, config } = await startBenchService({
    LOG_LEVEL: 'error',
    WEBHOOK_RETRY_INTERVAL_MS: '5000',
    WEBHOOK_PRIVATE_ADDRESSES: 'allow',
  });
  const { createProject } = await import('../src/services/platform/tenancy.ts');
  const { createUser } = await import('../src/services/portal/users.ts');
  const { seedOrders } = await import('../src/services/platform/seed.ts');
  const good = await createProject(svc.ctx, { name: 'Good shop', mode: 'test' });
  const noisy = await createProject(svc.ctx, { name: 'Noisy shop', mode: 'test' });
  await seedOrders(svc.ctx, { projectId: noisy.project_id, orders: Number(process.env.BENCH_NOISY_ORDERS ?? 20_000), batch: 10_000 });
  const noisyEmail = 'noisy@shop.example';
  await createUser(svc.ctx, { merchantId: noisy.merchant_id, email: noisyEmail, password: randomBytes(16).toString('hex') });
  const ready: Ready = {
    url: svc.url,
    vaultUrl: config.vaultUrl,
    portalUrl: config.portalUrl,
    good: good.api_key,
    noisy: noisy.api_key,
    noisyEmail,
  };
  process.send!(ready);
}

const ms = (x: number) => Math.round(x);

/** A loopback receiver: answers 200 (alive) or takes the request and never answers (dead). */
async function receiver(dead: boolean, onCall: (body: string) => void = () => {}) {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      onCall(body);
      if (!dead) res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, server };
}

async function main() {
  const clients = arg('clients', 4);
  const seconds = arg('seconds', 20);
  const loadAtStart = loadavg();
  const db = await benchDatabase(process.env.DATABASE_URL);
  let service: ChildProcess | undefined;
  const servers: Server[] = [];
  const sockets: Socket[] = [];
  try {
    const started = await child<Ready>(fileURLToPath(import.meta.url), '--serve', { DATABASE_URL: db.url });
    service = started.proc;
    const svc = started.ready;
    const auth = (key: string) => ({
      authorization: 'Basic ' + Buffer.from(`${key}:`).toString('base64'),
      'content-type': 'application/json',
    });
    // the good merchant's webhooks: when each order's first one arrives
    const arrived = new Map<string, number>();
    const alive = await receiver(false, (body) => {
      const id = (JSON.parse(body) as { order_id: string }).order_id;
      if (!arrived.has(id)) arrived.set(id, performance.now());
    });
    const dead = await receiver(true);
    servers.push(alive.server, dead.server);

    /** One card flow of the good merchant (its order with a webhook URL); answers when its last answer came. */
    const goodFlow = cardFlow(svc, svc.good, { merchant_order_id: 'good', webhook_url: alive.url });
    const flow = async () => ({ id: await goodFlow(), end: performance.now() });

    /** The good merchant's card flows for `secs`: latencies, and the webhook delay of each order. */
    const goodPhase = async (secs: number) => {
      const latencies: number[] = [];
      const ends: Array<{ id: string; end: number }> = [];
      let errors = 0;
      const until = Date.now() + secs * 1000;
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (Date.now() < until) {
            const t0 = performance.now();
            try {
              const f = await flow();
              latencies.push(performance.now() - t0);
              ends.push(f);
            } catch (err) {
              if (++errors <= 3) console.error((err as Error).message);
            }
          }
        }),
      );
      // webhooks still on their way: wait for them a while (bounded)
      const waitUntil = Date.now() + 30_000;
      while (Date.now() < waitUntil && ends.some((e) => !arrived.has(e.id))) await new Promise((r) => setTimeout(r, 100));
      const delays = ends.map((e) => (arrived.has(e.id) ? Math.max(0, arrived.get(e.id)! - e.end) : Infinity)).sort((a, b) => a - b);
      latencies.sort((a, b) => a - b);
      return {
        flows: latencies.length,
        errors,
        p50_ms: ms(pct(latencies, 50)),
        p99_ms: ms(pct(latencies, 99)),
        webhook_delay_p50_ms: ms(pct(delays, 50)),
        webhook_delay_p99_ms: ms(pct(delays, 99)),
        webhook_delay_max_ms: ms(delays.at(-1) ?? NaN),
        webhooks_missing: delays.filter((d) => d === Infinity).length,
      };
    };

    // ---- the noisy merchant ----------------------------------------------------------------
    const tally: Record<string, Record<number, number>> = { search: {}, csv: {}, orders: {}, sign_in: {} };
    const count = (what: string, status: number) => (tally[what][status] = (tally[what][status] ?? 0) + 1);
    const noisyLoops = (until: number) => {
      const loop = async (fn: () => Promise<void>) => {
        while (Date.now() < until) await fn().catch(() => {});
      };
      const words = Array.from({ length: 20 }, (_, i) => `w${i}*`).join(' OR '); // cost 100: refused
      const costly = Array.from({ length: 12 }, (_, i) => `a${i}*`).join(' OR '); // cost 60: the most allowed
      const search = async (query: string) => {
        const res = await fetch(`${svc.url}/v1/search/orders/`, {
          method: 'POST',
          headers: auth(svc.noisy),
          body: JSON.stringify({ query, size: 1000 }),
        });
        await res.arrayBuffer();
        count('search', res.status);
      };
      const stalledCsv = () =>
        new Promise<void>((resolve) => {
          const u = new URL(svc.url);
          const body = JSON.stringify({ query: '*' });
          const s = connect(Number(u.port), u.hostname, () =>
            s.write(
              `POST /v1/search/orders/?format=csv HTTP/1.1\r\nHost: ${u.host}\r\nAuthorization: ${auth(svc.noisy).authorization}\r\n` +
                `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
            ),
          );
          sockets.push(s);
          s.once('data', (c) => {
            count('csv', Number(c.toString('latin1').slice(9, 12)));
            s.pause(); // and never reads again
            setTimeout(() => (s.destroy(), resolve()), Math.max(0, until - Date.now())).unref();
          });
          s.once('error', () => resolve());
          s.once('close', () => resolve());
        });
      const deadWebhook = async () => {
        const o = await fetch(`${svc.url}/v1/orders/`, {
          method: 'POST',
          headers: auth(svc.noisy),
          body: JSON.stringify({ currency: 'EUR', amount: 100, merchant_order_id: 'noisy', webhook_url: dead.url }),
        });
        const order: Json = await o.json();
        count('orders', o.status);
        if (o.ok) await (await fetch(`${svc.url}/v1/orders/${order.id}/`, { method: 'DELETE', headers: auth(svc.noisy) })).arrayBuffer();
        await new Promise((r) => setTimeout(r, 50));
      };
      const signIn = async () => {
        const page = await fetch(`${svc.portalUrl}/sign-in`);
        const cookie = (page.headers.getSetCookie()[0] ?? '').split(';')[0];
        const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
        const res = await fetch(`${svc.portalUrl}/sign-in`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, email: svc.noisyEmail, password: `wrong-${Math.random()}` }).toString(),
        });
        await res.arrayBuffer();
        count('sign_in', res.status);
      };
      return Promise.all([
        loop(() => search(costly)),
        loop(() => search(costly)),
        loop(() => search(words)),
        loop(stalledCsv),
        loop(stalledCsv),
        loop(deadWebhook),
        loop(deadWebhook),
        loop(signIn),
        loop(signIn),
      ]);
    };

    await goodPhase(3); // warm-up
    arrived.clear();
    const alone = await goodPhase(seconds);
    const loadAlone = loadavg();
    arrived.clear();
    const until = Date.now() + seconds * 1000 + 35_000;
    const noise = noisyLoops(until);
    await new Promise((r) => setTimeout(r, 5000)); // the noisy merchant first fills what it can
    const withNoisy = await goodPhase(seconds);
    const loadNoisy = loadavg();
    await noise;
    const result = {
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}`,
      load_average: { at_start: loadAtStart.map((l) => Math.round(l * 10) / 10), after_alone: loadAlone[0], after_noisy: loadNoisy[0] },
      store: 'PostgreSQL',
      clients,
      seconds_per_phase: seconds,
      good_alone: alone,
      good_with_noisy: withNoisy,
      p99_ratio: Math.round((withNoisy.p99_ms / alone.p99_ms) * 100) / 100,
      noisy_answers: tally,
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    for (const s of sockets) s.destroy();
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await stop(service, 10_000);
    await db.drop();
  }
}

if (process.argv.includes('--serve')) void serve();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
