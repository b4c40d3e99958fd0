// The ISO 8583 link under faults (issue 30): a live project pays through `tender acquirer-host`,
// its own process on a real socket, seeded to drop, delay past the link's timeout, double and
// cut answers, and SIGKILLed and started again several times while ~1,000 operations go on.
// After recovery, compared with the host's own journal and settlement file: every authorization
// whose answer was lost is reversed, nothing is charged twice, the ledger holds, reconcile finds
// no mismatch, no attempt is left in flight. Figures: docs/reliability.md ("The ISO 8583 link").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { moneyClient } from '../helpers/money.ts';
import { freePort, runTender } from '../helpers/cli.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { killed, pgUrl, sleep } from '../helpers/child-service.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { reconcile } from '../../src/services/payments/reconcile.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';
import { readHostJournal, type HostEntry } from '../../src/acquirer/iso8583/host/journal.ts';
import { parseOriginalData } from '../../src/acquirer/iso8583/fields.ts';
import type { Json } from '../helpers/json.ts';

/** operations asked of the acquirer through the API (payments, declines, captures, voids, refunds) */
const OPS = Number(process.env.HOST_FAULT_OPS ?? 1000);
const WORKERS = 8;
const KILLS = 3;
const SEED = Number(process.env.HOST_FAULT_SEED ?? 20261126);
const FAULTS = ['drop-rate=0.03', 'duplicate-rate=0.03', 'cut-rate=0.004', 'delay=4000', 'delay-rate=0.02'];
const DECLINES = ['4000000000000002', '4000000000009995', '4000000000000069', '4000000000000127'];

let t: TestService;
let host: HostProcess;
let dir: string;
let hostPort: number;
let live: { project_id: string; api_key: string };
const hostArgs = (round: number) => [...FAULTS.map((f) => `--fault=${f}`), `--fault=seed=${SEED + round}`];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-host-faults-'));
  hostPort = await freePort();
  host = await startHostProcess(dir, hostArgs(0), hostPort);
  t = await startTestService({
    env: {
      // a lost answer is known after 2.5 s (a payment also waits that long for the link to come
      // back after a kill); a reversal's four sends fit in Tender's own wait; the worker recovers
      // attempts in flight after 15 s, while the run goes on (a call is sent within 2 s of its
      // record, or not at all: the send deadline)
      ISO8583_TIMEOUT_MS: '2500',
      ACQUIRER_TIMEOUT_MS: '11000',
      ACQUIRER_RECOVERY_MS: '15000',
      ISO8583_ECHO_MS: '2000',
    },
  });
  live = await createBoundProject(t.svc.ctx, {
    merchantId: t.project.merchant_id,
    name: 'Live shop under faults',
    mode: 'live',
    acquirer: host.url,
    terminalId: 'TFLT0001',
    cardAcceptorId: 'SHOPFAULTS00001',
  });
});
after(async () => {
  await t?.close();
  host?.child.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const { capture, voidAll, voidPart, refund } = moneyClient(() => t);
const key = () => ({ key: live.api_key });
const inFlight = async () =>
  (
    await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM acquirer_attempts WHERE project_id = $1 AND status IN ('processing', 'unknown')",
      [live.project_id],
    )
  )[0].n;

const ops: Record<string, number> = {};
const answers: Record<string, number> = {};
const count = (kind: string) => (ops[kind] = (ops[kind] ?? 0) + 1);
const total = () => Object.values(ops).reduce((a, b) => a + b, 0);

/** One follow-up through the API, counted with its status (a lost answer is recovered later). */
async function follow(kind: string, call: Promise<{ status: number }>) {
  count(kind);
  const res = await call;
  answers[`${kind} ${res.status}`] = (answers[`${kind} ${res.status}`] ?? 0) + 1;
  return res.status === 201;
}

/**
 * A shop's flow by its number: sales refunded in part (twice), pre-authorizations voided in part
 * then captured (a partial capture) and refunded in part, captured whole, voided, voided in part
 * then whole; declines. About three operations per payment.
 */
async function flow(i: number) {
  const amount = 1000 + ((i * 37) % 4000);
  const kind = i % 10;
  if (kind === 9) {
    count('decline');
    const o = await payOrder(t, { amount }, { pan: DECLINES[((i / 10) % DECLINES.length) | 0], ...key() });
    assert.notEqual(o.transactions[0].status, 'accepted');
    return;
  }
  const manual = kind >= 4;
  count(manual ? 'preauth' : 'sale');
  const o: Json = await payOrder(t, { amount }, manual ? { capture_mode: 'manual', ...key() } : key());
  // an answer lost: the recovery reverses it; nothing more on this payment
  if (o.transactions[0].status !== 'accepted') return;
  const refunds = async (n: number) => {
    for (let k = 0; k < n; k++) if (!(await follow('partial refund', refund(o, Math.floor(amount / 4), key())))) return;
  };
  if (!manual) return refunds(kind === 3 ? 0 : 2);
  if (kind === 7) return void (await follow('void', voidAll(o, key())));
  if (kind !== 6 && !(await follow('partial void', voidPart(o, Math.floor(amount / 5), key())))) return;
  if (kind === 8) return void (await follow('void', voidAll(o, key())));
  if (await follow(kind === 6 ? 'capture' : 'partial capture', capture(o, key()))) await refunds(kind === 6 ? 1 : 2);
}

/** The project's clock moved on and its due jobs run here (the worker runs them too, on wall time). */
async function recover() {
  await advanceTestClock(t.svc.ctx, live.project_id, 120_000);
  await t.svc.ctx.dueWork.settle(live.project_id).catch(() => 0);
}

const tally = (xs: string[]) => xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {});
const stanOf = (e: HostEntry) => `${e.request.fields[41].trimEnd()}|${e.request.fields[11]}|${e.request.fields[7].slice(0, 4)}`;
const named = (e: HostEntry) => {
  const o = parseOriginalData(e.request.fields[90]);
  return `${e.request.fields[41].trimEnd()}|${o.stan}|${o.transmission}`;
};

test(`${OPS} operations through a faulty host killed ${KILLS} times: lost authorizations reversed, nothing charged twice, books reconciled`, async (ctx) => {
  const started = Date.now();
  const kills: number[] = [];
  const hits: Record<string, number> = {};
  const addHits = async () => {
    for (const [k, v] of Object.entries(JSON.parse(await host.admin('stats')).faults.hits as Record<string, number>))
      hits[k] = (hits[k] ?? 0) + v;
  };
  let next = 0;
  const workers = Array.from({ length: WORKERS }, async () => {
    while (total() < OPS) await flow(next++);
  });
  // the host SIGKILLed at spread points of the run, started again on its port after a moment
  const killer = (async () => {
    for (let k = 1; k <= KILLS; k++) {
      while (total() < (OPS * k) / (KILLS + 1)) await sleep(50);
      await addHits(); // the faults this process dealt (a few more may slip in before the kill)
      await killed(host.child);
      kills.push(total());
      await sleep(300 + 200 * k);
      host = await startHostProcess(dir, hostArgs(k), hostPort);
    }
  })();
  await Promise.all([...workers, killer]);
  const runMs = Date.now() - started;

  // the faults stop; the recovery settles every attempt left in flight
  await addHits();
  assert.equal(await host.admin('clear'), 'ok');
  for (let round = 0; round < 60 && (await inFlight()) > 0; round++) {
    await recover();
    await sleep(250);
  }
  assert.equal(await inFlight(), 0, 'no attempt left processing or unknown');

  // Tender's journal and the host's, the host's settlement file
  const tender = await t.db.query<{
    operation_id: string;
    transaction_id: string;
    stan: string;
    day: string;
    transmission: string;
    rrn: string;
    kind: string;
    response_code: string | null;
  }>(
    'SELECT operation_id, transaction_id::text, stan, day::text AS day, transmission, rrn, kind, response_code FROM acquirer_link_messages WHERE project_id = $1',
    [live.project_id],
  );
  const journal = readHostJournal(dir);
  const bySent = new Map(tender.map((m) => [`TFLT0001|${m.stan}|${m.transmission}`, m]));

  // STANs: never two requests on one STAN of a day, at the host or in Tender
  assert.equal(journal.filter((e) => e.result === 'collision').length, 0, 'no STAN collision at the host');
  assert.equal(new Set(tender.map((m) => `${m.day}|${m.stan}`)).size, tender.length);
  const decided = journal.filter((e) => e.result === 'decided');
  assert.equal(new Set(decided.map(stanOf)).size, decided.length);

  // every authorization the host approved is either known approved by Tender or reversed at the host
  const reversedAtHost = new Set(
    journal.filter((e) => (e.request.mti === '0400' || e.request.mti === '0401') && e.answer.fields[39] === '00').map(named),
  );
  const approvedAuths = decided.filter(
    (e) => (e.request.mti === '0100' || (e.request.mti === '0200' && e.request.fields[3] === '000000')) && e.answer.fields[39] === '00',
  );
  let lost = 0;
  for (const e of approvedAuths) {
    const mine = bySent.get(`TFLT0001|${e.request.fields[11]}|${e.request.fields[7]}`);
    assert.ok(mine, `the host approved STAN ${e.request.fields[11]}, which Tender never sent`);
    if (mine.response_code === '00') continue;
    lost++;
    assert.ok(reversedAtHost.has(`TFLT0001|${e.request.fields[11]}|${e.request.fields[7]}`), `lost authorization ${mine.rrn} not reversed`);
    const [txn] = await t.db.query<{ status: string }>('SELECT status FROM transactions WHERE id = $1', [mine.transaction_id]);
    assert.equal(txn.status, 'declined', `lost authorization ${mine.rrn}: its payment is declined`);
  }

  // nothing charged twice: per payment, what the host settled (less refunds and reversals) is what Tender captured less refunded
  const [file] = readdirSync(dir).filter((f) => f.startsWith('settlement-'));
  const text = readFileSync(join(dir, file), 'utf8');
  const txnOfRrn = new Map(tender.map((m) => [m.rrn, m.transaction_id]));
  const net = new Map<string, number>();
  const charges = new Map<string, number>();
  for (const line of text.trim().split('\n').slice(1)) {
    const [, , rrn, , type, amount] = line.split(',');
    const txn = txnOfRrn.get(rrn);
    assert.ok(txn, `a settlement line for RRN ${rrn}, which Tender never sent`);
    const sign = type === 'sale' || type === 'completion' ? 1 : -1;
    net.set(txn, (net.get(txn) ?? 0) + sign * Number(amount));
    if (sign > 0) charges.set(txn, (charges.get(txn) ?? 0) + 1);
  }
  assert.ok(
    [...charges.values()].every((n) => n === 1),
    'one sale or completion per payment at the host',
  );
  const moved = await t.db.query<{ id: string; captured: number; refunded: number }>(
    'SELECT t.id::text AS id, t.captured_amount::int AS captured, t.refunded_amount::int AS refunded FROM transactions t JOIN orders o ON o.id = t.order_id WHERE o.project_id = $1',
    [live.project_id],
  );
  for (const m of moved) assert.equal(net.get(m.id) ?? 0, m.captured - m.refunded, `payment ${m.id}: host and Tender differ`);

  // the ledger and the reconciliation, as the commands run them
  assert.deepEqual((await checkLedger(t.db, live.project_id)).violations, []);
  const r = await reconcile(t.svc.ctx, text, { acquirer: host.url });
  assert.deepEqual([r.host_only, r.tender_only, r.amount_differences], [[], [], []]);
  assert.ok(r.ok && r.matches.length > 0);
  if (pgUrl) {
    // the commands themselves on this schema
    const [{ s }] = await t.db.query<{ s: string }>('SELECT current_schema() AS s');
    const env = { ...process.env, DATABASE_URL: pgUrl, PGOPTIONS: `-c search_path=${s}`, TENDER_WORKER: 'off', LOG_LEVEL: 'warn' };
    const ledger = await runTender(['ledger', 'check'], env);
    assert.equal(ledger.code, 0, ledger.stdout + ledger.stderr);
    const rec = await runTender(['reconcile', join(dir, file), '--acquirer', host.url], env);
    assert.equal(rec.code, 0, rec.stdout + rec.stderr);
    assert.match(rec.stdout, /^reconciled: /);
  }

  const after = JSON.parse(await host.admin('stats'));
  ctx.diagnostic(
    JSON.stringify({
      date: new Date().toISOString(),
      store: pgUrl ? 'postgresql' : 'pglite',
      load: loadavg().map((l) => l.toFixed(2)),
      ops,
      answers,
      run_s: (runMs / 1000).toFixed(1),
      total_s: ((Date.now() - started) / 1000).toFixed(1),
      kills_at_ops: kills,
      host_faults: hits,
      host_journal: {
        requests: journal.length,
        decided: decided.length,
        retransmissions: journal.filter((e) => e.result === 'retransmission').length,
        collisions: 0,
        approved_authorizations: approvedAuths.length,
      },
      lost_authorizations_reversed: lost,
      tender_journal: tally(tender.map((m) => `${m.kind} ${m.response_code}`)),
      host_answers: tally(journal.map((e) => `${e.request.mti} ${e.answer.fields[39]}`)),
      payments: tally(
        (
          await t.db.query<{ s: string }>(
            'SELECT t.status AS s FROM transactions t JOIN orders o ON o.id = t.order_id WHERE o.project_id = $1',
            [live.project_id],
          )
        ).map((x) => x.s),
      ),
      reconcile: { matches: r.matches.length, reversed_on_both_sides: r.cancelled },
      host_stats_after_restart: after,
    }),
  );
});
