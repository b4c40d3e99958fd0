import { test } from 'node:test';
import assert from 'node:assert/strict';
import { duePeriod, nextLocalMidnight, parseEvery } from '../../src/domain/payouts/schedule.ts';

test('schedules: daily, weekly on a day, monthly on a day (the last day of a shorter month), in the merchant time zone', () => {
  const daily = parseEvery('daily');
  const mon = parseEvery('weekly:mon');
  const m31 = parseEvery('monthly:31');
  assert.ok(typeof daily !== 'string' && typeof mon !== 'string' && typeof m31 !== 'string');
  for (const bad of ['weekly', 'weekly:xyz', 'monthly:0', 'monthly:32', 'hourly', '']) assert.equal(typeof parseEvery(bad), 'string', bad);
  // Monday 2026-11-30 23:30 UTC is Tuesday 00:30 in Amsterdam
  const at = new Date('2026-11-30T23:30:00Z');
  assert.equal(duePeriod(daily, at, 'UTC'), '2026-11-30');
  assert.equal(duePeriod(daily, at, 'Europe/Amsterdam'), '2026-12-01');
  assert.equal(duePeriod(mon, at, 'UTC'), '2026-11-30');
  assert.equal(duePeriod(mon, at, 'Europe/Amsterdam'), undefined);
  assert.equal(duePeriod(m31, new Date('2026-02-28T12:00:00Z'), 'UTC'), '2026-02-28', 'February pays on its last day');
  assert.equal(duePeriod(m31, new Date('2026-03-30T12:00:00Z'), 'UTC'), undefined);
  assert.equal(duePeriod(m31, new Date('2026-03-31T12:00:00Z'), 'UTC'), '2026-03-31');
});

test('the next look at a schedule is the next local midnight, across a change of summer time', () => {
  assert.equal(nextLocalMidnight(new Date('2026-12-01T10:00:00Z'), 'UTC').toISOString(), '2026-12-02T00:00:00.000Z');
  assert.equal(nextLocalMidnight(new Date('2026-12-01T10:00:00Z'), 'Europe/Amsterdam').toISOString(), '2026-12-01T23:00:00.000Z');
  assert.equal(nextLocalMidnight(new Date('2026-07-01T10:00:00Z'), 'Europe/Amsterdam').toISOString(), '2026-07-01T22:00:00.000Z');
  // summer time ends on 2026-10-25 at 03:00 local: the midnight after it is at UTC+1
  assert.equal(nextLocalMidnight(new Date('2026-10-25T12:00:00Z'), 'Europe/Amsterdam').toISOString(), '2026-10-25T23:00:00.000Z');
  assert.equal(nextLocalMidnight(new Date('2026-10-24T12:00:00Z'), 'Europe/Amsterdam').toISOString(), '2026-10-24T22:00:00.000Z');
});
