import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interruptedAttempts } from '../../src/domain/webhook-log.ts';

const now = new Date('2026-11-25T12:00:00Z');
const past = new Date('2026-11-25T11:59:00Z');
const future = new Date('2026-11-25T12:00:20Z');

test('a numbered attempt without an outcome is interrupted', () => {
  // attempt 2 was claimed, the process died; attempt 3 was made by another node after the hold
  assert.deepEqual(interruptedAttempts({ status: 'succeeded', attempts: 3, next_attempt_at: null }, [1, 3], now), [2]);
  assert.deepEqual(interruptedAttempts({ status: 'failed', attempts: 2, next_attempt_at: null }, [], now), [1, 2]);
});

test('the newest attempt of a pending delivery still held is under way, not interrupted', () => {
  assert.deepEqual(interruptedAttempts({ status: 'pending', attempts: 2, next_attempt_at: future }, [1], now), []);
  // once the hold has lapsed without an outcome, it was interrupted
  assert.deepEqual(interruptedAttempts({ status: 'pending', attempts: 2, next_attempt_at: past }, [1], now), [2]);
  // an older gap is interrupted whatever the hold
  assert.deepEqual(interruptedAttempts({ status: 'pending', attempts: 3, next_attempt_at: future }, [2], now), [1]);
});

test('a delivery whose every attempt has its outcome shows none', () => {
  assert.deepEqual(interruptedAttempts({ status: 'pending', attempts: 0, next_attempt_at: now }, [], now), []);
  assert.deepEqual(interruptedAttempts({ status: 'succeeded', attempts: 2, next_attempt_at: null }, [1, 2], now), []);
});
