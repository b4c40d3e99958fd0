import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { privateDir } from '../../store/db/lock.ts';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';

/**
 * The master key that wraps every project's data keys: TENDER_MASTER_KEY (64 hex chars or
 * base64 of 32 bytes), or, for a laptop, one generated once into the data directory (0600).
 */
export function loadMasterKey(config: Config, log?: Logger): Buffer {
  if (config.masterKey) return parseKey(config.masterKey);
  const path = join(config.dataDir, 'master.key');
  if (!existsSync(path)) {
    privateDir(config.dataDir);
    writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    log?.warn({ path }, 'TENDER_MASTER_KEY is not set: generated a master key in the data directory. Set TENDER_MASTER_KEY in production.');
  }
  if (statSync(path).mode & 0o077) chmodSync(path, 0o600); // a key copied in with a looser mode
  return parseKey(readFileSync(path, 'utf8').trim());
}

export function parseKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('TENDER_MASTER_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}
