#!/usr/bin/env node
// Runs the whole suite with node's test runner: every test/**/*.test.ts, through tsx.
// Store: PGlite by default, PostgreSQL when DATABASE_URL is set (each test file uses its own schema).
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? find(p) : p.endsWith('.test.ts') ? [p] : [];
  });
}

// Longest first, by the CPU seconds each file cost when last measured (scripts/test-costs.json, written
// by `node scripts/test-times.mjs --write`): two lanes that start with the long files end together,
// where a long file started last would end the run alone. A file not measured yet counts as the median.
function longestFirst(list) {
  const costs = JSON.parse(readFileSync(new URL('./test-costs.json', import.meta.url), 'utf8'));
  const known = Object.values(costs).sort((a, b) => a - b);
  const median = known[Math.floor(known.length / 2)] ?? 0;
  const cost = (f) => costs[relative(process.cwd(), resolve(f))] ?? median;
  return [...list].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b));
}

const args = process.argv.slice(2);
const files = args.length ? args : longestFirst(find('test'));
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A file that hangs (a server left open, a starved pool) fails after this instead of stalling the run.
const fileTimeoutMs = process.env.TEST_FILE_TIMEOUT_MS ?? '300000';
// Files that legitimately need longer, with their own limit. They run beside the others, one at a
// time (one process more while they run), so the suite's wall time does not grow by their length.
const SLOW = { 'test/e2e/acquirer-chaos.test.ts': 900_000, 'test/e2e/payouts-bankfiles.test.ts': 600_000 };
const slowLimit = (f) => SLOW[relative(process.cwd(), resolve(f))];
const slow = files.filter(slowLimit);
const rest = files.filter((f) => !slowLimit(f));

// TypeScript through scripts/ts-register.mjs (a CPU second a file less than tsx); TEST_LOADER=tsx for tsx
const loader = process.env.TEST_LOADER === 'tsx' ? 'tsx' : new URL('./ts-register.mjs', import.meta.url).href;
const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', NODE_ENV: 'test' };
const run = (list, opts, stdio) =>
  new Promise((done) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        loader,
        '--test',
        `--test-concurrency=${opts.concurrency}`,
        `--test-timeout=${opts.timeoutMs}`,
        '--test-reporter=spec',
        '--test-reporter-destination=stdout',
        `--test-reporter=${new URL('./file-failures.mjs', import.meta.url).pathname}`,
        '--test-reporter-destination=stdout',
        ...list,
      ],
      { stdio, env },
    );
    child.on('exit', (code) => done(code ?? 1));
  });

// the slow files' report goes to a file and is printed after the others', not interleaved with it
const dir = slow.length && rest.length ? mkdtempSync(join(tmpdir(), 'tender-test-')) : undefined;
const out = dir && openSync(join(dir, 'slow.txt'), 'w');
const runs = [
  rest.length ? run(rest, { concurrency, timeoutMs: fileTimeoutMs }, 'inherit') : Promise.resolve(0),
  slow.length
    ? run(
        slow,
        { concurrency: 1, timeoutMs: Math.max(Number(fileTimeoutMs), ...slow.map(slowLimit)) },
        out ? ['ignore', out, out] : 'inherit',
      )
    : Promise.resolve(0),
];
const codes = await Promise.all(runs);
if (dir) {
  closeSync(out);
  process.stdout.write(`\nSlow files (${slow.join(', ')}), run beside the others:\n${readFileSync(join(dir, 'slow.txt'), 'utf8')}`);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(codes.find((c) => c !== 0) ?? 0);
