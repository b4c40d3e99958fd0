// The ISO 8583 link's rows on a real store (both stores): STANs unique per terminal and day
// across several nodes and restarts, the journal's first row wins, the binding in the settings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { freshStore } from '../helpers/service.ts';
import type { Db } from '../../src/store/db/db.ts';
import { insertMerchant, insertProject, findProject } from '../../src/store/platform/projects.ts';
import { reserveStans, setProjectAcquirer } from '../../src/store/payments/acquirer-link.ts';
import { linkJournal } from '../../src/services/payments/acquirer-link.ts';
import type { JournalEntry } from '../../src/acquirer/iso8583/journal.ts';

let store: { db: Db; drop(): Promise<void> };
const projectId = randomUUID();
before(async () => {
  store = await freshStore();
  const merchant = randomUUID();
  await insertMerchant(store.db, merchant, 'Shop');
  await insertProject(store.db, { id: projectId, merchant_id: merchant, name: 'Live', mode: 'live', settings: {} });
});
after(async () => store?.drop());

test('STANs: three nodes drawing at once, then a restart, never get the same STAN of a terminal and day', async () => {
  const journal = linkJournal(store.db);
  const day = '2026-11-26';
  // each node its own journal on the shared store, each drawing one STAN per statement
  const node = () => linkJournal(store.db);
  const nodes = [node(), node(), node()];
  const drawn = (await Promise.all(nodes.map((n) => Promise.all(Array.from({ length: 40 }, () => n.nextStan('TERM0001', day)))))).flat();
  assert.equal(new Set(drawn).size, 120, 'no STAN twice');
  const restarted = node();
  const after = await Promise.all(Array.from({ length: 10 }, () => restarted.nextStan('TERM0001', day)));
  assert.ok(
    after.every((s) => !drawn.includes(s)),
    'a restarted node goes on after what was drawn before',
  );
  // another terminal and another day start again at 1
  assert.equal(await journal.nextStan('TERM0002', day), 1);
  assert.equal(await journal.nextStan('TERM0001', '2026-11-27'), 1);
  await assert.rejects(reserveStans(store.db, 'TERM0003', day, 1_000_000), /check|constraint|violates/i);
});

test('STANs: a node reserves them in blocks (one statement for a hundred), consecutive within its block', async () => {
  const journal = linkJournal(store.db);
  const day = '2026-11-28';
  const statements: string[] = [];
  const stop = store.db.observe((sql) => statements.push(sql));
  let drawn: number[];
  try {
    drawn = await Promise.all(Array.from({ length: 150 }, () => journal.nextStan('TERM0004', day)));
  } finally {
    stop();
  }
  assert.equal(statements.length, 2, statements.join('\n'));
  assert.deepEqual(
    [...drawn].sort((a, b) => a - b),
    Array.from({ length: 150 }, (_, i) => i + 1),
  );
  // another node on the same store goes on after both blocks
  assert.equal(await linkJournal(store.db).nextStan('TERM0004', day), 201);
});

test('the journal: written once per operation id, answered once; the binding lives in the settings', async () => {
  const journal = linkJournal(store.db);
  const e: JournalEntry = {
    operation_id: 'op-1',
    project_id: projectId,
    transaction_id: randomUUID(),
    acquirer: 'iso8583://127.0.0.1:7000',
    terminal_id: 'TERM0001',
    day: '2026-11-26',
    stan: '000001',
    rrn: '633010000001',
    mti: '0200',
    transmission: '1126100000',
    kind: 'sale',
    amount: 1234,
    currency: 'EUR',
    original_rrn: null,
    original_kind: null,
    original_data: null,
    response_code: null,
    authorization_code: null,
  };
  const now = new Date();
  assert.deepEqual(await journal.record(e, now), e);
  const second = await journal.record({ ...e, stan: '000002', amount: 1 }, now);
  assert.deepEqual([second.stan, second.amount], ['000001', 1234], 'the first row wins');
  await journal.answered(projectId, 'op-1', '00', 'A1B2C3', now);
  await journal.answered(projectId, 'op-1', '05', null, now);
  assert.deepEqual(
    [(await journal.find(projectId, 'op-1'))?.response_code, (await journal.find(projectId, 'op-1'))?.authorization_code],
    ['00', 'A1B2C3'],
  );
  assert.equal(await journal.find(projectId, 'op-2'), undefined);

  const binding = {
    acquirer: 'iso8583://127.0.0.1:7000',
    terminal_id: 'TERM0009',
    card_acceptor_id: 'SHOP',
    refuse_unauthenticated: false,
  };
  assert.equal(await setProjectAcquirer(store.db, projectId, binding), true);
  assert.deepEqual((await findProject(store.db, projectId))?.settings.acquirer, binding);
  assert.equal(await setProjectAcquirer(store.db, randomUUID(), binding), false);
});
