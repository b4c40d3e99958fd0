// The ISO 8583 link's settings: its timeout stays below ACQUIRER_TIMEOUT_MS, so the link gives up first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';

test('ISO 8583 settings: defaults, explicit values, and a link timeout not below the acquirer timeout refused', () => {
  assert.deepEqual(loadConfig({}).iso8583, { timeoutMs: 20_000, echoMs: 30_000, layoutFile: undefined });
  const set = loadConfig({ ISO8583_TIMEOUT_MS: '5000', ISO8583_ECHO_MS: '1000', ISO8583_LAYOUT: 'variant.json' }).iso8583;
  assert.deepEqual([set.timeoutMs, set.echoMs, set.layoutFile?.endsWith('/variant.json')], [5000, 1000, true]);
  // unset, it follows a shorter acquirer timeout down
  assert.equal(loadConfig({ ACQUIRER_TIMEOUT_MS: '9000' }).iso8583.timeoutMs, 6000);
  assert.throws(
    () => loadConfig({ ACQUIRER_TIMEOUT_MS: '10000', ISO8583_TIMEOUT_MS: '10000' }),
    (e: unknown) => e instanceof ConfigError && /ISO8583_TIMEOUT_MS=10000: expected less than ACQUIRER_TIMEOUT_MS/.test(e.message),
  );
  assert.throws(() => loadConfig({ ISO8583_TIMEOUT_MS: 'soon' }), /ISO8583_TIMEOUT_MS="soon"/);
});
