// The bank's files in (docs/payouts.md "Bank files in"): a real payout run by `tender payouts
// run`, then the operator's camt.053.001.08 statement naming its EndToEndIds (validated by xmllint
// against the ISO 20022 schema) books them; read again it changes nothing; a returned transfer
// puts the money back and the next run pays it again; a pain.002.001.10 rejection does the same;
// each line that matches nothing is reported and changes nothing; a broken or foreign file is
// refused with one line. The `tender` CLI on a store of its own (a PGlite data directory, or a
// PostgreSQL schema when DATABASE_URL is set), as an operator runs it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { embeddedEnv, runTender } from '../helpers/cli.ts';
import { xmllint } from '../helpers/sepa.ts';
import { CAMT_XSD, camt053, pain002, type Entry } from '../helpers/bankfiles.ts';
import { pgDb } from '../../src/store/db/pg.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import type { Db } from '../../src/store/db/db.ts';
import { migrate } from '../../src/store/db/migrate.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { buildContext } from '../../src/main.ts';
import { createProject } from '../../src/services/platform/tenancy.ts';
import { seedOrders } from '../../src/services/platform/seed.ts';
import { runPayouts, scheduleMerchant, TEST_DEBTOR } from '../../src/services/payouts/payouts.ts';
import { projectBalances } from '../../src/store/payouts/balances.ts';

const dir = mkdtempSync(join(tmpdir(), 'tender-bankfiles-'));
const out = join(dir, 'out');
const url = process.env.DATABASE_URL;
const schema = `b_${randomBytes(6).toString('hex')}`;
const masterKey = randomBytes(32).toString('hex');
let env: NodeJS.ProcessEnv = { ...embeddedEnv(join(dir, 'data')), TENDER_MASTER_KEY: masterKey };

const admin = async (text: string) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
};

/** The store, opened for a moment between two CLI runs (an embedded store has one process at a time). */
async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const db = url ? pgDb({ url, schema, max: 2 }) : await pgliteDb(join(dir, 'data'));
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}
const contextOf = (db: Db) =>
  buildContext({ db, config: loadConfig({ LOG_LEVEL: 'error' }, { port: 0, masterKey }), log: createLogger('error') });

const tender = (...args: string[]) => runTender(args, env, 120_000);
/** `tender payouts booked FILE --json`, with the file written first; its exit code and answer. */
async function booked(name: string, xml: string) {
  const path = join(dir, name);
  writeFileSync(path, xml);
  const r = await tender('payouts', 'booked', path, '--json');
  assert.equal(r.stderr, '', `${name}: ${r.stderr}`);
  return { code: r.code, body: JSON.parse(r.stdout) };
}
/** A statement file, valid against the ISO 20022 camt.053.001.08 schema, as a bank sends it. */
function statement(name: string, entries: Entry[], iban = TEST_DEBTOR.iban, more: Array<{ iban: string; entries: Entry[] }> = []) {
  const xml = camt053(`STMT${name.toUpperCase()}`, [{ iban, entries }, ...more]);
  const path = join(dir, `${name}.xml`);
  writeFileSync(path, xml);
  assert.equal(xmllint(path, CAMT_XSD), '', `${name} is a valid camt.053.001.08 statement`);
  return xml;
}

interface Paid {
  id: string;
  merchant_id: string;
  amount: number;
  end_to_end_id: string;
}
const shops: Record<string, { merchant: string; projects: string[] }> = {};
let first: { path: string; msg_id: string; pmt_inf_id: string; payouts: Record<string, Paid> };
/** tomorrow's file: shop a paid again */
let second: { msg_id: string; payout: Paid };

const state = (endToEndId: string) =>
  withDb(async (db) => {
    const [p] = await db.query<{ state: string; return_reason: string | null }>(
      'SELECT state, return_reason FROM payouts WHERE end_to_end_id = $1',
      [endToEndId],
    );
    return p;
  });
const available = (projectId: string) =>
  withDb(async (db) => Number((await projectBalances(db, projectId)).find((b) => b.currency === 'EUR')?.available ?? 0));
/** Everything a bank file could change: every payout's state and reason, and the number of ledger rows. */
const snapshot = () =>
  withDb(async (db) => ({
    payouts: await db.query('SELECT id, state, return_reason, modified FROM payouts ORDER BY id'),
    entries: Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger_entries'))[0]!.n),
  }));
/** Whether a project has a positive available EUR balance (what a payout run takes). */
const hasAvailable = async (db: Db, projectId: string) =>
  Number((await projectBalances(db, projectId)).find((b) => b.currency === 'EUR')?.available ?? 0) > 0;
async function ledgerChecks() {
  const r = await tender('ledger', 'check', '--json');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).violations, []);
}

before(async () => {
  if (url) {
    await admin(`CREATE SCHEMA ${schema}`);
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${schema}`);
    env = { ...env, DATABASE_URL: u.toString() };
  }
  // the store and its money, made in this process, then closed for the CLI
  const db: Db = url ? pgDb({ url, schema, max: 2 }) : await pgliteDb(join(dir, 'data'));
  try {
    await migrate(db);
    const ctx = contextOf(db);
    const ibans = [
      'NL91ABNA0417164300',
      'DE89370400440532013000',
      'FR1420041010050500013M02606',
      'BE68539007547034',
      'AT611904300234573201',
    ];
    for (const [i, name] of ['a', 'b', 'c', 'd', 'e'].entries()) {
      const p = await createProject(ctx, { name: `Shop ${name}`, mode: 'test' });
      const projects = [p.project_id];
      // shop a has two projects: a return gives each back what the payout took from it
      if (name === 'a') projects.push((await createProject(ctx, { name: 'Shop a2', mode: 'test', merchantId: p.merchant_id })).project_id);
      for (const project of projects) {
        await seedOrders(ctx, { projectId: project, orders: 80 });
        // the seed's orders are random (refunds, chargebacks): every project must have money to pay out
        for (let more = 0; more < 10 && !(await hasAvailable(db, project)); more++)
          await seedOrders(ctx, { projectId: project, orders: 20 });
      }
      await scheduleMerchant(ctx, { merchant: p.merchant_id, iban: ibans[i]!, name: `Shop ${name}`, every: 'daily' });
      shops[name] = { merchant: p.merchant_id, projects };
    }
  } finally {
    await db.close();
  }
});
after(async () => {
  if (url) await admin(`DROP SCHEMA ${schema} CASCADE`);
  rmSync(dir, { recursive: true, force: true });
});

test('a statement books the payouts of a run: a debit matching EndToEndId, amount and currency', async () => {
  const run = await tender('payouts', 'run', '--out', out, '--json');
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout) as { files: Array<{ path: string; msg_id: string }>; payouts: Paid[] };
  assert.equal(result.files.length, 1);
  const byShop = Object.fromEntries(
    Object.entries(shops).map(([name, s]) => [name, result.payouts.find((p) => p.merchant_id === s.merchant)!]),
  );
  for (const [name, p] of Object.entries(byShop)) assert.ok(p && p.amount > 0, `shop ${name} is paid`);
  const pain001 = readFileSync(result.files[0]!.path, 'utf8');
  first = {
    path: result.files[0]!.path,
    msg_id: result.files[0]!.msg_id,
    pmt_inf_id: /<PmtInfId>([A-Z0-9]+)<\/PmtInfId>/.exec(pain001)![1]!,
    payouts: byShop,
  };

  const debit = (p: Paid): Entry => ({ end_to_end_id: p.end_to_end_id, cents: p.amount, direction: 'DBIT' });
  const xml = statement('booked', [
    debit(byShop.a!),
    debit(byShop.b!),
    debit(byShop.c!),
    { ...debit(byShop.d!), status: 'PDNG' }, // not booked yet: nothing to say
    { end_to_end_id: 'NOTPROVIDED', cents: 99_00, direction: 'CRDT' }, // money in, not Tender's
  ]);
  const { code, body } = await booked('booked.xml', xml);
  assert.equal(code, 0);
  assert.equal(body.file, 'camt.053.001.08');
  assert.deepEqual(
    body.booked.map((b: Paid) => b.end_to_end_id).sort(),
    [byShop.a, byShop.b, byShop.c].map((p) => p!.end_to_end_id).sort(),
  );
  assert.deepEqual(body.unmatched, []);
  assert.equal(body.ignored, 2);
  for (const name of ['a', 'b', 'c']) assert.equal((await state(byShop[name]!.end_to_end_id))!.state, 'booked', name);
  assert.equal((await state(byShop.d!.end_to_end_id))!.state, 'sent', 'a pending entry books nothing');

  // the same statement again: every payout already booked, nothing written
  const before = await snapshot();
  const again = await booked('booked-again.xml', xml);
  assert.equal(again.code, 0);
  assert.deepEqual(again.body.booked, []);
  assert.equal(again.body.unchanged.length, 3);
  assert.deepEqual(await snapshot(), before, 'a statement read twice changes nothing the second time');
  await ledgerChecks();
});

test('a returned transfer puts the money back on the available balance of each project it came from, and the next run pays it again', async () => {
  const a = first.payouts.a!;
  const taken = await withDb((db) =>
    db.query<{ project_id: string; amount: number }>(
      "SELECT project_id, amount FROM ledger_entries WHERE payout_id = $1 AND account = 'merchant_available' ORDER BY project_id",
      [a.id],
    ),
  );
  assert.equal(taken.length, 2, "shop a's payout took from both its projects");
  for (const p of shops.a!.projects) assert.equal(await available(p), 0);

  const xml = statement('returned', [{ end_to_end_id: a.end_to_end_id, cents: a.amount, direction: 'CRDT', reason: 'AC04' }]);
  const { code, body } = await booked('returned.xml', xml);
  assert.equal(code, 0);
  assert.deepEqual(
    body.returned.map((r: { end_to_end_id: string; reason: string }) => [r.end_to_end_id, r.reason]),
    [[a.end_to_end_id, 'AC04']],
  );
  assert.deepEqual(await state(a.end_to_end_id), { state: 'returned', return_reason: 'AC04' });
  for (const t of taken) assert.equal(await available(t.project_id), Number(t.amount), 'each project has back what it gave');
  // the payout's own journal stays as it was: the return is a journal of its own
  const journals = await withDb((db) =>
    db.query<{ kind: string; n: number }>(
      'SELECT kind, count(DISTINCT journal_id)::int AS n FROM ledger_entries WHERE payout_id = $1 GROUP BY kind ORDER BY kind',
      [a.id],
    ),
  );
  assert.deepEqual(
    journals.map((j) => [j.kind, j.n]),
    [
      ['payout', 1],
      ['payout_return', 1],
    ],
  );
  await ledgerChecks();

  const before = await snapshot();
  const again = await booked('returned-again.xml', xml);
  assert.equal(again.code, 0);
  assert.deepEqual(again.body.returned, []);
  assert.equal(again.body.unchanged.length, 1);
  assert.deepEqual(await snapshot(), before, 'read twice, the return is given back once');

  // tomorrow's run pays shop a what came back, and nothing to the shops whose payouts were booked
  const tomorrow = new Date(Date.now() + 86_400_000);
  const next = await withDb((db) => runPayouts(contextOf(db), { out, now: tomorrow }));
  assert.deepEqual(
    next.payouts.map((p) => [p.merchant_id, p.amount]),
    [[shops.a!.merchant, a.amount]],
  );
  second = { msg_id: next.files[0]!.msg_id, payout: { ...next.payouts[0]!, merchant_id: shops.a!.merchant } };
  await ledgerChecks();
});

test('a pain.002 status report rejects a transfer (TxSts RJCT) or a whole file (GrpSts RJCT): the money goes back', async () => {
  const d = first.payouts.d!;
  const dProject = shops.d!.projects[0]!;
  assert.equal(await available(dProject), 0);
  const report = pain002('STSRPT1', {
    msg_id: first.msg_id,
    group: { status: 'PART' },
    payments: [
      {
        pmt_inf_id: first.pmt_inf_id,
        status: 'PART',
        transactions: [
          { end_to_end_id: d.end_to_end_id, status: 'RJCT', reason: 'AC01', cents: d.amount },
          { end_to_end_id: first.payouts.e!.end_to_end_id, status: 'ACSC' },
        ],
      },
    ],
  });
  const { code, body } = await booked('rejected.xml', report);
  assert.equal(code, 0);
  assert.equal(body.file, 'pain.002.001.10');
  assert.deepEqual(
    body.rejected.map((r: { end_to_end_id: string; reason: string }) => [r.end_to_end_id, r.reason]),
    [[d.end_to_end_id, 'AC01']],
  );
  assert.deepEqual(body.unmatched, []);
  assert.deepEqual(await state(d.end_to_end_id), { state: 'rejected', return_reason: 'AC01' });
  assert.equal((await state(first.payouts.e!.end_to_end_id))!.state, 'sent', 'accepted: no change');
  assert.equal(await available(dProject), d.amount, 'back on the available balance');
  const before = await snapshot();
  assert.equal((await booked('rejected-again.xml', report)).body.unchanged.length, 1);
  assert.deepEqual(await snapshot(), before, 'read twice, rejected once');

  const group = await booked('group.xml', pain002('STSRPT2', { msg_id: second.msg_id, group: { status: 'RJCT', reason: 'FF01' } }));
  assert.equal(group.code, 0);
  assert.deepEqual(
    group.body.rejected.map((r: { end_to_end_id: string; reason: string }) => [r.end_to_end_id, r.reason]),
    [[second.payout.end_to_end_id, 'FF01']],
  );
  assert.equal((await available(shops.a!.projects[0]!)) + (await available(shops.a!.projects[1]!)), second.payout.amount);
  await ledgerChecks();
});

test('what matches no payout is reported, and changes nothing', async () => {
  const { b, d, e } = first.payouts;
  const unknown = `TSE${randomBytes(16).toString('hex').toUpperCase()}`;
  const xml = statement(
    'unmatched',
    [
      { end_to_end_id: unknown, cents: 100, direction: 'DBIT' },
      { end_to_end_id: e!.end_to_end_id, cents: e!.amount + 1, direction: 'DBIT' },
      { end_to_end_id: e!.end_to_end_id, cents: e!.amount, currency: 'USD', direction: 'DBIT' },
      { end_to_end_id: d!.end_to_end_id, cents: d!.amount, direction: 'DBIT' }, // rejected: final
      { end_to_end_id: e!.end_to_end_id, cents: e!.amount, direction: 'CRDT', reason: 'AC04', reversal: true },
    ],
    TEST_DEBTOR.iban,
    [{ iban: 'DE89370400440532013000', entries: [{ end_to_end_id: e!.end_to_end_id, cents: e!.amount, direction: 'DBIT' }] }],
  );
  const before = await snapshot();
  const { code, body } = await booked('unmatched.xml', xml);
  assert.equal(code, 1, 'exits 1 when a line matches nothing');
  assert.deepEqual(
    body.unmatched.map((u: { end_to_end_id: string; reason: string }) => [u.end_to_end_id, u.reason]),
    [
      [unknown, 'unknown_end_to_end_id'],
      [e!.end_to_end_id, 'amount_mismatch'],
      [e!.end_to_end_id, 'currency_mismatch'],
      [d!.end_to_end_id, 'final_state'],
      [e!.end_to_end_id, 'reversal'],
      [e!.end_to_end_id, 'account_mismatch'],
    ],
  );
  assert.deepEqual([body.booked, body.returned, body.rejected], [[], [], []]);
  // a rejection of a booked payout, a file and a block Tender never sent
  const report = await booked(
    'unmatched-status.xml',
    pain002('STSRPT3', {
      msg_id: first.msg_id,
      payments: [
        { pmt_inf_id: 'NOSUCHBLOCK', status: 'RJCT' },
        { pmt_inf_id: first.pmt_inf_id, transactions: [{ end_to_end_id: b!.end_to_end_id, status: 'RJCT', reason: 'AC04' }] },
      ],
    }),
  );
  assert.equal(report.code, 1);
  assert.deepEqual(
    report.body.unmatched.map((u: { reason: string }) => u.reason),
    ['unknown_message', 'final_state'],
  );
  const elsewhere = await booked('unknown-file.xml', pain002('STSRPT4', { msg_id: 'TSTNOSUCHFILE', group: { status: 'RJCT' } }));
  assert.deepEqual(
    elsewhere.body.unmatched.map((u: { reason: string }) => u.reason),
    ['unknown_message'],
  );
  assert.deepEqual(await snapshot(), before);
  await ledgerChecks();
});

test('a broken, foreign or entity-declaring file gets one clear line and changes nothing', async () => {
  const e = first.payouts.e!;
  const good = statement('good', [{ end_to_end_id: e.end_to_end_id, cents: e.amount, direction: 'DBIT' }]);
  const before = await snapshot();
  const refused = async (name: string, xml: string, message: RegExp) => {
    const path = join(dir, name);
    writeFileSync(path, xml);
    const r = await tender('payouts', 'booked', path, '--json');
    assert.equal(r.code, 1, name);
    assert.equal(r.stdout, '', name);
    assert.match(r.stderr, message, name);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: one line, no stack trace: ${r.stderr}`);
  };
  await refused('cut.xml', good.slice(0, Math.floor(good.length * 0.6)), /^tender: ValidationError: the file is not well-formed XML/);
  await refused('tags.xml', good.replace('</Amt>', '</Amount>'), /closes <Amt>/);
  await refused(
    'foreign.xml',
    good.replaceAll('camt.053.001.08', 'camt.053.001.02'),
    /the file is camt\.053\.001\.02: Tender reads camt\.053\.001\.08/,
  );
  await refused('own-file.xml', readFileSync(first.path, 'utf8'), /the file is pain\.001\.001\.09: Tender reads/);
  await refused('not-xml.xml', 'EndToEndId,amount\n', /not well-formed XML/);
  await refused(
    'entity.xml',
    `<?xml version="1.0"?><!DOCTYPE Document [<!ENTITY x SYSTEM "file:///etc/passwd">]>${good.replace(/^<\?xml[^>]*>/, '').replace(e.end_to_end_id, '&x;')}`,
    /DOCTYPE/,
  );
  await refused('no-amount.xml', good.replace(/(<Ntry>[\s\S]*?)<Amt Ccy="EUR">[^<]*<\/Amt>/, '$1'), /Amt is missing/);
  await refused(
    'odd-amount.xml',
    good.replaceAll(`>${(e.amount / 100).toFixed(2)}<`, `>${(e.amount / 100).toFixed(2)}5<`),
    /part of a cent/,
  );
  const big = join(dir, 'big.xml');
  writeFileSync(big, good.replace('</Document>', `<!-- ${'x'.repeat(8 * 1024 * 1024)} --></Document>`));
  const r = await tender('payouts', 'booked', big);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /more than the \d+ of a bank file Tender reads/);
  assert.deepEqual(await snapshot(), before);
  assert.equal((await state(e.end_to_end_id))!.state, 'sent');
});

test("tender payouts overview: every merchant's balances, the next payouts, what came back, the negative balances", async () => {
  const r = await tender('payouts', 'overview', '--json');
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  const back = await withDb((db) =>
    db.query<{ id: string; state: string; return_reason: string }>(
      "SELECT id, state, return_reason FROM payouts WHERE state IN ('returned', 'rejected') ORDER BY id",
    ),
  );
  assert.ok(back.length >= 2, 'the earlier tests returned and rejected payouts');
  assert.deepEqual(
    o.returned.map((p: { id: string; state: string; reason: string }) => [p.id, p.state, p.reason]).sort(),
    back.map((p) => [p.id, p.state, p.return_reason]).sort(),
  );
  for (const [name, shop] of Object.entries(shops)) {
    const want = await withDb(async (db) => {
      let available = 0;
      for (const project of shop.projects)
        available += Number((await projectBalances(db, project)).find((b) => b.currency === 'EUR')?.available ?? 0);
      return available;
    });
    const row = o.balances.find(
      (b: { merchant_id: string; mode: string; currency: string }) =>
        b.merchant_id === shop.merchant && b.mode === 'test' && b.currency === 'EUR',
    );
    assert.equal(row?.available ?? 0, want, `shop ${name}'s available balance over its projects`);
    assert.equal(row.open_disputes, 0, 'no dispute in these shops');
    const next = o.next_payouts.filter((n: { merchant_id: string }) => n.merchant_id === shop.merchant);
    assert.equal(next.length, 1, `shop ${name}'s schedule`);
    assert.match(next[0].period, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(next[0].test, Math.max(0, want), 'what a run would take now');
  }
  assert.deepEqual(
    o.negative,
    o.balances.filter((b: { available: number }) => b.available < 0),
  );
  const text = await tender('payouts', 'overview');
  assert.equal(text.code, 0, text.stderr);
  for (const section of ['balances', 'next payouts', 'returned or rejected payouts', 'negative available balances'])
    assert.match(text.stdout, new RegExp(`^${section}`, 'm'));
  assert.match(text.stdout, new RegExp(back[0]!.id));
});

test('ledger check names a payout whose journals disagree with its state', async () => {
  const e = first.payouts.e!;
  await withDb((db) => db.query("UPDATE payouts SET state = 'returned' WHERE id = $1", [e.id]));
  const r = await tender('ledger', 'check', '--json');
  assert.equal(r.code, 1);
  assert.deepEqual(JSON.parse(r.stdout).violations, [
    `payout ${e.id} (returned, ${e.amount}): its journals take ${e.amount} from the available balance, not 0`,
  ]);
});
