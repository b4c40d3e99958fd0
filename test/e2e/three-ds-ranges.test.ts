// Card ranges of a live project's directory server (issue 43): Tender sends ds-host a PReq at
// first use and keeps the PRes's ranges and serialNum in the store; a PAN in no range is not sent
// an AReq (the unauthenticated fallback at once); the refresh is daily, never more than hourly,
// sends the serialNum back (an unchanged DS answers no range), is taken by one node at a time (the
// DS row's lease), and a failed PReq keeps the ranges.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestService } from '../helpers/service.ts';
import { startLiveThreeDs, type LiveThreeDs } from '../helpers/live-three-ds.ts';
import { dsCard } from '../../src/acquirer/threeds/host/cards.ts';
import { refreshDirectory, refreshProjectRanges, RANGES_JOB } from '../../src/services/threeds/ranges.ts';
import { findProject } from '../../src/store/platform/projects.ts';

let live: LiveThreeDs;
let t: TestService;
let ds: LiveThreeDs['ds'];
let fallback: LiveThreeDs['fallback'];
let refusing: LiveThreeDs['refusing'];
let dsUrl: string;

before(async () => {
  live = await startLiveThreeDs('3ds-ranges', 'Ranges', 2000);
  ({ t, ds, fallback, refusing } = live);
  dsUrl = live.dsUrl;
});
after(() => live?.close());

const pay = (project: { api_key: string }, pan: string) => live.pay(project, pan);

const preqs = async () => (await ds.journal()).filter((l) => l.dir === 'in' && l.messageType === 'PReq');
const ranges = () =>
  t.db.query<{ start_range: string; end_range: string; acs_start_version: string; method_url: string | null }>(
    'SELECT start_range, end_range, acs_start_version, method_url FROM threeds_card_ranges WHERE ds_url = $1 ORDER BY start_range',
    [dsUrl],
  );
const dsRow = async () =>
  (
    await t.db.query<{ serial_num: string; version: string; in_a_day: boolean; in_an_hour: boolean; last_error: string | null }>(
      `SELECT serial_num, version::text AS version, last_error,
              next_at BETWEEN now() + interval '23 hours' AND now() + interval '25 hours' AS in_a_day,
              next_at BETWEEN now() + interval '50 minutes' AND now() + interval '70 minutes' AS in_an_hour
         FROM threeds_directory_servers WHERE url = $1`,
      [dsUrl],
    )
  )[0];
const makeDue = () => t.db.query("UPDATE threeds_directory_servers SET next_at = now() - interval '1 second' WHERE url = $1", [dsUrl]);
const directory = async () => {
  const project = (await findProject(t.db, fallback.project_id))!;
  return t.svc.ctx.authenticators.live(project).directories!()[0];
};

test('first use: one PReq with no serialNum; the ranges (versions, 3DS Method URL) and the serialNum are kept', async () => {
  assert.equal((await preqs()).length, 0, 'no PReq before the first payment');
  const { txn, f48 } = await pay(fallback, dsCard('frictionless'));
  assert.equal(txn.status, 'accepted');
  assert.equal(f48?.eci, '05', 'a PAN in a range is authenticated as before');
  const sent = await preqs();
  assert.equal(sent.length, 1);
  assert.equal(sent[0].serialNum, undefined, 'the first PReq asks for every range');
  assert.deepEqual(await ranges(), [
    { start_range: '4000001200000000', end_range: '4000001299999999', acs_start_version: '2.2.0', method_url: null },
    { start_range: '4000001300000000', end_range: '4000001399999999', acs_start_version: '2.2.0', method_url: `${ds.url}/acs/method` },
    { start_range: '5200001200000000', end_range: '5200001299999999', acs_start_version: '2.2.0', method_url: null },
  ]);
  const row = await dsRow();
  assert.equal(row.serial_num, '1');
  assert.equal(row.in_a_day, true, 'the next refresh is a day later');
  const [job] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE kind = $1 AND project_id = $2', [
    RANGES_JOB,
    fallback.project_id,
  ]);
  assert.equal(job.n, 1, "the project's daily refresh job is made");
});

test('a PAN in no range: no AReq, the unauthenticated fallback at once (ECI 07 / 00, no DS id); refused when the binding says so', async () => {
  for (const [pan, eci] of [
    ['4111111111111111', '07'],
    ['5555555555554444', '00'],
  ]) {
    const { txn, f48, lookup } = await pay(fallback, pan);
    assert.equal(txn.status, 'accepted', pan);
    assert.equal(txn.payment_method_details.liability_shift, false);
    assert.equal(f48?.eci, eci);
    assert.equal(f48?.authenticationValue, undefined);
    assert.equal(f48?.dsTransactionId, undefined, 'no ARes: no DS id');
    const journal = await ds.journal();
    assert.ok(lookup);
    assert.ok(!journal.some((l) => l.threeDSServerTransID === lookup), 'the DS heard nothing of this lookup');
    assert.ok(!journal.some((l) => l.errorCode === '305'), 'no AReq answered "in no card range"');
  }
  const refused = await pay(refusing, '4111111111111111');
  assert.equal(refused.txn.status, 'declined');
  assert.equal(refused.txn.reason, 'authentication_failed');
  assert.equal(refused.f48, undefined);
  assert.equal((await preqs()).length, 1, 'the payments sent no further PReq (never more than hourly)');
});

test('when due, the PReq sends the serialNum back: an unchanged DS answers no range and the kept ranges stay', async () => {
  const before = await dsRow();
  await makeDue();
  await refreshProjectRanges(t.svc.ctx, fallback.project_id);
  const sent = await preqs();
  assert.equal(sent.length, 2);
  assert.equal(sent[1].serialNum, '1');
  const pres = (await ds.journal()).filter((l) => l.dir === 'out' && l.messageType === 'PRes').at(-1);
  assert.equal(pres?.ranges, 0, 'the DS answered no change');
  assert.equal((await ranges()).length, 3);
  const row = await dsRow();
  assert.equal(row.version, before.version, 'nothing changed');
  assert.equal(row.in_a_day, true);
  const [job] = await t.db.query<{ later: boolean }>(
    `SELECT run_at > now() + interval '23 hours' AS later FROM jobs WHERE kind = $1 AND project_id = $2`,
    [RANGES_JOB, fallback.project_id],
  );
  assert.equal(job.later, true, 'the job runs again when the next refresh is due');
  // not due: the job sends nothing
  await refreshProjectRanges(t.svc.ctx, fallback.project_id);
  assert.equal((await preqs()).length, 2);
  // a payment outside the ranges still gets no AReq
  assert.equal((await pay(fallback, '4111111111111111')).f48?.dsTransactionId, undefined);
});

test('a DS with a new serialNum sends its ranges again: they are kept with the new serialNum', async () => {
  assert.equal(await ds.admin('serial'), 'ok 2');
  const before = await dsRow();
  await makeDue();
  assert.equal(await refreshDirectory(t.svc.ctx, await directory()), true);
  const row = await dsRow();
  assert.equal(row.serial_num, '2');
  assert.equal(Number(row.version), Number(before.version) + 1);
  assert.equal((await ranges()).length, 3);
  assert.equal((await preqs()).at(-1)?.serialNum, '1');
});

test('one node at a time: two refreshes at once send one PReq; a refresh another node holds is left to it', async () => {
  const d = await directory();
  await makeDue();
  const n = (await preqs()).length;
  const made = await Promise.all([refreshDirectory(t.svc.ctx, d), refreshDirectory(t.svc.ctx, d)]);
  assert.deepEqual(made.sort(), [false, true]);
  assert.equal((await preqs()).length, n + 1);
  await t.db.query(
    "UPDATE threeds_directory_servers SET next_at = now() - interval '1 second', lease_until = now() + interval '1 minute' WHERE url = $1",
    [dsUrl],
  );
  assert.equal(await refreshDirectory(t.svc.ctx, d), false, 'leased by another node');
  assert.equal((await preqs()).length, n + 1);
  await t.db.query('UPDATE threeds_directory_servers SET lease_until = NULL WHERE url = $1', [dsUrl]);
});

test('a PReq without a good PRes: the ranges are kept, the next try an hour later, not before', async () => {
  const d = await directory();
  const failing = { url: d.url, preq: () => Promise.reject(new Error('connection refused')) };
  assert.equal(await refreshDirectory(t.svc.ctx, failing), true, 'due: tried');
  const row = await dsRow();
  assert.equal(row.in_an_hour, true);
  assert.match(row.last_error ?? '', /connection refused/);
  assert.equal((await ranges()).length, 3, 'the ranges kept stay');
  assert.equal(await refreshDirectory(t.svc.ctx, d), false, 'not again within the hour');
  const { f48 } = await pay(fallback, '4111111111111111');
  assert.equal(f48?.dsTransactionId, undefined, 'the kept ranges still decide');
});
