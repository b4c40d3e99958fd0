// The production start runs compiled JavaScript: scripts/build.mjs compiles src/ with tsc and copies what
// the code reads at run time, and bin/tender.mjs runs that build while it holds the current sources.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, basic } from '../helpers/service.ts';
import { BIN, embeddedEnv, freePort, runTender } from '../helpers/cli.ts';

const root = join(import.meta.dirname, '..', '..');
let work: string;
let build: string;

before(() => {
  // Inside the repository's node_modules, so the build resolves its packages as dist/ does.
  const cache = join(root, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  work = mkdtempSync(join(cache, 'tender-build-'));
  build = join(work, 'dist');
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], {
    env: { ...process.env, TENDER_BUILD_DIR: build },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr + r.stdout);
});
after(() => rmSync(work, { recursive: true, force: true }));

test('the build holds JavaScript for every source and the files read at run time', () => {
  assert.ok(existsSync(join(build, 'cli', 'index.js')));
  assert.ok(existsSync(join(build, 'store', 'migrations', '001_init.sql')), 'migrations copied');
  assert.ok(existsSync(join(build, 'http', 'pay', 'assets', 'wallets.js')), 'page assets copied');
  assert.doesNotMatch(readFileSync(join(build, 'main.js'), 'utf8'), /from '\.[^']*\.ts'/, 'imports point at .js files');
  assert.ok(JSON.parse(readFileSync(join(build, 'BUILD.json'), 'utf8')).sources > 0);
});

test('tender serve from the build answers the API with the key it printed', async () => {
  const dir = join(work, 'data');
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...embeddedEnv(dir), TENDER_BUILD_DIR: build, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  try {
    const key = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        const m = /API key\s+(test_\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    assert.doesNotMatch(err, /sources changed/, 'the current build runs');
    const res = await request(
      `http://127.0.0.1:${port}/v1/orders/`,
      'POST',
      { currency: 'EUR', amount: 1995 },
      { authorization: basic(key) },
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.amount, 1995);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('close', r));
  }
});

test('a build older than the sources is not run: tender says so and runs the sources', async () => {
  const stale = join(work, 'stale');
  spawnSync('cp', ['-r', build, stale]);
  writeFileSync(join(stale, 'BUILD.json'), JSON.stringify({ sources: 0, built: 0 }));
  const r = await runTender(['--help'], { ...process.env, TENDER_BUILD_DIR: stale });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /sources changed since the last build; running them through tsx/);
  const current = await runTender(['--help'], { ...process.env, TENDER_BUILD_DIR: build });
  assert.doesNotMatch(current.stderr, /sources changed/);
});
