// `tender seed` on an embedded PGlite data directory: on the store directly, and in parts through a
// running server that holds the store. Always PGlite, like cli.test.ts (the forwarding exists for it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, basic } from '../helpers/service.ts';
import { BIN, embeddedEnv, runTender, freePort } from '../helpers/cli.ts';

let dir: string;
let env: NodeJS.ProcessEnv;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tender-seed-'));
  env = embeddedEnv(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const tender = (args: string[]) => runTender(args, env, 120_000);

const json = (r: { code: number | null; stdout: string; stderr: string }) => {
  assert.equal(r.code, 0, `exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim());
};

let project: { project_id: string; api_key: string };

test('seed --project ID --orders N seeds the store and the ledger check passes', async () => {
  project = json(await tender(['project', 'create', '--name', 'Seeded shop', '--json']));
  const r = json(await tender(['seed', '--project', project.project_id, '--orders', '300', '--days', '30', '--json']));
  assert.equal(r.project_id, project.project_id);
  assert.equal(r.orders, 300);
  assert.ok(r.child_orders > 0);
  assert.match(r.prefix, /^ORD-[0-9a-f]{6}-$/);
  assert.ok(new Date(r.to).getTime() - new Date(r.from).getTime() === 30 * 86_400_000);
  const check = json(await tender(['ledger', 'check', '--project', project.project_id, '--json']));
  assert.equal(check.ok, true, JSON.stringify(check.violations));
});

test('seed refuses a bad count or an unknown project', async () => {
  const bad = await tender(['seed', '--project', project.project_id, '--orders', 'lots']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--orders must be an integer/);
  const unknown = await tender(['seed', '--project', '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11', '--orders', '5']);
  assert.equal(unknown.code, 2, 'an unknown id: exit status 2');
  assert.match(unknown.stderr, /project 3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11 not found/);
});

test('while `serve` holds the store, seed goes through it in parts, numbering on', async () => {
  const port = await freePort();
  const server: ChildProcess = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  server.stdout!.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => server.on('exit', resolve));
  try {
    for (let i = 0; i < 300 && !out.includes('API docs'); i++) await new Promise((r) => setTimeout(r, 100));
    const r = json(await tender(['seed', '--project', project.project_id, '--orders', '5200', '--json']));
    assert.equal(r.orders, 5200);
    const search = (query: string) =>
      request(`http://127.0.0.1:${port}/v1/search/orders/`, 'POST', { query, size: 1 }, { authorization: basic(project.api_key) });
    // both parts (1..5000 and 5001..5200) carry the run's prefix, with their own numbers
    for (const n of ['00000001', '00005000', '00005001', '00005200']) {
      const res = await search(`merchant_order_id:${r.prefix}${n}`);
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.total >= 1, n);
    }
    const all = await search(`merchant_order_id:${r.prefix}*`);
    assert.equal(all.body.total, 5200 + r.child_orders);
  } finally {
    server.kill('SIGTERM');
    await exited;
  }
});
