import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite allows one process per data directory. The server holds `tender.lock` there with
 * its pid, URL and an admin token (mode 0600), so CLI commands go through the server instead.
 */
export interface LockInfo {
  pid: number;
  url: string;
  token: string;
}

const lockPath = (dataDir: string) => join(dataDir, 'tender.lock');

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live server holding the directory, if any. A stale lock (dead pid) is ignored. */
export function readLock(dataDir: string): LockInfo | undefined {
  const path = lockPath(dataDir);
  if (!existsSync(path)) return undefined;
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
    return alive(info.pid) && info.pid !== process.pid ? info : undefined;
  } catch {
    return undefined;
  }
}

export function acquireLock(dataDir: string, info: LockInfo) {
  const holder = readLock(dataDir);
  if (holder)
    throw new Error(
      `the data directory ${dataDir} is in use by Tender process ${holder.pid} (${holder.url}); stop it first or set DATABASE_URL`,
    );
  privateDir(dataDir);
  writeFileSync(lockPath(dataDir), JSON.stringify(info), { mode: 0o600 });
}

export function releaseLock(dataDir: string) {
  const path = lockPath(dataDir);
  try {
    const info = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
    if (info.pid === process.pid) rmSync(path);
  } catch {
    /* already gone */
  }
}

/**
 * The data directory, made or tightened to 0700: PGlite writes its files world-readable (0666
 * less the umask), so the directory is what keeps other users out of the data and the master key.
 */
export function privateDir(dir: string) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}
