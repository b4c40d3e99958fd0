#!/usr/bin/env node
// Runs the whole suite with node's test runner: every test/**/*.test.ts, through tsx.
// Store: PGlite by default, PostgreSQL when DATABASE_URL is set (each test file uses its own schema).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? find(p) : p.endsWith('.test.ts') ? [p] : [];
  });
}

const args = process.argv.slice(2);
const files = args.length ? args : find('test').sort();
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// A file that hangs (a server left open, a starved pool) fails after this instead of stalling the run.
const fileTimeoutMs = process.env.TEST_FILE_TIMEOUT_MS ?? '300000';
const r = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${fileTimeoutMs}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${new URL('./file-failures.mjs', import.meta.url).pathname}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  {
    stdio: 'inherit',
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', NODE_ENV: 'test' },
  },
);
process.exit(r.status ?? 1);
