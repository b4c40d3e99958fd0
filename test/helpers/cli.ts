import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';

/** The `tender` command as a user runs it (`npx tender` resolves to this file). */
export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'tender.mjs');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tender ARGS` to completion in a child process; killed after timeoutMs. */
export function runTender(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Environment for a CLI on an embedded (PGlite) store in dir, whatever DATABASE_URL the suite runs
 * with (plain HTTP: live projects allowed without TLS, as in the service helper).
 */
export function embeddedEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TENDER_DATA_DIR: dir,
    TENDER_MASTER_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    TENDER_WORKER: 'off',
    LIVE_REQUIRES_TLS: 'false',
  };
  delete env.DATABASE_URL;
  delete env.PORT;
  return env;
}

/** A TCP port free on the loopback right now, for a child `tender serve`. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
