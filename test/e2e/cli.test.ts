// The `tender` command on an embedded PGlite data directory: projects, keys, and commands that go
// through a running server (PGlite allows one process per directory) without corrupting the store.
// Always PGlite: the lock-and-forward behaviour only exists for the embedded store.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, basic } from '../helpers/service.ts';
import { BIN, embeddedEnv, runTender, type Run, freePort } from '../helpers/cli.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import type { Json } from '../helpers/json.ts';
import { camt053 } from '../helpers/bankfiles.ts';

let dir: string;
let env: NodeJS.ProcessEnv;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tender-cli-'));
  env = embeddedEnv(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const tender = (args: string[], extraEnv: Record<string, string> = {}) => runTender(args, { ...env, ...extraEnv });

const json = (r: Run) => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim());
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const keys: string[] = [];
let live: { merchant_id: string; project_id: string; api_key: string };

test('project create --mode live --json prints merchant_id, project_id and a live_ key', async () => {
  live = json(await tender(['project', 'create', '--name', 'Live shop', '--mode', 'live', '--json']));
  for (const k of ['api_key', 'merchant_id', 'project_id']) assert.ok(k in live, k);
  assert.match(live.merchant_id, UUID);
  assert.match(live.project_id, UUID);
  assert.match(live.api_key, /^live_[A-Za-z0-9_-]{43}$/);
  keys.push(live.api_key);
});

test('key rotate --project ID --json prints a new key for the project', async () => {
  const r = json(await tender(['key', 'rotate', '--project', live.project_id, '--json']));
  assert.equal(r.project_id, live.project_id);
  assert.match(r.api_key, /^live_/);
  assert.notEqual(r.api_key, live.api_key);
  keys.push(r.api_key);
  live.api_key = r.api_key;
});

test('project create --merchant ID adds a project to that merchant', async () => {
  const r = json(await tender(['project', 'create', '--name', 'Second shop', '--mode', 'test', '--merchant', live.merchant_id, '--json']));
  assert.equal(r.merchant_id, live.merchant_id);
  assert.notEqual(r.project_id, live.project_id);
  assert.match(r.api_key, /^test_/);
  keys.push(r.api_key);
});

test('errors: an unknown merchant or project id exits 2 with one clear line', async () => {
  const mer = await tender(['project', 'create', '--name', 'X', '--merchant', '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11', '--json']);
  assert.equal(mer.code, 2);
  assert.match(mer.stderr, /merchant .* not found/);
  const nope = await tender(['project', 'set-webhook', '--project', 'nope']);
  assert.equal(nope.code, 2);
  assert.equal(nope.stderr, 'tender: NotFound: project nope not found\n');
  assert.equal(nope.stdout, '');
});

test('an unknown command, at the top or under a group, exits 2 with one line', async () => {
  const foo = await tender(['foo']);
  assert.equal(foo.code, 2);
  assert.equal(foo.stderr, "tender: unknown command 'foo' (tender --help lists the commands)\n");
  const sub = await tender(['project', 'foo']);
  assert.equal(sub.code, 2);
  assert.match(sub.stderr, /^tender: unknown command 'project foo'/);
});

test('every command has a description in --help', async () => {
  const walk = async (path: string[]): Promise<string[]> => {
    const help = await tender([...path, '--help']);
    assert.equal(help.code, 0, help.stderr);
    const block = /Commands:\n([\s\S]*)$/.exec(help.stdout)?.[1] ?? '';
    const lines = block.split('\n').filter((l) => /^ {2}\S/.test(l));
    const missing = lines
      .filter((l) => !/^ {2}\S+(?: \[[^\]]+\]| <[^>]+>|\|\S+)* {2,}\S/.test(l))
      .map((l) => `${path.join(' ')} ${l.trim()}`);
    const subs = lines.map((l) => l.trim().split(/[\s|]/)[0]).filter((n) => n !== 'help');
    const nested = await Promise.all(subs.map((n) => walk([...path, n])));
    return [...missing, ...nested.flat()];
  };
  assert.deepEqual(await walk([]), []);
});

test('while `serve` holds the directory, commands go through it; SIGTERM exits 0 and the store is intact', async () => {
  const port = await freePort();
  const server: ChildProcess = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  server.stdout!.on('data', (d) => (out += d));
  server.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 300 && !out.includes('API docs'); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(out.includes(`${base}/v1/`), `server printed its URLs: ${out} ${err}`);
    assert.ok(!out.includes('Created a test project'), 'no first-run project on a store that has projects');
    assert.ok(existsSync(join(dir, 'tender.lock')));

    const viaServer = json(await tender(['project', 'create', '--name', 'While serving', '--mode', 'test', '--json']));
    assert.match(viaServer.api_key, /^test_/);
    keys.push(viaServer.api_key);
    // the server that made it knows the key at once
    const self = await request(`${base}/v1/merchants/self/projects/self/`, 'GET', undefined, { authorization: basic(viaServer.api_key) });
    assert.equal(self.status, 200, self.text);
    assert.equal(self.body.id, viaServer.project_id);
    const liveSelf = await request(`${base}/v1/merchants/self/projects/self/`, 'GET', undefined, { authorization: basic(live.api_key) });
    assert.equal(liveSelf.body.status, 'active');
    const oldKey = await request(`${base}/v1/merchants/self/projects/self/`, 'GET', undefined, { authorization: basic(keys[0]) });
    assert.equal(oldKey.status, 401, 'the key rotated away is revoked');

    const rotated = json(await tender(['key', 'rotate', '--project', viaServer.project_id, '--json']));
    keys.push(rotated.api_key);
    const after = await request(`${base}/v1/merchants/self/projects/self/`, 'GET', undefined, { authorization: basic(viaServer.api_key) });
    assert.equal(after.status, 401);

    const failing = await tender(['key', 'rotate', '--project', '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11']);
    assert.equal(failing.code, 2, 'an unknown id, through the server too');
    assert.match(failing.stderr, /project 3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11 not found/);
    assert.equal(failing.stdout, '');
    const nope = await tender(['project', 'set-webhook', '--project', 'nope']);
    assert.equal(nope.code, 2, 'an id that is not even a UUID, through the server');
    assert.equal(nope.stderr.trim().split('\n').length, 1, nope.stderr);
    assert.doesNotMatch(nope.stderr, /internal server error/i);
    // the server logged no stack trace and no server error for either
    assert.doesNotMatch(out + err, /"stack"|\n\s+at .+:\d+:\d+|internal server error/i, out + err);

    const migrate = await tender(['migrate']);
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.match(migrate.stdout, /running server/);

    // a bank file travels to the server whole, past the API's 1 MB body limit; a broken one is refused in one line
    const statement = camt053('STMTCLI', [
      { iban: 'NL91ABNA0417164300', entries: [{ end_to_end_id: 'TSE00000000000000000000000000000000', cents: 100, direction: 'DBIT' }] },
    ]).replace('</Document>', `<!-- ${'x'.repeat(2 * 1024 * 1024)} --></Document>`);
    writeFileSync(join(dir, 'statement.xml'), statement);
    const bankFile = await tender(['payouts', 'booked', join(dir, 'statement.xml'), '--json']);
    assert.equal(bankFile.code, 1, bankFile.stderr);
    assert.deepEqual(
      JSON.parse(bankFile.stdout).unmatched.map((u: Json) => u.reason),
      ['unknown_end_to_end_id'],
    );
    writeFileSync(join(dir, 'broken.xml'), statement.slice(0, 400));
    const broken = await tender(['payouts', 'booked', join(dir, 'broken.xml')]);
    assert.equal(broken.code, 1);
    assert.match(
      broken.stderr,
      /^tender: (ValidationError: )?the file is not well-formed XML: the file ends inside a tag at line \d+, column \d+ \(cut off\?\)\n$/,
    );

    const order = await request(`${base}/v1/orders/`, 'POST', { currency: 'EUR', amount: 100 }, { authorization: basic(rotated.api_key) });
    assert.equal(order.status, 201, order.text);

    server.kill('SIGTERM');
    assert.equal(await exited, 0, err);
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  assert.ok(!existsSync(join(dir, 'tender.lock')), 'the lock is released on shutdown');

  const list = json(await tender(['project', 'list', '--json']));
  assert.deepEqual(list.map((p: Json) => p.name).sort(), ['Live shop', 'Second shop', 'While serving']);
  assert.equal(new Set(list.map((p: Json) => p.merchant_id)).size, 2);
});

test('API keys are stored only as hashes: no key text in any table', async () => {
  const db = await pgliteDb(dir);
  try {
    const tables = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    assert.ok(tables.some((t) => t.table_name === 'api_keys'));
    let dump = '';
    for (const { table_name } of tables) {
      const rows = await db.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM "${table_name}" t`);
      dump += rows.map((r) => r.j).join('\n');
    }
    assert.equal(keys.length, 5);
    for (const key of keys) {
      assert.ok(!dump.includes(key), 'a key is stored in clear');
      assert.ok(!dump.includes(key.slice(5)), 'the secret part of a key is stored in clear');
    }
    const [{ n }] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys');
    assert.equal(n, 5);
    const orders = await db.query('SELECT id FROM orders');
    assert.equal(orders.length, 1, 'the order made through the server is in the store');
  } finally {
    await db.close();
  }
});
