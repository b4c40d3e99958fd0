// Payouts (docs/payouts.md): schedules with checked IBANs, a run that takes each merchant's
// available euro balance into one payout and writes a pain.001.001.09 file that xmllint
// validates against the EPC's schema, a second run that pays nothing twice, and the SEPA rules
// each broken. In process on the suite's store, like the API a merchant calls.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { eventually, moneyClient } from '../helpers/money.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { runPayouts, scheduleMerchant, TEST_DEBTOR } from '../../src/services/payouts/payouts.ts';
import { pain001, parseEuros, sepaAmount, sepaId, sepaText } from '../../src/domain/payouts/sepa.ts';
import { DomainError } from '../../src/domain/errors.ts';
import type { Json } from '../helpers/json.ts';
import { xmllint } from '../helpers/sepa.ts';

let t: TestService;
const dir = mkdtempSync(join(tmpdir(), 'tender-payouts-'));
const workerDir = join(dir, 'worker');
before(async () => {
  t = await startTestService({ env: { PAYOUT_DIR: workerDir } });
});
after(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const { sale, refund } = moneyClient(() => t);
const settle = async (o: Json, key: string) =>
  assert.equal((await t.api('POST', `/v1/test/orders/${o.id}/settle/`, undefined, { key })).status, 200);
const available = async (key: string) =>
  ((await t.api('GET', '/v1/balances/', undefined, { key })).body.balances as Json[]).find((b) => b.currency === 'EUR')?.available ?? 0;

test('a schedule takes only a valid IBAN, a SEPA name, a known schedule and time zone', async () => {
  const p = await t.newProject('test');
  const base = { merchant: p.merchant_id, iban: 'NL91 ABNA 0417 1643 00', name: 'Shop B.V.', every: 'daily' };
  const refused = async (over: Record<string, unknown>, field: string) => {
    await assert.rejects(
      scheduleMerchant(t.svc.ctx, { ...base, ...over } as never),
      (e: unknown) => e instanceof DomainError && e.field === field,
      JSON.stringify(over),
    );
  };
  await refused({ iban: 'NL91ABNA0417164301' }, 'iban'); // check digits wrong
  await refused({ iban: 'not an iban' }, 'iban');
  await refused({ name: '€€€' }, 'name');
  await refused({ name: 'x'.repeat(71) }, 'name');
  await refused({ every: 'weekly:xyz' }, 'every');
  await refused({ every: 'monthly:32' }, 'every');
  await refused({ minimum: -1 }, 'minimum');
  await refused({ time_zone: 'Mars/Olympus' }, 'time_zone');
  const s = await scheduleMerchant(t.svc.ctx, base);
  assert.equal(s.iban, 'NL91ABNA0417164300', 'stored as a file carries it');
  assert.equal(s.iban_changed, false);
  assert.equal(s.held_until, null);
  const again = await scheduleMerchant(t.svc.ctx, { ...base, iban: 'DE89370400440532013000' });
  assert.equal(again.iban_changed, true);
  assert.ok(again.held_until && again.held_until.getTime() > Date.now() + 23 * 3_600_000, 'a new IBAN holds the next payout a day');
});

test('a run pays each merchant its available euros once, in one pain.001 that the EPC schema validates; a second run pays nothing', async () => {
  const a = await t.newProject('test');
  const b = await t.newProject('test');
  const s1 = await sale({ key: a.api_key }); // 1995 - 61
  const s2 = await sale({ key: a.api_key });
  await refund(s2, 500, { key: a.api_key });
  await settle(s1, a.api_key);
  await settle(s2, a.api_key);
  const s3 = await sale({ key: b.api_key });
  await settle(s3, b.api_key);
  const pending = await sale({ key: b.api_key }); // not settled: stays pending, not paid
  assert.ok(pending.id);
  const owedA = await available(a.api_key);
  const owedB = await available(b.api_key);
  assert.equal(owedA, 1934 * 2 - 500);
  assert.equal(owedB, 1934);
  await scheduleMerchant(t.svc.ctx, { merchant: a.merchant_id, iban: 'NL91ABNA0417164300', name: 'Café & Zoon', every: 'daily' });
  await scheduleMerchant(t.svc.ctx, { merchant: b.merchant_id, iban: 'DE89370400440532013000', name: 'Second shop', every: 'daily' });

  const run = await runPayouts(t.svc.ctx, { out: dir });
  const mine = run.payouts.filter((p) => p.merchant_id === a.merchant_id || p.merchant_id === b.merchant_id);
  assert.deepEqual(
    mine.map((p) => [p.merchant_id, p.amount]).sort(),
    [
      [a.merchant_id, owedA],
      [b.merchant_id, owedB],
    ].sort(),
  );
  assert.equal(run.files.length, 1, 'one file for the test payouts');
  const [file] = run.files;
  assert.match(file!.path, /TEST-simulation-pain\.001-\d{4}-\d{2}-\d{2}-TST[0-9A-F]{32}\.xml$/);
  assert.equal(xmllint(file!.path), '', 'valid against the EPC SCT schema');
  const xml = readFileSync(file!.path, 'utf8');
  assert.match(xml, /<BtchBookg>false<\/BtchBookg>/);
  assert.equal(xml.match(/<CdtTrfTxInf>/g)?.length, run.payouts.length, 'one credit transfer per payout');
  assert.match(xml, new RegExp(`<InstdAmt Ccy="EUR">${sepaAmount(owedA)}</InstdAmt>`));
  assert.match(xml, /<Nm>Cafe \+ Zoon<\/Nm>/, 'the name in the SEPA character set');
  assert.match(xml, new RegExp(`<Nm>${TEST_DEBTOR.name}</Nm>`), 'the documented test debtor');
  assert.equal(await available(a.api_key), 0, 'taken out of what Tender owes');
  assert.equal(await available(b.api_key), 0);
  assert.deepEqual((await checkLedger(t.db)).violations, []);

  const second = await runPayouts(t.svc.ctx, { out: dir });
  assert.deepEqual(second, { files: [], payouts: [] }, 'the same period pays nothing twice');
  assert.equal(readFileSync(file!.path, 'utf8'), xml);

  const list = await t.api('GET', '/v1/payouts/', undefined, { key: a.api_key });
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    list.body.payouts.map((p: Json) => [p.amount, p.state, p.currency]),
    [[owedA, 'sent', 'EUR']],
  );
  const one = await t.api('GET', `/v1/payouts/${list.body.payouts[0].id}/`, undefined, { key: a.api_key });
  assert.equal(one.status, 200, one.text);
  // its lines: each payment, refund and fee it took (test/e2e/payout-statements.test.ts)
  assert.equal(
    one.body.lines.reduce((n: number, l: Json) => n + l.amount, 0),
    owedA,
  );
  assert.deepEqual(one.body.lines.map((l: Json) => l.type).sort(), ['fee', 'fee', 'payment', 'payment', 'refund'].sort());
  assert.equal(
    (await t.api('GET', `/v1/payouts/${list.body.payouts[0].id}/`, undefined, { key: b.api_key })).status,
    404,
    "another merchant's",
  );
  assert.equal((await t.api('GET', '/v1/payouts/not-an-id/', undefined, { key: a.api_key })).status, 404);
});

test("the worker's payouts job pays a merchant into PAYOUT_DIR at the start of its local day, then plans the next", async () => {
  const p = await t.newProject('test');
  const s = await sale({ key: p.api_key });
  await settle(s, p.api_key);
  await scheduleMerchant(t.svc.ctx, {
    merchant: p.merchant_id,
    iban: 'NL91ABNA0417164300',
    name: 'Worker shop',
    every: 'daily',
    time_zone: 'Europe/Amsterdam',
  });
  const job = async () =>
    (await t.db.query<{ run_at: Date }>("SELECT run_at FROM jobs WHERE kind = 'payouts' AND ref_id = $1", [p.merchant_id]))[0];
  const planned = (await job())!.run_at;
  const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Amsterdam', hour: '2-digit', minute: '2-digit' }).format(planned);
  assert.equal(local, '00:00', 'midnight in the merchant time zone');
  await t.db.query("UPDATE jobs SET run_at = now() - interval '1 second' WHERE kind = 'payouts' AND ref_id = $1", [p.merchant_id]);
  await eventually(async () => {
    const rows = await t.db.query<{ state: string; amount: number }>('SELECT state, amount FROM payouts WHERE merchant_id = $1', [
      p.merchant_id,
    ]);
    assert.deepEqual(
      rows.map((r) => [r.state, Number(r.amount)]),
      [['sent', 1934]],
    );
  });
  const files = readdirSync(workerDir).filter((f) => f.endsWith('.xml'));
  assert.ok(files.some((f) => readFileSync(join(workerDir, f), 'utf8').includes('Worker shop')));
  for (const f of files) assert.equal(xmllint(join(workerDir, f)), '', f);
  await eventually(async () => assert.ok((await job())!.run_at.getTime() > Date.now(), 'the next look is planned'));
});

test('the SEPA rules, each broken: amounts, characters, lengths, ids; the schema refuses what they keep out', () => {
  assert.equal(sepaAmount(1), '0.01');
  assert.equal(sepaAmount(123456), '1234.56');
  assert.equal(sepaAmount(99_999_999_999), '999999999.99');
  for (const bad of [0, -1, 100_000_000_000, 1.5]) assert.throws(() => sepaAmount(bad), RangeError, String(bad));
  assert.equal(sepaText('Müller & Söhne GmbH', 70), 'Muller + Sohne GmbH');
  assert.equal(sepaText('Straße 1 <b>"x"</b>', 70), 'Strasse 1 b x /b');
  assert.equal(sepaText('€', 70), '');
  assert.equal(sepaText('a'.repeat(80), 70).length, 70);
  assert.equal(sepaId('TND', '0190b8d2-7c1e-7a3b-9f00-0123456789ab'), 'TND0190B8D27C1E7A3B9F000123456789AB');
  assert.throws(() => sepaId('TOOLONG', '0190b8d2-7c1e-7a3b-9f00-0123456789ab'), RangeError);
  assert.throws(() => sepaId('/', '0190b8d2-7c1e-7a3b-9f00-0123456789ab'), RangeError);
  assert.equal(parseEuros('25'), 2500);
  assert.equal(parseEuros('25.5'), 2550);
  assert.equal(parseEuros('25.50'), 2550);
  assert.equal(parseEuros('25.505'), undefined);
  assert.equal(parseEuros('-1'), undefined);

  const file = {
    msg_id: 'TND0190B8D27C1E7A3B9F000123456789AB',
    pmt_inf_id: 'TNP0190B8D27C1E7A3B9F000123456789AB',
    created: new Date('2026-12-01T10:00:00Z'),
    execution: '2026-12-01',
    debtor: { name: 'Operator', iban: 'NL91ABNA0417164300', bic: 'ABNANL2A' },
    transfers: [{ end_to_end_id: 'TNE1', cents: 1234, creditor: { name: 'Shop', iban: 'DE89370400440532013000' }, reference: 'payout' }],
  };
  const check = (xml: string) => {
    const path = join(dir, `rule-${Math.random().toString(36).slice(2)}.xml`);
    writeFileSync(path, xml);
    return xmllint(path);
  };
  assert.equal(check(pain001(file)), '');
  const good = pain001(file);
  // what the rules keep out, the schema refuses: so the file is checked where it matters
  assert.notEqual(check(good.replace('Ccy="EUR">12.34<', 'Ccy="EUR">12.345<')), '', 'three decimals');
  assert.notEqual(check(good.replace('Ccy="EUR">12.34<', 'Ccy="EUR">0.00<')), '', 'zero');
  assert.notEqual(check(good.replace('<Nm>Shop</Nm>', `<Nm>${'x'.repeat(71)}</Nm>`)), '', 'a name over 70');
  assert.notEqual(check(good.replace(file.msg_id, `${file.msg_id}X`)), '', 'an id over 35');
  assert.throws(() => pain001({ ...file, transfers: [] }), RangeError, 'no empty file');
  assert.throws(() => pain001({ ...file, transfers: [{ ...file.transfers[0]!, cents: 0 }] }), RangeError);
  assert.throws(
    () => pain001({ ...file, transfers: [{ ...file.transfers[0]!, creditor: { name: '€', iban: 'DE89370400440532013000' } }] }),
    RangeError,
  );
});
