// Stopping the server: idle and never-used connections go at once, a request in flight may finish
// within SHUTDOWN_GRACE_MS, and one that outlives it is cut, so a stop never hangs on a client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { startTestService, validOrder, basic } from '../helpers/service.ts';
import type { Json } from '../helpers/json.ts';

async function rawSocket(url: string): Promise<{ socket: Socket; received: () => string; closed: Promise<unknown> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  let data = '';
  socket.on('data', (d) => (data += d.toString()));
  socket.on('error', () => {});
  return { socket, received: () => data, closed: once(socket, 'close') };
}

/** The head of a POST /v1/orders/ whose body is still to come. */
function partialOrder(key: string, body: string) {
  return [
    `POST /v1/orders/ HTTP/1.1`,
    `host: x`,
    `authorization: ${basic(key)}`,
    `content-type: application/json`,
    `content-length: ${Buffer.byteLength(body)}`,
    '',
    '',
  ].join('\r\n');
}

test('a connection that never sent a request, and an idle keep-alive one, do not hold up a stop', { timeout: 30_000 }, async () => {
  const t = await startTestService({ env: { SHUTDOWN_GRACE_MS: '600000' } });
  const silent = await rawSocket(t.url);
  const idle = await rawSocket(t.url);
  idle.socket.write(`GET /v1/test/cards/ HTTP/1.1\r\nhost: x\r\nauthorization: ${basic(t.project.api_key)}\r\n\r\n`);
  while (!idle.received().includes('\r\n\r\n')) await once(idle.socket, 'data');
  assert.match(idle.received(), /^HTTP\/1\.1 200/);
  await t.close(); // with a 10-minute grace: only the missing wait lets this return
  await Promise.all([silent.closed, idle.closed]);
  assert.equal(silent.received(), '', 'the silent connection got nothing, it was closed');
});

test('a request in flight when the stop begins is answered whole, then its connection closes', { timeout: 30_000 }, async () => {
  const t = await startTestService({ env: { SHUTDOWN_GRACE_MS: '600000' } });
  const body = JSON.stringify(validOrder({ merchant_order_id: 'in-flight' }));
  const c = await rawSocket(t.url);
  // the server has the head and waits for the body (a fixed pause is not enough on a busy machine)
  const headRead = once(t.svc.app.server, 'request');
  c.socket.write(partialOrder(t.project.api_key, body) + body.slice(0, 10));
  await headRead;
  const stopped = t.svc.close();
  c.socket.write(body.slice(10));
  await c.closed;
  assert.match(c.received(), /^HTTP\/1\.1 201/);
  assert.equal(JSON.parse(c.received().slice(c.received().indexOf('\r\n\r\n') + 4)).merchant_order_id, 'in-flight');
  await stopped;
  const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders WHERE merchant_order_id = 'in-flight'`);
  assert.equal(n, 1, 'the order was stored');
  await t.close();
});

test('a request that outlives SHUTDOWN_GRACE_MS is cut and the stop completes', { timeout: 30_000 }, async () => {
  const t = await startTestService({ env: { SHUTDOWN_GRACE_MS: '300' } });
  const body = JSON.stringify(validOrder({ merchant_order_id: 'never-finished' }));
  const c = await rawSocket(t.url);
  const headRead = once(t.svc.app.server, 'request'); // a request under way, not an idle connection
  c.socket.write(partialOrder(t.project.api_key, body) + body.slice(0, 10)); // the rest never comes
  await headRead;
  await t.svc.close();
  await c.closed;
  assert.equal(c.received(), '', 'no answer: the connection was cut');
  const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM orders`);
  assert.equal(n, 0, 'nothing stored');
  await t.close();
});

test('a stop turns /readyz red first and keeps serving for SHUTDOWN_DRAIN_MS, then closes', { timeout: 30_000 }, async () => {
  // a drain long enough that a loaded machine still sends the order inside it
  const t = await startTestService({ env: { SHUTDOWN_DRAIN_MS: '5000' } });
  assert.equal((await fetch(`${t.url}/readyz`)).status, 200);
  const closing = t.close();
  const ready = await fetch(`${t.url}/readyz`);
  assert.equal(ready.status, 503, 'red as soon as the stop begins');
  assert.equal(((await ready.json()) as Json).error.value, 'shutting down');
  const created = await t.api('POST', '/v1/orders/', validOrder({ merchant_order_id: 'while-draining' }));
  assert.equal(created.status, 201, 'requests are still served while load balancers notice');
  await closing;
  await assert.rejects(fetch(`${t.url}/healthz`), 'closed after the drain');
});
