// Cold start: seconds from spawning `tender serve` to its first 200 on /readyz, on a fresh PGlite data
// directory, on a PGlite directory made by an earlier start, and on PostgreSQL (a fresh schema, then the
// schema that start migrated: a restart), each run
// both from the compiled build (dist/) and from the sources through tsx. Yardstick measured in the same
// run: a bare `node -e` that answers one HTTP request. Usage: npx tsx bench/cold-start.ts [rounds]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../test/helpers/cli.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'tender.mjs');
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const rounds = Number(process.argv[2] ?? 3);

/** Spawns a process and resolves with the seconds until `url` first answers 200; then stops it. */
async function timeToReady(args: string[], env: NodeJS.ProcessEnv, url: (port: number) => string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${stderr}`);
      const ok = await fetch(url(port)).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return (performance.now() - started) / 1000;
      if (performance.now() - started > 120_000) throw new Error('not ready after 120 s');
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
  }
}

const baseEnv = (dir: string, run: 'dist' | 'src'): NodeJS.ProcessEnv => ({
  ...process.env,
  TENDER_RUN: run,
  TENDER_DATA_DIR: dir,
  TENDER_MASTER_KEY: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'warn',
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const yardstick = `require('http').createServer((q,s)=>s.end('ok')).listen(process.env.PORT,'127.0.0.1')`;
  const rows: [string, number[]][] = [['yardstick: bare node HTTP server', []]];
  for (const run of ['dist', 'src'] as const)
    for (const what of ['PGlite, fresh directory', 'PGlite, existing directory', 'PostgreSQL, fresh schema', 'PostgreSQL, migrated schema'])
      rows.push([`${run}: ${what}`, []]);
  const loads: number[] = [];
  for (let i = 0; i < rounds; i++) {
    loads.push(loadavg()[0]);
    rows[0][1].push(await timeToReady(['-e', yardstick], process.env, (p) => `http://127.0.0.1:${p}/`));
    let r = 1;
    for (const run of ['dist', 'src'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'tender-cold-'));
      const ready = (p: number) => `http://127.0.0.1:${p}/readyz`;
      const env = { ...baseEnv(dir, run) };
      delete env.DATABASE_URL;
      rows[r++][1].push(await timeToReady([BIN, 'serve'], env, ready));
      rows[r++][1].push(await timeToReady([BIN, 'serve'], env, ready));
      rmSync(dir, { recursive: true, force: true });
      const schema = `bench_cold_${randomBytes(4).toString('hex')}`;
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const pgDir = mkdtempSync(join(tmpdir(), 'tender-cold-'));
      const pgUrl = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
      try {
        const pgEnv = { ...baseEnv(pgDir, run), DATABASE_URL: pgUrl };
        rows[r++][1].push(await timeToReady([BIN, 'serve'], pgEnv, ready));
        rows[r++][1].push(await timeToReady([BIN, 'serve'], pgEnv, ready));
      } finally {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
        rmSync(pgDir, { recursive: true, force: true });
      }
    }
  }
  const base = median(rows[0][1]);
  console.log(`cold start to the first 200, ${rounds} rounds, load average ${loads.map((l) => l.toFixed(1)).join(' / ')}`);
  console.log('| start | median s | rounds s | × yardstick |\n|---|---|---|---|');
  for (const [name, xs] of rows)
    console.log(`| ${name} | ${median(xs).toFixed(2)} | ${xs.map((x) => x.toFixed(2)).join(', ')} | ${(median(xs) / base).toFixed(1)} |`);
}

await main();
