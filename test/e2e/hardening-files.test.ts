// The embedded store's files are private to the user (issue 22): the data directory 0700, the
// generated master key 0600, also when an existing directory or key was looser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService } from '../../src/main.ts';
import { loadMasterKey } from '../../src/services/platform/master-key.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

/** Starts and stops an embedded (PGlite) Tender on `dataDir`, whatever store the suite runs on. */
async function runEmbedded(dataDir: string) {
  const config = loadConfig({ TENDER_DATA_DIR: dataDir, TENDER_WORKER: 'off' }, { port: 0 });
  const svc = await startService({ config, log: createLogger('silent') });
  await svc.close();
}

test('the data directory is made private (0700, also when it existed looser) and the master key generated in it is 0600', async () => {
  const root = mkdtempSync(join(tmpdir(), 'tender-files-'));
  try {
    const dataDir = join(root, 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    await runEmbedded(dataDir);
    assert.equal(mode(dataDir).toString(8), '700');
    assert.equal(mode(join(dataDir, 'master.key')).toString(8), '600');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a master key file found with a looser mode is tightened to 0600 when loaded', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tender-files-'));
  try {
    writeFileSync(join(dataDir, 'master.key'), randomBytes(32).toString('hex'), { mode: 0o644 });
    chmodSync(join(dataDir, 'master.key'), 0o644);
    loadMasterKey(loadConfig({ TENDER_DATA_DIR: dataDir }));
    assert.equal(mode(join(dataDir, 'master.key')).toString(8), '600');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
