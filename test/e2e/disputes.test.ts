// Disputes from the acquirer (docs/payouts.md "Disputes"): `tender acquirer-host` raises a
// chargeback, its second presentment and a pre-arbitration as lines of its settlement file;
// the import (and the settlement job) bring each onto the live payment once, with its order,
// journal and webhook; a file read twice, or by two at once, changes nothing; unmatched lines
// are reported and bad files refused whole. The API lists the project's disputes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { importDisputes } from '../../src/services/disputes/import.ts';
import { payoutsOverview } from '../../src/services/payouts/overview.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';
import { DomainError } from '../../src/domain/errors.ts';
import type { Json } from '../helpers/json.ts';

let t: TestService;
let host: HostProcess;
let dir: string;
let live: { project_id: string; api_key: string };
let other: { project_id: string; api_key: string };
const HEADER = 'date,terminal,rrn,stan,type,amount,currency,authorization_code,dispute_id,reason_code';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-disputes-'));
  host = await startHostProcess(dir);
  t = await startTestService({ env: { ACQUIRER_SETTLEMENT_DIR: dir } });
  const bind = (name: string, terminalId: string) =>
    createBoundProject(t.svc.ctx, {
      name,
      mode: 'live',
      acquirer: host.url,
      terminalId,
      cardAcceptorId: 'SHOP00000000001',
    });
  live = await bind('Live shop', 'TNDR0101');
  other = await bind('Other shop', 'TNDR0102');
});
after(async () => {
  await t?.close();
  host?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const key = (p = live) => ({ key: p.api_key });
const fileText = () =>
  readdirSync(dir)
    .filter((f) => f.startsWith('settlement-'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .map((text, i) => (i ? text.split('\n').slice(1).join('\n') : text))
    .join('');

async function rrnOf(order: Json) {
  const [m] = await t.db.query<{ terminal_id: string; rrn: string }>(
    "SELECT terminal_id, rrn FROM acquirer_link_messages WHERE transaction_id = $1 AND kind = 'sale'",
    [order.transactions[0].id],
  );
  return m;
}

/** What Tender owes the project, all balances together. */
async function owed(p = live) {
  const r = await t.api('GET', '/v1/balances/', undefined, key(p));
  assert.equal(r.status, 200, r.text);
  return (r.body.balances as Json[]).reduce((n, b) => n + b.pending + b.available + b.reserved, 0);
}

/** The live merchant's open disputes in EUR, as the operator's view (tender payouts overview) counts them. */
async function openInView() {
  const [{ merchant_id }] = await t.db.query<{ merchant_id: string }>('SELECT merchant_id FROM projects WHERE id = $1', [live.project_id]);
  const view = await payoutsOverview(t.svc.ctx);
  return view.balances.find((b) => b.merchant_id === merchant_id && b.mode === 'live' && b.currency === 'EUR')?.open_disputes ?? 0;
}

async function ledgerSound() {
  assert.deepEqual((await checkLedger(t.db)).violations, []);
}

async function raise(line: string) {
  const reply = await host.admin(line);
  const m = /^ok (DSP\d+)$/.exec(reply);
  assert.ok(m, reply);
  return m[1];
}

test('the host refuses dispute lines it cannot raise, and changes nothing', async () => {
  const o = await payOrder(t, { amount: 700 }, key());
  const { terminal_id, rrn } = await rrnOf(o);
  const before = fileText();
  for (const [line, why] of [
    ['chargeback', /TERMINAL RRN/],
    [`chargeback ${terminal_id} 999999999999`, /no settled sale/],
    [`chargeback ${terminal_id} ${rrn} 701`, /1\.\.700/],
    [`chargeback ${terminal_id} ${rrn} 0`, /1\.\.700/],
    [`chargeback ${terminal_id} ${rrn} 10 bad/code`, /reason code/],
    ['second-presentment DSP999999999', /id of a dispute/],
  ] as const)
    assert.match(await host.admin(line), why, line);
  const id = await raise(`chargeback ${terminal_id} ${rrn} 300`);
  assert.match(await host.admin(`pre-arbitration ${id}`), /no second-presentment yet/);
  assert.match(await host.admin(`chargeback ${terminal_id} ${rrn} 401`), /1\.\.400/, 'what is disputed already is not again');
  assert.equal(fileText().split('\n').length, before.split('\n').length + 1, 'only the chargeback was written');
});

test('each stage from the host file moves the money once: chargeback, second presentment, pre-arbitration; the ledger holds throughout', async () => {
  const o = await payOrder(t, { amount: 2000 }, key());
  const { terminal_id, rrn } = await rrnOf(o);
  const start = await owed();
  const openBefore = await openInView();

  const id = await raise(`chargeback ${terminal_id} ${rrn} 2000 4837`);
  const text = fileText();
  const line = text.trim().split('\n').at(-1)!.split(',');
  assert.deepEqual(
    [line[1], line[2], line[4], line[5], line[6], line[8], line[9]],
    [terminal_id, rrn, 'chargeback', '2000', 'EUR', id, '4837'],
  );
  const first = await importDisputes(t.svc.ctx, text);
  const mine = first.applied.filter((a) => a.host_dispute_id === id);
  assert.deepEqual(
    mine.map((a) => [a.stage, a.amount, a.order_id, a.state]),
    [['chargeback', 2000, o.id, 'open']],
  );
  const afterCb = await owed();
  assert.ok(afterCb <= start - 2000, `debited: ${start} -> ${afterCb}`);
  // the file holds every line the host wrote: an earlier test's chargeback is applied here too
  const opened = first.applied.filter((a) => a.stage === 'chargeback').length;
  assert.equal(await openInView(), openBefore + opened, "the operator's view counts the open disputes");
  await ledgerSound();
  const order = (await t.api('GET', `/v1/orders/${o.id}/`, undefined, key())).body;
  assert.ok(order.flags.includes('has-chargebacks'), JSON.stringify(order.flags));
  assert.equal(order.chargeback_orders.length, 1);
  const outbox = await t.db.query('SELECT 1 FROM outbox WHERE order_id = $1', [order.chargeback_orders[0]]);
  assert.equal(outbox.length, 1, "the chargeback order's webhook");

  // read again: nothing changes
  const again = await importDisputes(t.svc.ctx, text);
  assert.equal(again.applied.length, 0);
  assert.ok(again.unchanged.some((a) => a.host_dispute_id === id && a.stage === 'chargeback'));
  assert.equal(await owed(), afterCb);

  // the acquirer's defence won: credited back; two imports at once apply it once
  await raise(`second-presentment ${id}`);
  const both = await Promise.all([importDisputes(t.svc.ctx, fileText()), importDisputes(t.svc.ctx, fileText())]);
  assert.equal(both.flatMap((r) => r.applied).filter((a) => a.host_dispute_id === id).length, 1, 'applied by one of the two');
  const afterSp = await owed();
  assert.ok(afterSp > afterCb, 'credited back');
  assert.equal(await openInView(), openBefore + opened - 1, 'won: no longer open');
  await ledgerSound();

  await raise(`pre-arbitration ${id}`);
  const third = await importDisputes(t.svc.ctx, fileText());
  assert.deepEqual(
    third.applied.map((a) => [a.host_dispute_id, a.stage, a.state]),
    [[id, 'pre_arbitration', 'lost']],
  );
  assert.equal(await owed(), afterCb, 'debited again as by the chargeback');
  await ledgerSound();

  const list = await t.api('GET', '/v1/disputes/', undefined, key());
  assert.equal(list.status, 200, list.text);
  const d = (list.body.disputes as Json[]).find((x) => x.host_dispute_id === id)!;
  assert.deepEqual([d.state, d.amount, d.currency, d.reason_code, d.order_id, d.source], ['lost', 2000, 'EUR', '4837', o.id, 'acquirer']);
  assert.deepEqual(
    d.stages.map((s: Json) => s.stage),
    ['chargeback', 'second_presentment', 'pre_arbitration'],
  );
  const one = await t.api('GET', `/v1/disputes/${d.id}/`, undefined, key());
  assert.equal(one.status, 200, one.text);
  assert.equal(one.body.id, d.id);
  assert.ok(Date.parse(one.body.deadline) > Date.parse(one.body.created));
  // another project's key sees none of it
  assert.equal((await t.api('GET', `/v1/disputes/${d.id}/`, undefined, key(other))).status, 404);
  assert.ok(!((await t.api('GET', '/v1/disputes/', undefined, key(other))).body.disputes as Json[]).some((x) => x.id === d.id));
  assert.equal((await t.api('GET', '/v1/disputes/not-an-id/', undefined, key())).status, 404);
  assert.equal((await t.api('GET', '/v1/disputes/', undefined, { key: null })).status, 401);
});

test('lines that match no payment are reported and change nothing; out-of-order stages wait', async () => {
  const o = await payOrder(t, { amount: 1500 }, key());
  const { terminal_id, rrn } = await rrnOf(o);
  const start = await owed();
  const day = new Date().toISOString().slice(0, 10);
  const text = [
    HEADER,
    `${day},${terminal_id},999999999998,000001,chargeback,100,EUR,ABC123,DSPX1,4837`,
    `${day},${terminal_id},${rrn},000001,second_presentment,100,EUR,ABC123,DSPX2,4837`,
    `${day},${terminal_id},${rrn},000001,chargeback,100,USD,ABC123,DSPX3,4837`,
    `${day},${terminal_id},${rrn},000001,chargeback,99999,EUR,ABC123,DSPX4,4837`,
  ].join('\n');
  const r = await importDisputes(t.svc.ctx, text);
  assert.equal(r.applied.length, 0);
  assert.deepEqual(
    r.unmatched.map((u) => [u.line, u.reason]),
    [
      [2, 'unknown_payment'],
      [3, 'no_earlier_stage'],
      [4, 'currency_mismatch'],
      [5, 'refused'],
    ],
  );
  assert.equal(await owed(), start);
  assert.equal((await t.db.query('SELECT 1 FROM disputes WHERE project_id = $1 AND order_id = $2', [live.project_id, o.id])).length, 0);
  await ledgerSound();
});

test('a bad line refuses the whole file with a clear error, and nothing of it is applied', async () => {
  const o = await payOrder(t, { amount: 800 }, key());
  const { terminal_id, rrn } = await rrnOf(o);
  const start = await owed();
  const day = new Date().toISOString().slice(0, 10);
  const good = `${day},${terminal_id},${rrn},000001,chargeback,100,EUR,ABC123,DSPBAD1,4837`;
  const cases: Array<[string, RegExp]> = [
    ['date,terminal\nx,y', /not a settlement file/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},000001,chargeback,100,EUR`, /line 3: expected 8 or 10 columns/],
    [`${HEADER}\n${good}\n2026-13,${terminal_id},${rrn},1,chargeback,100,EUR,A,D,4837`, /line 3: date/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},1,refundish,100,EUR,A,D,4837`, /line 3: unknown type/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},1,chargeback,1.5,EUR,A,D,4837`, /line 3: amount/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},1,chargeback,0,EUR,A,D,4837`, /line 3: a chargeback moves more than 0/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},1,chargeback,100,eur,A,D,4837`, /line 3: currency/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},1,chargeback,100,EUR,A,,4837`, /line 3: .*dispute_id/],
    [`${HEADER}\n${good}\n${day},${terminal_id},${rrn},1,pre_arbitration,100,EUR,A,D,=cmd|x`, /line 3: .*reason_code/],
    [`${HEADER}\n${good}\n${day},,${rrn},1,chargeback,100,EUR,A,D,4837`, /line 3: terminal and rrn/],
    [`${HEADER}\n${good}\n"unclosed`, /not a settlement file/],
  ];
  for (const [text, why] of cases)
    await assert.rejects(importDisputes(t.svc.ctx, text), (e: unknown) => e instanceof DomainError && why.test(e.message), String(why));
  assert.equal(await owed(), start, 'the good line before the bad one was not applied');
  assert.equal((await t.db.query("SELECT 1 FROM disputes WHERE host_dispute_id = 'DSPBAD1'")).length, 0);
});

test("the daily settlement job reads the host's files in ACQUIRER_SETTLEMENT_DIR: a chargeback arrives on its own", async () => {
  const o = await payOrder(t, { amount: 1200 }, key(other));
  const { terminal_id, rrn } = await rrnOf(o);
  const id = await raise(`chargeback ${terminal_id} ${rrn}`);
  const start = await owed(other);
  await advanceTestClock(t.svc.ctx, other.project_id, 2 * 86_400_000);
  await t.svc.ctx.dueWork.settle(other.project_id);
  const [d] = await t.db.query<{ state: string; amount: number }>(
    'SELECT state, amount::float8 AS amount FROM disputes WHERE project_id = $1 AND host_dispute_id = $2',
    [other.project_id, id],
  );
  assert.deepEqual(d, { state: 'open', amount: 1200 }, 'the whole settled amount by default');
  assert.ok((await owed(other)) <= start - 1200);
  // the job of this project applies only its own lines: the first project's disputes are its job's
  await ledgerSound();
});

test('a test chargeback makes a dispute record; its reversal wins it', async () => {
  const p = await t.newProject('test');
  const o = await payOrder(t, {}, { key: p.api_key });
  const cb = await t.api('POST', `/v1/test/orders/${o.id}/chargeback/`, { amount: 500 }, { key: p.api_key });
  assert.equal(cb.status, 201, cb.text);
  let list = (await t.api('GET', '/v1/disputes/', undefined, { key: p.api_key })).body.disputes as Json[];
  assert.deepEqual(
    list.map((d) => [d.source, d.state, d.amount, d.order_id]),
    [['test', 'open', 500, o.id]],
  );
  const rev = await t.api('POST', `/v1/test/orders/${o.id}/reversal/`, {}, { key: p.api_key });
  assert.equal(rev.status, 201, rev.text);
  list = (await t.api('GET', '/v1/disputes/', undefined, { key: p.api_key })).body.disputes as Json[];
  assert.deepEqual(
    list.map((d) => [d.state, d.stages.map((s: Json) => s.stage)]),
    [['won', ['chargeback', 'second_presentment']]],
  );
  await ledgerSound();
});
