// Portal users from the command line, and the first run's portal sign-in. Always PGlite (embedded data directory).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, embeddedEnv, freePort, runTender, type Run } from '../helpers/cli.ts';
import { PortalClient } from '../helpers/portal.ts';
import type { TestService } from '../helpers/service.ts';

let dir: string;
let env: NodeJS.ProcessEnv;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tender-portal-cli-'));
  env = embeddedEnv(dir);
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** `tender ARGS` with `input` on standard input. */
function tenderWithInput(args: string[], input: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** Signs in over HTTP against a running `tender serve`. */
const client = (portalUrl: string) => new PortalClient({ config: { portalUrl } } as unknown as TestService);

test('first run prints the portal sign-in URL and credentials, which sign in; `user create` adds users', async () => {
  const port = await freePort();
  const server: ChildProcess = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, PORT: String(port), TENDER_WORKER: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  server.stdout!.on('data', (d) => (out += d));
  server.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  try {
    for (let i = 0; i < 600 && !/password \S+/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
    const portal = `http://127.0.0.1:${port}/portal`;
    assert.ok(out.includes(`${portal}/sign-in`), `${out}\n${err}`);
    const email = /email\s+(\S+@\S+)/.exec(out)![1];
    const password = /password (\S+)/.exec(out)![1];
    const merchant = /merchant_id (\S+)/.exec(out)![1];
    assert.ok(password.length >= 12);
    const c = client(portal);
    const signedIn = await c.signIn(email, password);
    assert.equal(signedIn.status, 303, signedIn.text);
    assert.match((await c.get('/')).location ?? '', /\/portal\/projects\/[0-9a-f-]{36}\/$/);

    // through the running server (it holds the embedded store)
    const made = await tenderWithInput(
      ['user', 'create', '--merchant', merchant, '--email', 'Ops@Shop.example', '--password-stdin', '--json'],
      'a long enough password\n',
    );
    assert.equal(made.code, 0, made.stderr);
    const user = JSON.parse(made.stdout);
    assert.equal(user.email, 'ops@shop.example');
    assert.equal(user.password, undefined, 'a password given is not printed');
    assert.equal((await client(portal).signIn('ops@shop.example', 'a long enough password')).status, 303);

    const generated = await runTender(['user', 'create', '--merchant', merchant, '--email', 'second@shop.example'], env);
    assert.equal(generated.code, 0, generated.stderr);
    const shown = /password\s+(\S+)/.exec(generated.stdout)![1];
    assert.match(generated.stdout, /shown once/);
    assert.equal((await client(portal).signIn('second@shop.example', shown)).status, 303);

    const again = await runTender(['user', 'create', '--merchant', merchant, '--email', 'second@shop.example'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /exists already/);
    const short = await tenderWithInput(
      ['user', 'create', '--merchant', merchant, '--email', 'x@shop.example', '--password-stdin'],
      'short\n',
    );
    assert.equal(short.code, 1);
    assert.match(short.stderr, /12 to 256 characters/);
    const badEmail = await runTender(['user', 'create', '--merchant', merchant, '--email', 'not-an-email'], env);
    assert.equal(badEmail.code, 1);
    assert.match(badEmail.stderr, /email must be an email address/);
    const noMerchant = await runTender(
      ['user', 'create', '--merchant', '3b0c4f6e-2f57-4f3f-9a55-6a5d3c1c9e11', '--email', 'y@shop.example'],
      env,
    );
    assert.equal(noMerchant.code, 2, 'an unknown id: exit status 2');
    assert.match(noMerchant.stderr, /merchant .* not found/);
    assert.doesNotMatch(out + err, /a long enough password/, 'no password in the server log');

    server.kill('SIGTERM');
    assert.equal(await exited, 0, err);
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
  }
});
