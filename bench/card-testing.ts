/**
 * Benchmark of card testing (issue 44, docs/risk.md) on PostgreSQL: the issue's two attacks, run
 * for a short bounded time against the service with the velocity limits on and with them off
 * (RISK_LIMITS), and the card flow's cost of the guard, all in the same run.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx bench/card-testing.ts --attack-seconds 15 --seconds 20 --rounds 4
 *
 * - **API attack**: `--attackers` clients (4) loop over random Luhn-valid card numbers through the
 *   API key (order, vault, authenticate, the 3-D Secure page), `customer.ip_address` the
 *   attacker's, each order's email another.
 * - **Hosted attack**: one order's `order_url` (an order without a transaction, whose page takes
 *   another card after a decline) from 15 loopback source addresses (127.0.0.20-34), each
 *   looping over the declining test card.
 * Each attack runs `--attack-seconds` against a project of its own on each service, and prints
 * how many authorizations reached the acquirer (the service's tender_authorizations_total,
 * read from its /metrics) in all and per minute, the card attempts that reached the guard and
 * the refusals (tender_risk_decisions_total), and the attacker's loops (`requests`: a hosted
 * attacker whose order has another attempt under way finds no card form, and loads it again). The limits count per 10-minute window, so with the guard on the
 * total is what matters: the per-minute figure of a short run falls as the run gets longer.
 *
 * - **Card flow** (bench/common.ts cardFlow, a random card each time, as a shop's customers pay):
 *   `--clients` clients (8) on the guard-on service, the guard-off service and the yardstick
 *   (bench/yardstick.ts) in turn, in `--rounds` rounds, `--seconds` per target split over them;
 *   printed as each flow's request rate over the yardstick's, and on / off.
 *   `--against <checkout>` adds another checkout's `bench/card-flow.ts --serve` (its own
 *   throwaway database, RISK_LIMITS=on) to the same rounds, and prints this (on) / against.
 *
 * Each service and the yardstick run in a child process of their own, each service on its own
 * throwaway database `tender_bench_<random>`, dropped at the end. Rate limiting is off, logs at warn.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { arg, benchDatabase, cardFlow, child, serveYardstick, startBenchService, stop, textArg, yardstickRow } from './common.ts';
import { randomPan } from '../test/helpers/cards.ts';
import { freePort } from '../test/helpers/cli.ts';
import { browserFrom, hostedAttempt } from '../test/helpers/hosted-attack.ts';
import type { Json } from '../test/helpers/json.ts';

interface Ready {
  url: string;
  vaultUrl: string;
  /** the card flow's project */
  key: string;
  /** the attacked projects, one per attack (absent from another checkout's card-flow.ts) */
  apiKey?: string;
  hostedKey?: string;
  metricsUrl?: string;
  pool: number;
}

/** The service (RISK_LIMITS from the parent), its metrics on a free loopback port, and a project per use. */
async function serve() {
  const metricsPort = await freePort();
  // a risk key of the run's own: none generated into the data directory, no warning
  const { svc, config } = await startBenchService({ METRICS_PORT: String(metricsPort), TENDER_RISK_KEY: randomBytes(32).toString('hex') });
  const { createBoundProject } = await import('../src/services/payments/acquirer-link.ts');
  const project = (name: string) => createBoundProject(svc.ctx, { name, mode: 'test' });
  const [flow, api, hosted] = [await project('Bench shop'), await project('Attacked by API'), await project('Attacked hosted')];
  const ready: Ready = {
    url: svc.url,
    vaultUrl: config.vaultUrl,
    key: flow.api_key,
    apiKey: api.api_key,
    hostedKey: hosted.api_key,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    pool: config.databasePool.size,
  };
  process.send!(ready);
}

/** The sum of a counter's samples on /metrics, those whose labels match `where`. */
async function counter(metricsUrl: string, name: string, where = '') {
  const text = await (await fetch(metricsUrl)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))) if (m[1]!.includes(where)) sum += Number(m[2]);
  return sum;
}

const auth = (key: string) => ({ authorization: 'Basic ' + Buffer.from(`${key}:`).toString('base64'), 'content-type': 'application/json' });
async function post(url: string, key: string, body: unknown): Promise<Json> {
  const res = await fetch(url, { method: 'POST', headers: auth(key), body: JSON.stringify(body) });
  const json: Json = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** One attempt of the API attacker: a random card for a new order, from the attacker's address. */
function apiAttempt(svc: Ready, n: () => number) {
  const key = svc.apiKey!;
  const expiry = `12${new Date().getUTCFullYear() + 3}`;
  return async () => {
    const customer = { ip_address: '203.0.113.66', email_address: `t${n()}@card.example` };
    const order = await post(`${svc.url}/v1/orders/`, key, {
      currency: 'EUR',
      amount: 100,
      customer,
      transactions: [{ payment_method: 'credit-card' }],
    });
    const txn = order.transactions[0];
    const card = await post(`${svc.vaultUrl}/v1/cards/`, key, {
      pan: randomPan('4'),
      expiry,
      name: 'Card Tester',
      setup_token: txn.payment_method_details.setup_token,
    });
    const { redirect_url } = await post(`${svc.url}/v1/orders/${order.id}/transactions/${txn.id}/authenticate/`, key, {
      vault_token: card.vault_token,
      cvc: '123',
    });
    await (await fetch(redirect_url, { redirect: 'manual' })).arrayBuffer();
  };
}

const DECLINING = '4000000000000002';
const round1 = (x: number) => Math.round(x * 10) / 10;
const percent = (x: number) => `${Math.round(x * 100)} %`;

/** Runs `clients` loops of `step` for `ms`; answers the steps done and the errors. */
async function loop(clients: number, ms: number, step: (client: number) => Promise<unknown>) {
  const end = Date.now() + ms;
  let done = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (Date.now() < end) {
        try {
          await step(c);
          done++;
        } catch (err) {
          if (++errors <= 3) console.error((err as Error).message);
        }
      }
    }),
  );
  return { done, errors };
}

/**
 * One attack on one service: the attacker's loops (`requests`), the card attempts that reached the
 * guard (`screened`, counted with the limits off too), the authorizations that reached the
 * acquirer, and the refusals.
 */
async function attack(svc: Ready, kind: 'api' | 'hosted', seconds: number, attackers: number) {
  const metrics = svc.metricsUrl!;
  const before = {
    screened: await counter(metrics, 'tender_risk_decisions_total'),
    authorized: await counter(metrics, 'tender_authorizations_total'),
    refused: await counter(metrics, 'tender_risk_decisions_total', 'decision="refuse"'),
  };
  const t0 = performance.now();
  let run: { done: number; errors: number };
  if (kind === 'api') {
    let n = 0;
    run = await loop(
      attackers,
      seconds * 1000,
      apiAttempt(svc, () => n++),
    );
  } else {
    const order = await post(`${svc.url}/v1/orders/`, svc.hostedKey!, { currency: 'EUR', amount: 500 });
    const browsers = Array.from({ length: 15 }, (_, i) => browserFrom(`127.0.0.${20 + i}`));
    try {
      // an attempt while another of the order's is under way gets the page back without a form,
      // or its card bounced: the attacker just tries again (what reached the guard is `screened`)
      run = await loop(15, seconds * 1000, (c) => hostedAttempt(svc.url, browsers[c]!, order.order_url, DECLINING));
    } finally {
      await Promise.all(browsers.map((b) => b.close()));
    }
  }
  const minutes = (performance.now() - t0) / 60_000;
  const authorized = (await counter(metrics, 'tender_authorizations_total')) - before.authorized;
  const refused = (await counter(metrics, 'tender_risk_decisions_total', 'decision="refuse"')) - before.refused;
  const screened = (await counter(metrics, 'tender_risk_decisions_total')) - before.screened;
  return {
    requests: run.done,
    screened,
    screened_per_minute: Math.round(screened / minutes),
    authorizations_reached_acquirer: authorized,
    authorizations_per_minute: Math.round(authorized / minutes),
    refused,
    errors: run.errors,
  };
}

type Target = 'on' | 'off' | 'base' | 'row';

async function main() {
  const clients = arg('clients', 8);
  const seconds = arg('seconds', 20);
  const attackSeconds = arg('attack-seconds', 15);
  const attackers = arg('attackers', 4);
  const rounds = Math.max(1, arg('rounds', 4));
  const warmup = arg('warmup', 3);
  const against = textArg('against');
  const loadAtStart = loadavg();
  const uptimeAtStart = execFileSync('uptime', { encoding: 'utf8' }).trim();
  const self = fileURLToPath(import.meta.url);
  const dbs = { on: await benchDatabase(process.env.DATABASE_URL), off: await benchDatabase(process.env.DATABASE_URL) };
  const otherDb = against ? await benchDatabase(process.env.DATABASE_URL) : undefined;
  const procs: ChildProcess[] = [];
  try {
    const on = await child<Ready>(self, '--serve', { DATABASE_URL: dbs.on.url, RISK_LIMITS: 'on' });
    const off = await child<Ready>(self, '--serve', { DATABASE_URL: dbs.off.url, RISK_LIMITS: 'off' });
    procs.push(on.proc, off.proc);
    const ys = await child<{ url: string }>(self, '--yardstick', { DATABASE_URL: dbs.on.url, BENCH_POOL: String(on.ready.pool) });
    procs.push(ys.proc);
    const base = against
      ? await child<Ready>(join(against, 'bench', 'card-flow.ts'), '--serve', {
          DATABASE_URL: otherDb!.url,
          RISK_LIMITS: 'on',
          BENCH_ACQUIRER: '',
        })
      : undefined;
    if (base) procs.push(base.proc);

    // the attacks first, one at a time, so each one's counters move by it alone
    const attacks: Record<string, unknown> = {};
    for (const kind of ['api', 'hosted'] as const)
      for (const [guard, svc] of [['on', on.ready] as const, ['off', off.ready] as const]) {
        attacks[`${kind} guard ${guard}`] = await attack(svc, kind, attackSeconds, attackers);
        console.error(`${kind} attack, guard ${guard}: ${JSON.stringify(attacks[`${kind} guard ${guard}`])}`);
      }

    // then the card flow, a random card each time (a shop's customers), against the yardstick
    const flowWith = (r: Ready) => cardFlow(r, r.key);
    const steps: Record<Target, () => Promise<unknown>> = {
      on: flowWith(on.ready),
      off: flowWith(off.ready),
      base: base ? flowWith(base.ready) : async () => undefined,
      row: yardstickRow(ys.ready.url),
    };
    const flows: Target[] = ['on', 'off', ...(base ? ['base' as const] : [])];
    for (const t of [...flows, 'row' as const]) await loop(clients, warmup * 1000, steps[t]);
    // autovacuum off (this machine's CI setting): analyze and vacuum outside the measured time (bench/card-flow.ts says why)
    const clientsOf = [dbs.on, dbs.off, ...(otherDb ? [otherDb] : [])].map((d) => new pg.Client({ connectionString: d.url }));
    for (const c of clientsOf) await c.connect();
    const [{ autovacuum }] = (await clientsOf[0]!.query<{ autovacuum: string }>('SHOW autovacuum')).rows;
    const got: Record<Target, { done: number; time: number }> = {
      on: { done: 0, time: 0 },
      off: { done: 0, time: 0 },
      base: { done: 0, time: 0 },
      row: { done: 0, time: 0 },
    };
    let errors = 0;
    const lines: string[] = [];
    const turn = async (t: Target) => {
      const t0 = performance.now();
      const r = await loop(clients, (seconds * 1000) / rounds, steps[t]);
      const s = (performance.now() - t0) / 1000;
      got[t].done += r.done;
      got[t].time += s;
      errors += r.errors;
      return r.done / s;
    };
    for (let r = 0; r < rounds; r++) {
      if (autovacuum === 'off') for (const c of clientsOf) await c.query('VACUUM (ANALYZE)');
      const rate = { on: 0, off: 0, base: 0, row: 0 };
      // the flows' order alternates, so none always runs on the warmer machine
      for (const t of r % 2 ? [...flows].reverse() : flows) rate[t] = await turn(t);
      rate.row = await turn('row');
      lines.push(
        `round ${r + 1}: guard on ${rate.on.toFixed(1)} flows/s, ${percent((rate.on * 4) / rate.row)}; guard off ${rate.off.toFixed(1)} flows/s, ${percent((rate.off * 4) / rate.row)}; ` +
          `on / off ${percent(rate.on / rate.off)}${base ? `; this / against ${percent(rate.on / rate.base)}` : ''} (yardstick ${rate.row.toFixed(0)} requests/s)`,
      );
      console.error(lines.at(-1));
    }
    for (const c of clientsOf) await c.end();
    const perS = (t: Target) => got[t].done / got[t].time;
    const flow = (t: Target) => ({
      flows_per_s: round1(perS(t)),
      requests_per_s: Math.round(perS(t) * 4),
      ratio: `${percent((perS(t) * 4) / perS('row'))} of the yardstick's request rate`,
    });
    const result = {
      date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
      machine: `${cpus().length} cores (${cpus()[0]?.model.trim()}), node ${process.version}`,
      uptime_at_start: uptimeAtStart,
      load_average_at_start: loadAtStart.map(round1),
      load_average_at_end: loadavg().map(round1),
      store: 'PostgreSQL',
      attack_seconds: attackSeconds,
      attacks,
      clients,
      seconds_per_target: Math.round(got.on.time),
      rounds,
      errors,
      card_flow: {
        guard_on: flow('on'),
        guard_off: flow('off'),
        on_over_off: percent(perS('on') / perS('off')),
        ...(base ? { against: { checkout: against, ...flow('base') }, this_over_against: percent(perS('on') / perS('base')) } : {}),
      },
      yardstick_requests_per_s: Math.round(perS('row')),
      rounds_detail: lines,
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    for (const p of procs) await stop(p);
    for (const d of [dbs.on, dbs.off, ...(otherDb ? [otherDb] : [])]) await d.drop();
  }
}

if (process.argv.includes('--serve')) await serve();
else if (process.argv.includes('--yardstick')) await serveYardstick();
else await main();
