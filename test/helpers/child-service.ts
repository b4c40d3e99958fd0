// The real service in a child process (`tender serve`), for tests that kill it and start it again.
// PGlite: a temporary data directory. PostgreSQL (DATABASE_URL): a schema of its own, which the
// child uses through PGOPTIONS (node-pg reads it like libpq). Both are removed after the file.
import { after } from 'node:test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BIN, freePort } from './cli.ts';

export const pgUrl = process.env.DATABASE_URL;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls probe until it answers something truthy (a probe that throws counts as not yet). */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** A PostgreSQL client on DATABASE_URL for the length of fn. */
export async function withPg<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Resolves when the child has exited (at once when it has already). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

/** SIGKILL, then resolves once the child is gone. */
export const killed = (child: ChildProcess) => {
  const gone = exited(child);
  child.kill('SIGKILL');
  return gone;
};

export interface ChildStore {
  /** the store's data directory (PGlite) */
  dir: string;
  /** the store's schema (PostgreSQL) */
  schema: string;
  /** the environment of a service on this store, on a free port, with `extra` settings; and its URL */
  env(extra?: NodeJS.ProcessEnv): Promise<{ env: NodeJS.ProcessEnv; url: string }>;
  /** starts `tender serve` with env and waits for /readyz */
  serve(env: NodeJS.ProcessEnv, url: string, ms?: number): Promise<ChildProcess>;
}

/** A store for services in child processes; every child is killed and the store removed after the file. */
export function childStore(name: string): ChildStore {
  const dir = mkdtempSync(join(tmpdir(), `tender-${name}-`));
  const schema = `t_${name}_${randomBytes(5).toString('hex')}`;
  const children = new Set<ChildProcess>();
  let schemaMade = false;
  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (pgUrl && schemaMade) await withPg((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  });
  return {
    dir,
    schema,
    async env(extra = {}) {
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        TENDER_DATA_DIR: dir,
        TENDER_MASTER_KEY: randomBytes(32).toString('hex'),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        RISK_LIMITS: 'off',
        ...extra,
      };
      delete env.PUBLIC_BASE_URL;
      if (pgUrl) {
        if (!schemaMade) await withPg((c) => c.query(`CREATE SCHEMA ${schema}`));
        schemaMade = true;
        env.PGOPTIONS = `-c search_path=${schema}`;
      } else {
        delete env.DATABASE_URL;
      }
      return { env, url: `http://127.0.0.1:${port}` };
    },
    async serve(env, url, ms = 240_000) {
      const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
      children.add(child);
      child.on('exit', () => children.delete(child));
      await waitFor('the service to start', async () => (await fetch(`${url}/readyz`)).ok, ms);
      return child;
    },
  };
}
