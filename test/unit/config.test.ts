import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSettings, ConfigError, loadConfig } from '../../src/config.ts';

test('database pools: 10 connections for queries and 2 apart for CSV reports, each set from the environment', () => {
  assert.deepEqual(loadConfig({}).databasePool, { size: 10, reportSize: 2 });
  assert.deepEqual(loadConfig({ DATABASE_POOL_SIZE: '25', REPORT_CONNECTIONS: '4' }).databasePool, { size: 25, reportSize: 4 });
});

test('a bad setting stops loading with a message naming it and what it accepts', () => {
  assert.throws(
    () => loadConfig({ WEBHOOK_MAX_ATTEMPTS: 'abc' }),
    (err: Error) => err instanceof ConfigError && /WEBHOOK_MAX_ATTEMPTS="abc": expected a whole number, 1 or more/.test(err.message),
  );
});

test('every bad setting is named, each once', () => {
  const problems = checkSettings({
    PORT: '80x',
    TENDER_SURFACES: 'api,shop',
    LOG_LEVEL: 'loud',
    CAPTURE_WINDOW: '5 days',
    WEBHOOK_MAX_ATTEMPTS: '0',
    PUBLIC_BASE_URL: 'pay.example',
  });
  assert.deepEqual(problems.map((p) => p.split('=')[0]).sort(), [
    'CAPTURE_WINDOW',
    'LOG_LEVEL',
    'PORT',
    'PUBLIC_BASE_URL',
    'TENDER_SURFACES',
    'WEBHOOK_MAX_ATTEMPTS',
  ]);
  assert.match(
    problems.find((p) => p.startsWith('TENDER_SURFACES'))!,
    /api, vault, wallet-b-token, portal/,
  );
});

test('good and empty settings load: empty means the default', () => {
  const c = loadConfig({ WEBHOOK_MAX_ATTEMPTS: '3', TENDER_SURFACES: 'vault, api', PORT: '', CAPTURE_WINDOW: 'P7D' });
  assert.equal(c.webhook.maxAttempts, 3);
  assert.deepEqual(c.surfaces, ['api', 'vault']);
  assert.equal(c.port, 8080);
  assert.equal(c.captureWindow, 'P7D');
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

test('WEBHOOK_PRIVATE_ADDRESSES: allow or refuse; unset leaves the default to the store (issue 42, item 12)', () => {
  assert.equal(loadConfig({}).webhook.privateAddresses, undefined);
  assert.equal(loadConfig({ WEBHOOK_PRIVATE_ADDRESSES: 'allow' }).webhook.privateAddresses, 'allow');
  assert.equal(loadConfig({ WEBHOOK_PRIVATE_ADDRESSES: 'refuse' }).webhook.privateAddresses, 'refuse');
  assert.throws(
    () => loadConfig({ WEBHOOK_PRIVATE_ADDRESSES: 'yes' }),
    (err: Error) => err instanceof ConfigError && /WEBHOOK_PRIVATE_ADDRESSES="yes": expected allow or refuse/.test(err.message),
  );
});
