// Settings are checked when the process starts (docs/design.md: bad input is refused, never guessed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embeddedEnv, runTender } from '../helpers/cli.ts';

test('`tender serve` with WEBHOOK_MAX_ATTEMPTS=abc exits non-zero naming the setting and what it accepts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tender-config-'));
  try {
    const run = await runTender(['serve'], { ...embeddedEnv(dir), PORT: '0', WEBHOOK_MAX_ATTEMPTS: 'abc' });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /WEBHOOK_MAX_ATTEMPTS="abc": expected a whole number, 1 or more/);
    assert.doesNotMatch(run.stdout, /Tender is running/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
