// `tender risk list add|remove|show` as an operator runs it (docs/risk.md "Lists"), beside a
// `tender serve` that holds an embedded store of its own (so the commands go through the server's
// admin endpoint, as on a laptop): a card number comes on standard input only and is kept as its
// fingerprint; bad input exits 1 with one line naming the rule; an unknown entry or project exits 2.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, embeddedEnv, freePort, type Run } from '../helpers/cli.ts';

let dir: string;
let env: NodeJS.ProcessEnv;
let server: ChildProcess;
let out = '';
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tender-risk-cli-'));
  // as on every node of one Tender: the servers' risk key (a card's fingerprint is under it)
  env = { ...embeddedEnv(dir), TENDER_RISK_KEY: randomBytes(32).toString('hex') };
  server = spawn(process.execPath, [BIN, 'serve'], { env: { ...env, PORT: String(await freePort()) }, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (d) => (out += d));
  server.stderr!.on('data', (d) => (out += d));
  for (let i = 0; i < 600 && !out.includes('Sign in to the portal'); i++) await new Promise((r) => setTimeout(r, 100));
  assert.match(out, /project_id {2}[0-9a-f-]{36}/, out);
});
after(async () => {
  if (server?.exitCode === null) {
    const exited = new Promise((r) => server.on('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** `tender ARGS`, with `input` on its standard input. */
function tender(args: string[], input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

const add = (scope: string[], kind: string, value: string[], input = '') =>
  tender(['risk', 'list', 'add', ...scope, '--list', 'block', '--kind', kind, ...value], input);

test('add, show and remove on a project and the platform; a card from stdin only; bad input exits 1 and changes nothing', async () => {
  // the test project the server made on its first run
  const project = ['--project', /project_id {2}([0-9a-f-]{36})/.exec(out)![1]!];

  const card = await add(project, 'card', [], '4242 4242 4242 4242\n');
  assert.equal(card.code, 0, card.stderr);
  assert.match(card.stdout, /^added [0-9a-f-]{36} {2}block {2}card +•••• 4242\n$/);
  const inArgv = await add(project, 'card', ['--value', '4242424242424242']);
  assert.equal(inArgv.code, 1);
  assert.match(inArgv.stderr, /a card number is read from standard input, never from the command line/);

  const bad: Array<[string, string, RegExp]> = [
    ['network', '10.0.0.1/8', /value must be an IPv4 or IPv6 address or network in CIDR form/],
    ['bin', '12', /value must be a BIN of 6 to 8 digits/],
    ['email', 'eve.example.org', /value must be an email address/],
    ['card', '', /value must be a card number/],
  ];
  for (const [kind, value, message] of bad) {
    const r = kind === 'card' ? await add(project, kind, [], '4242424242424241\n') : await add(project, kind, ['--value', value]);
    assert.equal(r.code, 1, `${kind} ${value}: ${r.stdout}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, 'one line');
  }
  const neither = await add([], 'bin', ['--value', '411111']);
  assert.equal(neither.code, 1);
  assert.match(neither.stderr, /give either --project ID or --platform/);
  const badList = await tender(['risk', 'list', 'add', '--platform', '--list', 'maybe', '--kind', 'bin', '--value', '411111']);
  assert.equal(badList.code, 1);
  assert.match(badList.stderr, /maybe/);
  const unknown = await add(['--project', '3f0e9c52-0000-4000-8000-000000000000'], 'bin', ['--value', '411111']);
  assert.equal(unknown.code, 2, unknown.stderr);

  const shown = await tender(['risk', 'list', 'show', ...project]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(shown.stdout.trim().split('\n').length, 1, 'only the card: nothing bad was stored');

  const domain = await add(['--platform'], 'email_domain', ['--value', 'Example.org', '--json']);
  assert.equal(domain.code, 0, domain.stderr);
  const entry = JSON.parse(domain.stdout).entry;
  assert.equal(entry.value, 'example.org');
  assert.match((await tender(['risk', 'list', 'show', '--platform'])).stdout, /block {2}email_domain {2}example\.org/);
  const removed = await tender(['risk', 'list', 'remove', '--platform', '--id', entry.id]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /^removed /);
  assert.equal((await tender(['risk', 'list', 'remove', '--platform', '--id', entry.id])).code, 2);
  assert.equal((await tender(['risk', 'list', 'show', '--platform'])).stdout, '(no entries)\n');
});

test('--expires and --note: shown by show (expires, or expired), refused when bad with one line and exit 1', async () => {
  const expiring = await add(['--platform'], 'country', ['--value', 'BE', '--expires', '2099-12-31', '--note', 'test expiry']);
  assert.equal(expiring.code, 1, 'beyond ten years');
  assert.match(expiring.stderr, /expires_at must lie ahead, within ten years/);
  const bad = await add(['--platform'], 'country', ['--value', 'BE', '--expires', 'next week']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /expires_at must be a duration such as P30D/);
  const ok = await add(['--platform'], 'country', ['--value', 'BE', '--expires', 'P30D', '--note', 'test expiry']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /^added [0-9a-f-]{36} {2}block {2}country +BE {2}expires \d{4}-\d\d-\d\dT[0-9:.]+Z {2}\(test expiry\)\n$/);
  const soon = await add(['--platform'], 'country', ['--value', 'DE', '--expires', 'PT3S', '--json']);
  assert.equal(soon.code, 0, soon.stderr);
  await new Promise((r) => setTimeout(r, Date.parse(JSON.parse(soon.stdout).entry.expires_at) - Date.now() + 100));
  const shown = (await tender(['risk', 'list', 'show', '--platform'])).stdout;
  assert.match(shown, /country +DE {2}expired \d{4}-/);
  assert.match(shown, /country +BE {2}expires \d{4}-.*\(test expiry\)/);
});
