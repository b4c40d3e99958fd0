// EMV card ranges (issue 43): which range a PAN is in, which protocol versions a range speaks,
// and how a PRes is read (src/domain/card-ranges.ts, src/acquirer/threeds/preq.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareVersions, isRange, rangeOf, speaks, type CardRange } from '../../src/domain/card-ranges.ts';
import { readPres } from '../../src/acquirer/threeds/preq.ts';

const range = (start: string, end: string, more: Partial<CardRange> = {}): CardRange => ({
  start_range: start,
  end_range: end,
  acs_start_version: '2.1.0',
  acs_end_version: '2.2.0',
  ds_start_version: null,
  ds_end_version: null,
  method_url: null,
  ...more,
});

test('a PAN is in a range of its own length between the ends; the narrowest of overlapping ranges wins', () => {
  const wide = range('4000000000000000', '4999999999999999');
  const narrow = range('4000001200000000', '4000001299999999');
  const short = range('4000001200000', '4000001299999');
  assert.equal(rangeOf([wide, narrow, short], '4000001200000016'), narrow);
  assert.equal(rangeOf([wide, narrow, short], '4111111111111111'), wide);
  assert.equal(rangeOf([wide, narrow, short], '4000001200001'), short);
  assert.equal(rangeOf([narrow], '40000012000000160'), undefined, 'another length');
  assert.equal(rangeOf([narrow], '5200001200000011'), undefined);
  assert.equal(rangeOf([], '4000001200000016'), undefined);
});

test('versions compare by number; a range speaks a version within its ACS (and DS) versions', () => {
  assert.equal(compareVersions('2.2.0', '2.10.0'), -1);
  assert.equal(compareVersions('2.2.0', '2.2.0'), 0);
  assert.equal(compareVersions('2.3.1', '2.2.0'), 1);
  assert.equal(speaks(range('4000000000000000', '4999999999999999'), '2.2.0'), true);
  assert.equal(speaks(range('4000000000000000', '4999999999999999', { acs_end_version: '2.1.0' }), '2.2.0'), false);
  assert.equal(
    speaks(range('4000000000000000', '4999999999999999', { acs_start_version: '2.3.1', acs_end_version: '2.3.1' }), '2.2.0'),
    false,
  );
  assert.equal(speaks(range('4000000000000000', '4999999999999999', { ds_start_version: '2.3.1' }), '2.2.0'), false);
  assert.equal(isRange('4000', '4999'), false, 'shorter than 13 digits');
  assert.equal(isRange('4999999999999', '4000000000000'), false, 'start after end');
  assert.equal(isRange('4000000000000', '40000000000009'), false, 'lengths differ');
});

const ID = '5b1d3f0e-8a3c-4c1e-9d55-0c8a7e3b2f10';
const pres = (more: Record<string, unknown>) =>
  JSON.stringify({ messageType: 'PRes', messageVersion: '2.2.0', threeDSServerTransID: ID, serialNum: '7', ...more });

test('a PRes: its ranges with their action, versions and method URL; bad ranges left out and counted; full only without a serialNum sent', () => {
  const r = readPres(
    pres({
      cardRangeData: [
        {
          startRange: '4000001300000000',
          endRange: '4000001399999999',
          actionInd: 'A',
          acsStartProtocolVersion: '2.2.0',
          acsEndProtocolVersion: '2.2.0',
          threeDSMethodURL: 'https://acs.example/method',
        },
        { startRange: '5200001200000000', endRange: '5200001299999999', actionInd: 'D' },
        { startRange: '12', endRange: '13', acsStartProtocolVersion: '2.2.0', acsEndProtocolVersion: '2.2.0' },
        {
          startRange: '4000001400000000',
          endRange: '4000001499999999',
          actionInd: 'X',
          acsStartProtocolVersion: '2.2.0',
          acsEndProtocolVersion: '2.2.0',
        },
        {
          startRange: '4000001500000000',
          endRange: '4000001599999999',
          threeDSMethodURL: 'javascript:alert(1)',
          acsStartProtocolVersion: '2.2.0',
          acsEndProtocolVersion: '2.2.0',
        },
        { startRange: '4000001600000000', endRange: '4000001699999999' },
      ],
    }),
    ID,
    undefined,
  );
  assert.equal(r.serialNum, '7');
  assert.equal(r.full, true);
  assert.equal(r.skipped, 4);
  assert.deepEqual(
    r.ranges.map((x) => [x.action, x.start_range, x.method_url]),
    [
      ['A', '4000001300000000', 'https://acs.example/method'],
      ['D', '5200001200000000', null],
    ],
  );
  assert.equal(readPres(pres({}), ID, '6').full, false, 'answering a serialNum: changes');
  assert.deepEqual(readPres(pres({}), ID, '6').ranges, []);
});

test('what is not a good PRes throws: an Erro, another transaction, no serialNum, not JSON', () => {
  assert.throws(
    () =>
      readPres(JSON.stringify({ messageType: 'Erro', messageVersion: '2.2.0', threeDSServerTransID: ID, errorCode: '101' }), ID, undefined),
    /Erro 101/,
  );
  assert.throws(
    () => readPres(pres({ threeDSServerTransID: '0b1d3f0e-8a3c-4c1e-9d55-0c8a7e3b2f10' }), ID, undefined),
    /threeDSServerTransID/,
  );
  assert.throws(() => readPres(pres({ serialNum: '' }), ID, undefined), /serialNum/);
  assert.throws(() => readPres(pres({ cardRangeData: {} }), ID, undefined), /cardRangeData/);
  assert.throws(() => readPres('{"messageType":"PRes"', ID, undefined), /not JSON/);
});
