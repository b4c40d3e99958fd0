import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';

test('database pools: 10 connections for queries and 2 apart for CSV reports, each set from the environment', () => {
  assert.deepEqual(loadConfig({}).databasePool, { size: 10, reportSize: 2 });
  assert.deepEqual(loadConfig({ DATABASE_POOL_SIZE: '25', REPORT_CONNECTIONS: '4' }).databasePool, { size: 25, reportSize: 4 });
});

test('TLS settings: both files or neither, TRUST_PROXY forms, LIVE_REQUIRES_TLS on by default; bad values name the setting', () => {
  const plain = loadConfig({});
  assert.equal(plain.tls, undefined);
  assert.equal(plain.trustProxy, false);
  assert.equal(plain.liveRequiresTls, true);
  assert.deepEqual(loadConfig({ TLS_CERT_FILE: '/c.pem', TLS_KEY_FILE: '/k.pem' }).tls, { certFile: '/c.pem', keyFile: '/k.pem' });
  assert.throws(() => loadConfig({ TLS_CERT_FILE: '/c.pem' }), /TLS_KEY_FILE/);
  assert.throws(() => loadConfig({ TLS_KEY_FILE: '/k.pem' }), /TLS_CERT_FILE/);
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.equal(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, '10.0.0.0/8, 127.0.0.1');
  assert.throws(() => loadConfig({ TRUST_PROXY: 'yes please' }), /TRUST_PROXY/);
  assert.equal(loadConfig({ LIVE_REQUIRES_TLS: 'false' }).liveRequiresTls, false);
  assert.throws(() => loadConfig({ LIVE_REQUIRES_TLS: 'maybe' }), /LIVE_REQUIRES_TLS/);
});
