// What `tender serve` makes on a store with nothing in it. The embedded sandbox (PGlite) gets a
// merchant, a test project and a portal user so `npm start` is usable at once; an operator's
// PostgreSQL starts empty and says how to create the first merchant and owner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { BIN, runTender } from '../helpers/cli.ts';
import { childStore, killed, pgUrl, waitFor } from '../helpers/child-service.ts';

const store = childStore('firstrun');

test('first start: the embedded store gets the sandbox merchant; PostgreSQL starts empty and says what to do', async () => {
  const { env, url } = await store.env({ TENDER_WORKER: 'off' });
  const server = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  server.stdout.on('data', (d) => (out += d));
  try {
    await waitFor('the service to start', async () => (await fetch(`${url}/readyz`)).ok && out.includes('API docs'), 240_000);
    // through the server on PGlite (it holds the directory), straight to the database on PostgreSQL
    const listed = await runTender(['project', 'list', '--json'], env, 120_000);
    assert.equal(listed.code, 0, listed.stderr);
    const projects = JSON.parse(listed.stdout) as Array<{ mode: string }>;
    if (pgUrl) {
      assert.deepEqual(projects, [], 'no merchant or project made on an operator database');
      assert.ok(!out.includes('admin@example.com') && !out.includes('Created a test project'), out);
      assert.match(out, /No merchant yet/);
      assert.match(out, /tender project create --name NAME --mode live/);
      assert.match(out, /tender user create --merchant MERCHANT_ID --email EMAIL/);
    } else {
      assert.deepEqual(
        projects.map((p) => p.mode),
        ['test'],
        'the sandbox has its test project',
      );
      assert.match(out, /Created a test project on first run/);
      assert.match(out, /email\s+admin@example\.com/);
      assert.ok(!out.includes('No merchant yet'), out);
    }
  } finally {
    await killed(server);
  }
});
