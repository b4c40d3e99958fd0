// The acquirer's settings: recovery asks about an attempt only after its call can no longer
// arrive, so ACQUIRER_RECOVERY_MS must be longer than ACQUIRER_TIMEOUT_MS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';

test('acquirer settings: defaults, explicit values, a recovery following a longer timeout, and one not after it refused', () => {
  const { timeoutMs, recoveryMs } = loadConfig({}).acquirer;
  assert.deepEqual([timeoutMs, recoveryMs], [30_000, 35_000]);
  const set = loadConfig({ ACQUIRER_TIMEOUT_MS: '1000', ACQUIRER_RECOVERY_MS: '1001' }).acquirer;
  assert.deepEqual([set.timeoutMs, set.recoveryMs], [1000, 1001]);
  for (const recovery of ['1000', '999'])
    assert.throws(
      () => loadConfig({ ACQUIRER_TIMEOUT_MS: '1000', ACQUIRER_RECOVERY_MS: recovery }),
      (e: unknown) =>
        e instanceof ConfigError &&
        new RegExp(`ACQUIRER_RECOVERY_MS=${recovery}: expected more than ACQUIRER_TIMEOUT_MS \\(1000\\)`).test(e.message),
    );
  // unset, the recovery follows a longer timeout up
  assert.equal(loadConfig({ ACQUIRER_TIMEOUT_MS: '40000' }).acquirer.recoveryMs, 45_000);
  assert.equal(loadConfig({ ACQUIRER_TIMEOUT_MS: '1000' }).acquirer.recoveryMs, 35_000);
});
