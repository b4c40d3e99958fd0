// Multi-host connection strings (store/hosts.ts): what node-postgres 8.x does not read itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHosts } from '../../src/store/db/hosts.ts';

test('a plain connection string is left to node-postgres', () => {
  assert.equal(parseHosts('postgres://postgres@127.0.0.1:5432/test'), undefined);
  assert.equal(parseHosts('postgres://u:p@db.example/tender?sslmode=require'), undefined);
});

test('several hosts, in order, with default ports; target_session_attrs read and taken out', () => {
  const list = parseHosts('postgresql://tender:s3cret@db1:5433,db2,[::1]:5434/tender?sslmode=require&target_session_attrs=read-write')!;
  assert.deepEqual(list.hosts, [
    { host: 'db1', port: 5433 },
    { host: 'db2', port: 5432 },
    { host: '::1', port: 5434 },
  ]);
  assert.equal(list.readWrite, true);
  assert.equal(list.urlFor(list.hosts[1]), 'postgresql://tender:s3cret@db2:5432/tender?sslmode=require');
  assert.equal(list.urlFor(list.hosts[2]), 'postgresql://tender:s3cret@[::1]:5434/tender?sslmode=require');
});

test('one host with target_session_attrs=read-write is checked too; "any" takes the first that answers', () => {
  assert.equal(parseHosts('postgres://h/db?target_session_attrs=read-write')!.readWrite, true);
  assert.equal(parseHosts('postgres://h1,h2/db?target_session_attrs=any')!.readWrite, false);
  assert.equal(parseHosts('postgres://h1,h2/db')!.readWrite, false);
});

test('an attribute libpq has but this does not is refused, not ignored', () => {
  assert.throws(() => parseHosts('postgres://h1,h2/db?target_session_attrs=standby'), /target_session_attrs=standby is not supported/);
});
