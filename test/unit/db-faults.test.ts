// Which database errors mean "the connection, not the statement, failed" (a 503 the client may retry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionLost, isConflict, unavailableOr } from '../../src/store/db/db.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { bodyOf, statusOf } from '../../src/http/errors.ts';

test("lost connections: server shutdowns, refused and broken sockets, the driver's own messages", () => {
  for (const code of ['57P01', '57P02', '57P03', '53300', '08006', '08003', 'ECONNREFUSED', 'ECONNRESET'])
    assert.equal(connectionLost(Object.assign(new Error('x'), { code })), true, code);
  for (const message of [
    'Connection terminated unexpectedly',
    'Client has encountered a connection error and is not queryable',
    'timeout exceeded when trying to connect',
  ])
    assert.equal(connectionLost(new Error(message)), true, message);
});

test('statement errors are not lost connections: they keep their meaning', () => {
  for (const code of ['23505', '40001', '22P02', '42P01'])
    assert.equal(connectionLost(Object.assign(new Error('x'), { code })), false, code);
  assert.equal(connectionLost(new Error('boom')), false);
  assert.equal(connectionLost(undefined), false);
  const plain = new Error('boom');
  assert.equal(unavailableOr(plain), plain);
});

test('a lost connection becomes a 503 ServiceUnavailable DomainError', () => {
  const err = unavailableOr(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
  assert.ok(err instanceof DomainError);
  assert.equal(err.kind, 'unavailable');
  assert.equal(statusOf(err), 503);
  assert.deepEqual(bodyOf(err).error.type, 'ServiceUnavailable');
});

test('a deadlock or a serialization failure is a conflict: a 503 to retry once tx() gave up, never a 500', () => {
  for (const code of ['40P01', '40001']) {
    const err = Object.assign(new Error('deadlock detected'), { code });
    assert.equal(isConflict(err), true, code);
    const api = unavailableOr(err) as DomainError;
    assert.ok(api instanceof DomainError, code);
    assert.equal(statusOf(api), 503);
    assert.equal(isConflict(api), true, 'still seen as a conflict through its cause');
  }
  for (const code of ['23505', '57014', '22P02']) assert.equal(isConflict(Object.assign(new Error('x'), { code })), false, code);
});
