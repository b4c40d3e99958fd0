// npm run test:cluster: Tender beyond one machine, on this one (docs/scale-out.md). Builds the
// topology (scripts/cluster/topology.ts), runs the scenarios with bounded load, asserts, prints
// the figures, and tears everything down, also on failure or Ctrl-C. Exits 1 when a check fails.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, hostname } from 'node:os';
import pg from 'pg';
import { Topology, freePort, sleep, until } from './topology.ts';
import { Client, Receiver, loop, newFigures, order } from './load.ts';
import { Formation } from './failover.ts';
import { measure, postmasterPid, type Capacity } from './capacity.ts';
import { isoLink, type IsoRow } from './iso.ts';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;
const started = Date.now();
const topo = new Topology();
const receiver = new Receiver();
// the figures table: the iso scenario's row shape, and the failover's time
const rows: Array<IsoRow & { failover?: string }> = [];
let formation: Formation | undefined;
const problems: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) problems.push(what);
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

let stopping = false;
const bail = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.error(`\n${signal}: tearing the cluster down`);
  await formation?.teardown();
  await topo.teardown();
  process.exit(130);
};
process.on('SIGINT', () => void bail('SIGINT'));
process.on('SIGTERM', () => void bail('SIGTERM'));

const primary = () => new pg.Client({ connectionString: topo.primaryUrl });
async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  const c = primary();
  await c.connect();
  try {
    return (await c.query(text, params)).rows as T[];
  } finally {
    await c.end();
  }
}

/** tender ledger check against the primary, as an operator runs it. */
function ledgerCheck(url = topo.primaryUrl): string {
  const r = spawnSync(process.execPath, [`${ROOT}bin/tender.mjs`, 'ledger', 'check'], {
    env: { ...topo.nodeEnv(0), DATABASE_URL: url },
    encoding: 'utf8',
  });
  const line = `${r.stdout}${r.stderr}`.split('\n').find((l) => l.startsWith('ledger check')) ?? `exit ${r.status}`;
  return r.status === 0 ? `passed (${line.replace('ledger check passed: ', '')})` : `FAILED: ${line}`;
}

/** Acknowledged orders missing from the primary. */
async function lost(ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const [{ n }] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM orders WHERE id = ANY($1::uuid[])', [ids]);
  return ids.length - n;
}

async function jobsOnEveryNode() {
  console.log('\n[1] deliveries, expiries, delayed captures and late declines on three nodes; one node SIGKILLed holding work');
  const f = newFigures();
  const c = new Client(topo.lbUrl, topo.apiKey, f);
  receiver.delayMs = 700; // deliveries are in flight when the node dies
  const hook = { webhook_url: receiver.url };
  const [sales, delayed, expiring, late] = [[], [], [], []] as Array<{ id: string; txn?: string }[]>;
  await Promise.all([
    ...Array.from({ length: 6 }, async (_, i) => sales.push(await c.pay(order(`sale-${i}`, hook)))),
    ...Array.from({ length: 6 }, async (_, i) =>
      delayed.push(await c.pay(order(`delayed-${i}`, hook), { capture_mode: 'delayed', expiration_period: 'PT6S' })),
    ),
    ...Array.from({ length: 6 }, async (_, i) =>
      expiring.push(
        (
          await c.api(
            'POST',
            '/v1/orders/',
            order(`expire-${i}`, { ...hook, transactions: [{ payment_method: 'credit-card', expiration_period: 'PT4S' }] }),
            [201],
          )
        ).body,
      ),
    ),
    ...Array.from({ length: 4 }, async (_, i) => late.push(await c.pay(order(`late-${i}`, hook), {}, '4000000000000341'))),
  ]);
  const victim = topo.nodes[2];
  topo.killNode(victim);
  const [{ held }] = await sql<{ held: number }>('SELECT count(*)::int AS held FROM jobs WHERE locked_until > now()');
  console.log(`  node ${victim.n} killed with SIGKILL; ${held} jobs were claimed (leased) at that moment`);
  const all = [...sales, ...delayed, ...expiring, ...late].map((o) => o.id);
  let state = '';
  await until(
    'the due work to finish on the surviving nodes',
    async () => {
      const [r] = await sql<{ expired: number; declined: number; captured: number; pending: number }>(
        `SELECT (SELECT count(*)::int FROM transactions WHERE order_id = ANY($1::uuid[]) AND status = 'expired') AS expired,
                (SELECT count(*)::int FROM transactions WHERE order_id = ANY($2::uuid[]) AND status = 'declined') AS declined,
                (SELECT count(*)::int FROM transactions WHERE order_id = ANY($3::uuid[]) AND captured_amount = authorized_amount AND authorized_amount > 0) AS captured,
                (SELECT count(*)::int FROM webhook_deliveries WHERE order_id = ANY($4::uuid[]) AND status = 'pending') AS pending`,
        [expiring.map((o) => o.id), late.map((o) => o.id), delayed.map((o) => o.id), all],
      );
      state = JSON.stringify(r);
      return r.expired === expiring.length && r.declined === late.length && r.captured === delayed.length && r.pending === 0;
    },
    90_000,
    500,
  ).catch(async (err) => {
    const jobs = await sql('SELECT kind, run_at, locked_until, attempts, last_error FROM jobs ORDER BY run_at LIMIT 30');
    throw new Error(`${(err as Error).message}: ${state}\n${jobs.map((j) => JSON.stringify(j)).join('\n')}`);
  });
  receiver.delayMs = 0;
  const perTxn = async (ids: string[], event: string) =>
    sql<{ id: string; n: number }>(
      `SELECT t.id, (SELECT count(*)::int FROM events e WHERE e.transaction_id = t.id AND e.event = $2) AS n FROM transactions t WHERE t.order_id = ANY($1::uuid[])`,
      [ids, event],
    );
  const expired = await perTxn(
    expiring.map((o) => o.id),
    'expired',
  );
  check(expired.length === 6 && expired.every((r) => r.n === 1), `each of 6 expiries done once (${expired.map((r) => r.n).join(',')})`);
  const declined = await perTxn(
    late.map((o) => o.id),
    'declined',
  );
  check(
    declined.length === 4 && declined.every((r) => r.n === 1),
    `each of 4 late declines done once (${declined.map((r) => r.n).join(',')})`,
  );
  const captures = await sql<{ n: number; captured: number; authorized: number }>(
    `SELECT (SELECT count(*)::int FROM orders c WHERE c.related_order_id = o.id AND c.kind = 'capture') AS n, t.captured_amount AS captured, t.authorized_amount AS authorized
       FROM orders o JOIN transactions t ON t.order_id = o.id WHERE o.id = ANY($1::uuid[])`,
    [delayed.map((o) => o.id)],
  );
  check(
    captures.length === 6 && captures.every((r) => r.n === 1 && r.captured === r.authorized),
    `each of 6 delayed captures done once (${captures.map((r) => r.n).join(',')})`,
  );
  const deliveries = await sql<{ order_id: string; n: number; ok: number }>(
    `SELECT order_id, count(*)::int AS n, count(*) FILTER (WHERE status = 'succeeded')::int AS ok FROM webhook_deliveries WHERE order_id = ANY($1::uuid[]) GROUP BY 1`,
    [all],
  );
  const expected = deliveries.reduce((s, d) => s + d.n, 0);
  const missing = deliveries.filter((d) => (receiver.received.get(d.order_id) ?? 0) < d.n).length;
  const duplicates = deliveries.reduce((s, d) => s + Math.max(0, (receiver.received.get(d.order_id) ?? 0) - d.n), 0);
  check(
    deliveries.every((d) => d.ok === d.n) && missing === 0,
    `every webhook delivered at least once (${expected} messages, ${duplicates} duplicates after the kill)`,
  );
  const ledger = ledgerCheck();
  check(ledger.startsWith('passed'), `tender ledger check ${ledger}`);
  const gone = await lost(all);
  check(gone === 0, `no acknowledged order lost (${all.length})`);
  rows.push({ scenario: 'jobs on 3 nodes, 1 SIGKILL', f, acked: all.length, lost: gone, duplicates, ledger });
  await topo.startNode(victim); // back for the rolling restart
}

async function rollingRestart() {
  console.log('\n[2] rolling restart of the three nodes under load (SIGTERM: /readyz red, drain, finish in-flight)');
  const f = newFigures();
  const c = new Client(topo.lbUrl, topo.apiKey, f);
  const acked: string[] = [];
  const load = loop(3, async (i) => {
    const { id } = await c.pay(order(`roll-${i}`));
    acked.push(id);
  });
  // the replica's replay lag as the primary sees it (pg_stat_replication.replay_lag), sampled under the load
  let maxLag = 0;
  const watcher = primary();
  await watcher.connect();
  const sampling = setInterval(() => {
    watcher.query('SELECT COALESCE(max(EXTRACT(epoch FROM replay_lag)), 0)::float AS lag FROM pg_stat_replication').then(
      (r) => (maxLag = Math.max(maxLag, r.rows[0].lag * 1000)),
      () => {},
    );
  }, 250);
  await sleep(1500);
  for (const node of topo.nodes) {
    const red = (async () => {
      await until(`node ${node.n} /readyz red`, async () => (await fetch(`${node.url}/readyz`)).status === 503, 5000, 50);
      return true;
    })();
    const stopping = topo.stopNode(node);
    const wentRed = await red.catch(() => false);
    const code = await stopping;
    check(wentRed && code === 0, `node ${node.n}: /readyz red first, then a clean exit (${code})`);
    await topo.startNode(node);
    await sleep(1000); // HAProxy: two green checks (rise 2, every 250 ms)
  }
  await sleep(1000);
  await load.stop();
  clearInterval(sampling);
  await watcher.end();
  const gone = await lost(acked);
  const [{ n }] = await sql<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE id = ANY($1::uuid[]) AND status = 'completed'", [
    acked,
  ]);
  check(f.failed === 0, `no failed request (${f.sent} sent, ${f.failed} failed)`);
  check(gone === 0 && n === acked.length, `every acknowledged payment is there and completed (${n}/${acked.length})`);
  const ledger = ledgerCheck();
  check(ledger.startsWith('passed'), `tender ledger check ${ledger}`);
  rows.push({ scenario: 'rolling restart under load', f, acked: acked.length, lost: gone, duplicates: 0, ledger });
  // search reads the replica (DATABASE_REPLICA_URL): it finds them too, once the replica has replayed them
  const replicaClient = new pg.Client({ connectionString: topo.replicaUrl });
  await replicaClient.connect();
  try {
    let total = 0;
    await until(
      'search on the replica to find the payments',
      async () => {
        total = (await c.api('POST', '/v1/search/orders/', { query: 'status:completed', size: 1 })).body.total;
        return total >= Math.min(acked.length, 10_000);
      },
      15_000,
      250,
    );
    const [{ n: sessions }] = (
      await replicaClient.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'tender-replica%'")
    ).rows;
    check(
      sessions > 0 && total >= acked.length,
      `search through HAProxy read the replica (${sessions} tender-replica sessions there; ${total} completed orders found; replica replay lag under that load: at most ${maxLag.toFixed(0)} ms)`,
    );
    // the CSV report is copied on the replica too, in parts that share one exported snapshot there
    const csv = await fetch(`${c.base}/v1/search/orders/?format=csv`, {
      method: 'POST',
      headers: { authorization: 'Basic ' + Buffer.from(`${c.key}:`).toString('base64'), 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'status:completed' }),
    });
    const lines = csv.ok ? (await csv.text()).trimEnd().split('\n').length - 1 : 0;
    check(
      csv.ok && lines >= acked.length,
      `the CSV report through HAProxy, copied on the replica: ${csv.status}, ${lines} transaction rows for ${acked.length} payments`,
    );
  } finally {
    await replicaClient.end();
  }
}

let capacity: Capacity | undefined;
async function capacityFigures() {
  console.log('\n[3] capacity: CPU seconds per card payment (create, vault, authenticate, 3-D Secure pages) on 3 nodes for 10 s');
  const f = newFigures();
  const c = new Client(topo.lbUrl, topo.apiKey, f);
  const size = async () => (await sql<{ b: number }>("SELECT pg_database_size('tender')::bigint AS b"))[0].b;
  await sql('CHECKPOINT');
  const sizeBefore = await size();
  capacity = await measure(
    { tender: topo.nodes.map((n) => n.proc!.pid!), database: [postmasterPid(join(topo.dir, 'primary'))], bouncer: [topo.bouncerPid!] },
    async (ms) => {
      let payments = 0;
      const load = loop(4, async (i) => {
        await c.pay(order(`capacity-${i}`));
        payments++;
      });
      await sleep(ms);
      await load.stop();
      return { payments, requests: f.sent };
    },
    10_000,
  );
  await sql('CHECKPOINT');
  capacity.bytesPerPayment = ((await size()) - sizeBefore) / capacity.payments;
  const k = capacity;
  console.log(
    `  ${k.payments} payments (${k.requests} requests) in ${k.seconds.toFixed(1)} s; CPU per payment: Tender ${(k.tender * 1000).toFixed(1)} ms, PostgreSQL ${(k.database * 1000).toFixed(1)} ms, PgBouncer ${(k.bouncer * 1000).toFixed(1)} ms`,
  );
  console.log(
    `  per core: ${(1 / k.tender).toFixed(0)} payments/s (${(k.requests / k.payments / k.tender).toFixed(0)} requests/s) of Tender, ${(1 / k.database).toFixed(0)} payments/s of PostgreSQL`,
  );
  check(f.failed === 0, `no failed request (${f.failed})`);
}

function suiteThroughPgBouncer() {
  console.log('\n[4] the concurrency tests through PgBouncer (transaction pooling, prepared statements off, LISTEN direct)');
  const files = ['test/e2e/money-concurrency.test.ts', 'test/e2e/order-writes.test.ts'];
  const r = spawnSync(process.execPath, [`${ROOT}scripts/test.mjs`, ...files], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      DATABASE_URL: topo.bouncerUrl,
      TEST_DATABASE_PER_FILE: '1',
      DATABASE_PREPARED_STATEMENTS: 'off',
      DATABASE_LISTEN_URL: topo.primaryUrl,
      LOG_LEVEL: 'silent',
    },
  });
  const out = `${r.stdout}${r.stderr}`;
  const pass = /ℹ pass (\d+)/.exec(out)?.[1];
  const fail = /ℹ fail (\d+)/.exec(out)?.[1];
  if (r.status !== 0)
    console.log(
      out
        .split('\n')
        .filter((l) => /✖|Error|error/.test(l))
        .slice(0, 30)
        .join('\n'),
    );
  check(r.status === 0, `${files.join(', ')}: ${pass ?? '?'} passed, ${fail ?? '?'} failed`);
}

async function failover() {
  console.log('\n[5] failover: pg_auto_failover monitor, primary and synchronous secondary; the primary SIGKILLed under load');
  formation = new Formation(topo.dir);
  const sync = await formation.create();
  console.log(`  formation up: primary :${formation.ports.a}, secondary :${formation.ports.b}, synchronous_standby_names = ${sync}`);
  check(sync !== '', 'replication to the secondary is synchronous');
  // the three nodes again, on the formation: one multi-host URL, no PgBouncer (it names one host), no replica
  const direct = {
    DATABASE_URL: formation.url,
    DATABASE_LISTEN_URL: formation.url,
    DATABASE_REPLICA_URL: '',
    DATABASE_PREPARED_STATEMENTS: 'on',
  };
  for (const node of topo.nodes) await topo.stopNode(node);
  topo.apiKey = '';
  for (const node of topo.nodes) await topo.startNode(node, direct);
  if (!topo.apiKey) throw new Error('no test project on the formation');
  await sleep(1000); // HAProxy sees them up
  const f = newFigures();
  const c = new Client(topo.lbUrl, topo.apiKey, f);
  const acked: string[] = [];
  const load = loop(3, async (i) => {
    const { id } = await c.pay(order(`failover-${i}`));
    acked.push(id);
  });
  await sleep(3000);
  const killed = Date.now();
  c.mark = killed;
  formation.killPrimary();
  console.log('  primary killed (SIGKILL of its keeper and Postgres)');
  await until('the secondary promoted', () => formation!.promoted(), 120_000, 250);
  const promotedAfter = (Date.now() - killed) / 1000;
  await until('a request served again', async () => c.firstOkAfterMark > 0, 60_000, 100);
  await sleep(4000); // load on the new primary
  await load.stop();
  const outage = (c.firstOkAfterMark - killed) / 1000;
  const all = [...new Set([...c.created, ...acked])];
  const b = new pg.Client({
    connectionString: formation.url.replace(/\/\/postgres@[^/]+/, `//postgres@127.0.0.1:${formation.ports.b}`).replace(/\?.*/, ''),
  });
  await b.connect();
  // an authorization whose answer the acquirer gave as the primary died is recorded but not
  // applied: the customer saw it processing, and the recovery (ACQUIRER_RECOVERY_MS) reverses it
  // and declines it, as it does for an answer that never came; one whose node was held up past
  // its send deadline by the outage was never sent and failed at once ("Not sent: ...", code 96)
  const inFlight = async () =>
    (await b.query("SELECT count(*)::int AS n FROM acquirer_attempts WHERE status IN ('processing', 'unknown')")).rows[0].n as number;
  await until('no attempt left in flight', async () => (await inFlight()) === 0, 120_000, 500);
  const [{ n, done, reversed, unsent }] = (
    await b.query(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE o.status = 'completed' AND o.id = ANY($2::uuid[]))::int AS done,
         count(*) FILTER (WHERE o.id = ANY($2::uuid[]) AND EXISTS (
           SELECT 1 FROM acquirer_attempts a WHERE a.order_id = o.id AND a.kind = 'authorization' AND a.status = 'reversed'))::int AS reversed,
         count(*) FILTER (WHERE o.id = ANY($2::uuid[]) AND o.status = 'error' AND EXISTS (
           SELECT 1 FROM acquirer_attempts a WHERE a.order_id = o.id AND a.kind = 'authorization' AND a.status = 'failed'
              AND a.response_description LIKE 'Not sent:%'))::int AS unsent
       FROM orders o WHERE o.id = ANY($1::uuid[])`,
      [all, acked],
    )
  ).rows;
  await b.end();
  console.log(`  promoted after ${promotedAfter.toFixed(1)} s; first request served ${outage.toFixed(1)} s after the kill`);
  check(n === all.length, `every acknowledged order is on the promoted server (${n}/${all.length})`);
  check(
    done + reversed + unsent === acked.length,
    `every acknowledged payment is completed there, reversed by the recovery when its answer was not applied, or failed unsent past its send deadline (${done} completed, ${reversed} reversed, ${unsent} unsent, of ${acked.length}); nothing left in flight`,
  );
  check(
    f.failed === f.retryable,
    `every failed request was a 503 with Retry-After and an error body or a 409 IdempotencyError, retried with its Idempotency-Key (${f.failed} failed: ${JSON.stringify(f.failures)})`,
  );
  const ledger = ledgerCheck(formation.url);
  check(ledger.startsWith('passed'), `tender ledger check ${ledger}`);
  rows.push({
    scenario: 'failover (primary SIGKILL)',
    f,
    acked: all.length,
    lost: all.length - n,
    duplicates: 0,
    ledger,
    failover: `${outage.toFixed(1)} (promotion ${promotedAfter.toFixed(1)})`,
  });
}

function report() {
  const line = (cells: unknown[]) => `| ${cells.join(' | ')} |`;
  console.log('\nFigures');
  console.log(
    line([
      'scenario',
      'requests sent',
      '2xx/3xx',
      'failed',
      'retryable (503, 409 key held)',
      'acknowledged orders',
      'lost',
      'duplicate webhooks',
      'failover s',
      'ledger check',
    ]),
  );
  console.log(line(Array(10).fill('---')));
  for (const r of rows)
    console.log(
      line([
        r.scenario,
        r.f.sent,
        r.f.ok,
        r.f.failed + (r.f.failed ? ` ${JSON.stringify(r.f.failures)}` : ''),
        r.f.retryable,
        r.acked,
        r.lost,
        r.duplicates,
        r.failover ?? 'n/a',
        r.ledger,
      ]),
    );
  if (capacity) {
    const k = capacity;
    console.log(
      `\nCapacity: CPU per card payment (${(k.requests / k.payments).toFixed(1)} requests): Tender ${(k.tender * 1000).toFixed(1)} ms, PostgreSQL ${(k.database * 1000).toFixed(1)} ms, PgBouncer ${(k.bouncer * 1000).toFixed(1)} ms; database growth ${((k.bytesPerPayment ?? 0) / 1024).toFixed(1)} kB per payment;`,
    );
    console.log(
      `  per core ${(1 / k.tender).toFixed(0)} payments/s (${(k.requests / k.payments / k.tender).toFixed(0)} requests/s) of Tender, ${(1 / k.database).toFixed(0)} payments/s of PostgreSQL`,
    );
  }
  if (capacity) {
    const k = capacity;
    console.log(
      '\n| payments/s | Tender cores (60 %) | nodes of 4 cores (+1 spare) | PostgreSQL cores (60 %) | PgBouncer processes (1 core each, 60 %) | database growth per day |',
    );
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const p of [1000, 10_000]) {
      const cores = (cpu: number) => Math.ceil((p * cpu) / 0.6);
      const perDay = (p * 86_400 * (k.bytesPerPayment ?? 0)) / 1e9;
      console.log(
        `| ${p.toLocaleString('en')} | ${cores(k.tender)} | ${Math.ceil(cores(k.tender) / 4) + 1} | ${cores(k.database)} | ${cores(k.bouncer)} | ${perDay.toFixed(0)} GB |`,
      );
    }
  }
  const secs = ((Date.now() - started) / 1000).toFixed(0);
  console.log(
    `\n${new Date().toISOString()} on ${hostname()}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${secs} s in all`,
  );
}

try {
  console.log(`cluster in ${topo.dir}`);
  await topo.postgres();
  await topo.pgbouncer();
  await receiver.listen();
  topo.ports.haproxy = await freePort(); // the nodes' public URL
  await topo.nodesUp(3);
  const ports = topo.nodes.map((n) => n.port);
  await topo.haproxy(ports);
  console.log(
    `primary :${topo.ports.primary}, replica :${topo.ports.replica}, pgbouncer :${topo.ports.bouncer}, haproxy :${topo.ports.haproxy}, nodes ${ports.map((p) => `:${p}`).join(' ')}`,
  );
  const only = process.env.CLUSTER_ONLY; // one scenario while working on it: jobs, iso, rolling, pgbouncer, failover
  if (!only || only === 'jobs') await jobsOnEveryNode();
  if (!only || only === 'iso') rows.push(await isoLink({ topo, sql, check, ledgerCheck: () => ledgerCheck(), lost }));
  if (!only || only === 'rolling') await rollingRestart();
  if (!only || only === 'capacity') await capacityFigures();
  if (!only || only === 'pgbouncer') suiteThroughPgBouncer();
  if (!only || only === 'failover') await failover();
  report();
} catch (err) {
  problems.push(`the run stopped: ${(err as Error).stack ?? err}`);
  for (const n of topo.nodes) {
    const log = topo.logOf(`node${n.n}`).split('\n').slice(-15).join('\n');
    if (log.trim()) console.error(`--- node ${n.n} log (last lines)\n${log}`);
  }
} finally {
  await receiver.close();
  await formation?.teardown();
  await topo.teardown();
}
if (problems.length) {
  console.error(`\ntest:cluster FAILED:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
console.log('\ntest:cluster passed');
process.exit(0);
