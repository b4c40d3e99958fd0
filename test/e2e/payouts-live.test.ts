// A payment facilitator's day with real money (issue 45's acceptance, docs/payouts.md): two
// merchants with live projects on `tender acquirer-host` (a process of its own, ISO 8583 over a
// socket) take sales and a refund; the host's settlement file brings a chargeback; the settlement
// job moves pending to available; a payout run writes one pain.001 that xmllint validates against
// the EPC schema with exactly what the ledger says; a second run pays nothing twice; the bank's
// camt.053 books one transfer and returns the other, which credits that merchant again.
// `tender ledger check` holds after every step.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { startHostProcess, type HostProcess } from '../helpers/acquirer-host.ts';
import { camt053, CAMT_XSD } from '../helpers/bankfiles.ts';
import { xmllint } from '../helpers/sepa.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { createBoundProject } from '../../src/services/payments/acquirer-link.ts';
import { importDisputeDir } from '../../src/services/disputes/import.ts';
import { runSettlement } from '../../src/services/payments/chargebacks.ts';
import { readBankFile } from '../../src/services/payouts/bankfiles.ts';
import { runPayouts, scheduleMerchant } from '../../src/services/payouts/payouts.ts';
import type { ProjectId } from '../../src/domain/ids.ts';
import type { Json } from '../helpers/json.ts';

const DEBTOR = { name: 'Tender Payments BV', iban: 'NL02ABNA0123456789', bic: 'ABNANL2A' };
let t: TestService;
let host: HostProcess;
let dir: string;
type Shop = { project_id: string; api_key: string; merchant_id: string };
let a: Shop;
let b: Shop;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-payouts-live-'));
  host = await startHostProcess(dir);
  t = await startTestService({
    env: {
      ACQUIRER_SETTLEMENT_DIR: dir,
      PAYOUT_DEBTOR_NAME: DEBTOR.name,
      PAYOUT_DEBTOR_IBAN: DEBTOR.iban,
      PAYOUT_DEBTOR_BIC: DEBTOR.bic,
    },
  });
  const bind = async (name: string, terminalId: string): Promise<Shop> => {
    const p = await createBoundProject(t.svc.ctx, {
      name,
      mode: 'live',
      acquirer: host.url,
      terminalId,
      cardAcceptorId: 'SHOP00000000001',
    });
    return { project_id: p.project_id, api_key: p.api_key, merchant_id: p.merchant_id };
  };
  a = await bind('Live shop A', 'TNDR0201');
  b = await bind('Live shop B', 'TNDR0202');
});
after(async () => {
  await t?.close();
  host?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const key = (s: Shop) => ({ key: s.api_key });
async function balance(s: Shop) {
  const r = await t.api('GET', '/v1/balances/', undefined, key(s));
  assert.equal(r.status, 200, r.text);
  const eur = (r.body.balances as Json[]).find((x) => x.currency === 'EUR');
  return { pending: Number(eur?.pending ?? 0), available: Number(eur?.available ?? 0), reserved: Number(eur?.reserved ?? 0) };
}
async function ledgerHolds(step: string) {
  assert.deepEqual((await checkLedger(t.db)).violations, [], `tender ledger check after ${step}`);
}
const sepa = (cents: number) => (cents / 100).toFixed(2);

test('two live merchants: sales, a refund and a host chargeback settle, are paid out once in a valid pain.001, booked and returned by the bank', async () => {
  // sales and a refund through the acquiring host
  const a1 = await payOrder(t, { amount: 5000 }, key(a));
  await payOrder(t, { amount: 2500 }, key(a));
  const refund = await t.api('POST', `/v1/orders/${a1.id}/refunds/`, { amount: 1000 }, key(a));
  assert.equal(refund.status, 201, refund.text);
  assert.equal(refund.body.status, 'completed', refund.text);
  const b1 = await payOrder(t, { amount: 3000 }, key(b));
  assert.equal(b1.status, 'completed');
  await ledgerHolds('the payments');
  const beforeSettlement = await balance(a);
  assert.ok(beforeSettlement.pending > 0 && beforeSettlement.available === 0, JSON.stringify(beforeSettlement));

  // a chargeback the host reports in its settlement file, on B's sale
  const [m] = await t.db.query<{ terminal_id: string; rrn: string }>(
    "SELECT terminal_id, rrn FROM acquirer_link_messages WHERE transaction_id = $1 AND kind = 'sale'",
    [b1.transactions[0].id],
  );
  assert.match(await host.admin(`chargeback ${m.terminal_id} ${m.rrn} 1200 4837`), /^ok DSP\d+$/);

  // the daily settlement job of each live project: the host's dispute lines, then the money
  for (const s of [a, b]) {
    await importDisputeDir(t.svc.ctx, dir, s.project_id);
    await runSettlement(t.svc.ctx, s.project_id as ProjectId, new Date());
  }
  await ledgerHolds('settlement');
  const owedA = await balance(a);
  const owedB = await balance(b);
  assert.equal(owedA.pending, 0, 'settled: nothing pending');
  assert.equal(owedA.available, beforeSettlement.pending, 'what was pending is available');
  assert.equal(owedB.pending, 0);
  assert.ok(owedB.available > 0 && owedB.available < 3000 - 1200, `B: the sale less the chargeback and fees (${owedB.available})`);
  const dispute = await t.api('GET', '/v1/disputes/', undefined, key(b));
  assert.equal(dispute.body.disputes.length, 1, dispute.text);

  // the payout run: one live file, valid against the EPC schema, with the ledger's amounts
  for (const [s, iban, name] of [
    [a, 'NL91ABNA0417164300', 'Shop A'],
    [b, 'DE89370400440532013000', 'Shop B'],
  ] as const)
    await scheduleMerchant(t.svc.ctx, { merchant: s.merchant_id, iban, name, every: 'daily' });
  const out = join(dir, 'out');
  const run = await runPayouts(t.svc.ctx, { out });
  assert.deepEqual(
    run.payouts.map((p) => [p.merchant_id, p.amount]).sort(),
    [
      [a.merchant_id, owedA.available],
      [b.merchant_id, owedB.available],
    ].sort(),
  );
  assert.equal(run.files.length, 1, 'one file for the live payouts');
  const path = run.files[0]!.path;
  assert.doesNotMatch(path, /TEST/, 'a live file, meant for the bank');
  assert.equal(xmllint(path), '', 'valid against the EPC SCT schema');
  const xml = readFileSync(path, 'utf8');
  for (const owed of [owedA, owedB]) assert.match(xml, new RegExp(`<InstdAmt Ccy="EUR">${sepa(owed.available)}</InstdAmt>`));
  assert.match(xml, new RegExp(`<IBAN>${DEBTOR.iban}</IBAN>`), "the operator's account is the debtor");
  assert.equal((await balance(a)).available, 0, 'paid out: no longer owed');
  await ledgerHolds('the payout run');
  assert.deepEqual(await runPayouts(t.svc.ctx, { out }), { files: [], payouts: [] }, 'a second run pays nothing twice');

  // the bank's statement: A's transfer booked, B's returned (account closed)
  const pa = run.payouts.find((p) => p.merchant_id === a.merchant_id)!;
  const pb = run.payouts.find((p) => p.merchant_id === b.merchant_id)!;
  const statement = camt053('STMTLIVE1', [
    {
      iban: DEBTOR.iban,
      entries: [
        { end_to_end_id: pa.end_to_end_id, cents: pa.amount, direction: 'DBIT' },
        { end_to_end_id: pb.end_to_end_id, cents: pb.amount, direction: 'CRDT', reason: 'AC04' },
      ],
    },
  ]);
  const file = join(dir, 'statement.xml');
  writeFileSync(file, statement);
  assert.equal(xmllint(file, CAMT_XSD), '', 'a valid camt.053.001.08 statement');
  const read = await readBankFile(t.svc.ctx, statement);
  assert.deepEqual(
    read.booked.map((x) => x.payout_id),
    [pa.id],
  );
  assert.deepEqual(
    read.returned.map((x) => x.payout_id),
    [pb.id],
  );
  assert.equal((await balance(b)).available, pb.amount, 'the returned transfer is owed to B again');
  assert.equal((await balance(a)).available, 0);
  await ledgerHolds('the bank statement');
  const again = await readBankFile(t.svc.ctx, statement);
  assert.equal(again.booked.length + again.returned.length, 0, 'read again, it changes nothing');
});
