#!/usr/bin/env node
// Measures every test file alone: its CPU seconds (user + system, its children included: services,
// chromium, the CLI) and wall seconds, two files at a time like `npm test`. On a shared machine wall
// time lies; the CPU seconds are what a file costs. Prints a table sorted by CPU, most first.
// Usage: node scripts/test-times.mjs [--write] [files...]   (TEST_TIMES_OUT=file.json keeps the figures;
// --write puts each file's CPU seconds into scripts/test-costs.json, the order scripts/test.mjs runs them in)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const find = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? find(p) : p.endsWith('.test.ts') ? [p] : [];
  });

const write = process.argv.includes('--write');
const args = process.argv.slice(2).filter((a) => a !== '--write');
const files = args.length ? args : find('test').sort();
const lanes = Number(process.env.TEST_CONCURRENCY ?? 2);
const dir = mkdtempSync(join(tmpdir(), 'tender-times-'));
// the loader scripts/test.mjs runs the files with
const loader = process.env.TEST_LOADER === 'tsx' ? 'tsx' : new URL('./ts-register.mjs', import.meta.url).href;
const env = { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', NODE_ENV: 'test' };

const measure = (file, i) =>
  new Promise((done) => {
    const out = join(dir, `${i}.txt`);
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%e %U %S', '-o', out, process.execPath, '--import', loader, '--test', '--test-reporter=dot', file],
      { stdio: ['ignore', 'ignore', 'ignore'], env },
    );
    child.on('exit', (code) => {
      const [wall, user, sys] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      done({ file, code, wall, cpu: Math.round((user + sys) * 10) / 10 });
    });
  });

const started = Date.now();
const load = loadavg()[0];
const queue = files.map((f, i) => [f, i]);
const results = [];
await Promise.all(
  Array.from({ length: lanes }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const r = await measure(...next);
      results.push(r);
      process.stderr.write(`${r.cpu.toFixed(1)} cpu s  ${r.wall.toFixed(1)} s  ${r.code ? 'FAIL ' : ''}${r.file}\n`);
    }
  }),
);
rmSync(dir, { recursive: true, force: true });
results.sort((a, b) => b.cpu - a.cpu);
const cpu = results.reduce((s, r) => s + r.cpu, 0);
if (write) {
  const path = new URL('./test-costs.json', import.meta.url);
  const costs = JSON.parse(readFileSync(path, 'utf8'));
  for (const r of results) costs[relative(process.cwd(), resolve(r.file))] = r.cpu;
  // files since removed or split drop out
  const sorted = Object.fromEntries(
    Object.entries(costs)
      .filter(([f]) => existsSync(f))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(path, JSON.stringify(sorted, null, 1) + '\n');
}
if (process.env.TEST_TIMES_OUT) writeFileSync(process.env.TEST_TIMES_OUT, JSON.stringify(results, null, 1));
console.log(`| file | CPU s | wall s |\n|---|---|---|`);
for (const r of results) console.log(`| ${r.file}${r.code ? ' (failed)' : ''} | ${r.cpu.toFixed(1)} | ${r.wall.toFixed(1)} |`);
console.log(
  `\n${results.length} files, ${cpu.toFixed(0)} CPU s (floor on 2 cores ${(cpu / 120).toFixed(1)} min), ` +
    `wall ${((Date.now() - started) / 60000).toFixed(1)} min, load ${load.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`,
);
