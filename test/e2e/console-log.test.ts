// The console a person reads (LOG_FORMAT=pretty, the default on a terminal): one line per request
// with time, method, path without its query, status, duration and request id; nothing for a
// static asset served, a line when one fails; a line when Tender stops. JSON lines otherwise.
// Both stores (PGlite by default, PostgreSQL with DATABASE_URL).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { startTestService } from '../helpers/service.ts';
import { readableConsole, readableWanted } from '../../src/telemetry/console.ts';

test('LOG_FORMAT picks the format; unset, a terminal gets readable lines and a pipe JSON', () => {
  assert.equal(readableWanted(undefined, true), true);
  assert.equal(readableWanted(undefined, false), false);
  assert.equal(readableWanted(undefined, undefined), false);
  assert.equal(readableWanted('json', true), false);
  assert.equal(readableWanted('pretty', false), true);
});

test('one readable line per request, none for assets served, a line when Tender stops', async () => {
  let out = '';
  const screen = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString('utf8');
      done();
    },
  });
  const t = await startTestService({ logStream: readableConsole(screen) });
  let closed = false;
  try {
    const r = await t.api('GET', '/v1/merchants/self/projects/self/?limit=5&api_key=secret-in-query');
    assert.equal(r.status, 200, r.text);
    const id = r.headers.get('x-request-id')!;
    assert.equal((await fetch(`${t.url}/pay/assets/checkout.js`)).status, 200);
    assert.equal((await fetch(`${t.url}/portal/assets/no-such-file.css`)).status, 404);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the onResponse hook writes after the answer
    const lines = out.trimEnd().split('\n');
    const orders = lines.filter((l) => l.includes(' /v1/merchants/self/projects/self/ '));
    assert.equal(orders.length, 1, out);
    assert.match(orders[0], new RegExp(`^\\d\\d:\\d\\d:\\d\\d GET /v1/merchants/self/projects/self/ 200 \\d+ ms ${id}$`));
    assert.ok(!out.includes('secret-in-query') && !out.includes('limit=5'), 'no query string');
    assert.ok(!out.includes('checkout.js'), `an asset served is not shown:\n${out}`);
    assert.match(out, /GET \/portal\/assets\/no-such-file\.css 404 \d+ ms [0-9a-f]{32} !/);
    assert.ok(!lines.some((l) => l.trimStart().startsWith('{')), `no JSON on the console:\n${out}`);
    await t.close();
    closed = true;
    assert.match(out.trimEnd().split('\n').at(-1)!, /^\d\d:\d\d:\d\d INFO Tender stopped$/);
  } finally {
    if (!closed) await t.close();
  }
});

test('JSON lines carry one line per request with its id, the path without query, status and duration', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const t = await startTestService({ logStream: sink });
  try {
    const r = await t.api('GET', '/v1/merchants/self/projects/self/?limit=5');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const mine = lines.filter((l) => l.reqId === r.headers.get('x-request-id'));
    assert.equal(mine.length, 1, JSON.stringify(lines));
    assert.deepEqual((mine[0].req as { url: string }).url, '/v1/merchants/self/projects/self/');
    assert.equal((mine[0].res as { statusCode: number }).statusCode, 200);
    assert.equal(typeof mine[0].responseTime, 'number');
    assert.equal(mine[0].trace_id, r.headers.get('x-request-id'));
  } finally {
    await t.close();
  }
});
