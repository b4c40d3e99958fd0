// The real service in a child process is killed with SIGKILL while webhook deliveries are pending
// (the receiver is down) and while status changes are being written. After a restart, with the
// receiver up, every delivery is made and every outbox row has its delivery.
// PGlite: a temporary data directory. PostgreSQL (DATABASE_URL): a schema of its own, which the
// child uses through PGOPTIONS (node-pg reads it like libpq).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { LOCAL_RECEIVERS, request, basic, validOrder } from '../helpers/service.ts';
import { pgliteDb } from '../../src/store/db/lite.ts';
import { type Queryable } from '../../src/store/db/db.ts';

import { runTender, freePort } from '../helpers/cli.ts';
import { childStore, exited, pgUrl, waitFor, withPg } from '../helpers/child-service.ts';
import type { Json } from '../helpers/json.ts';
const store = childStore('crash');
const { dir, schema } = store;
let receiverServer: Server | undefined;

after(() => {
  receiverServer?.closeAllConnections();
  receiverServer?.close();
});

const tender = runTender;

test(
  'SIGKILL with deliveries pending: after a restart every delivery is made and no outbox row is lost',
  { timeout: 240_000 },
  async () => {
    const hookPort = await freePort(); // nothing listens there yet: the receiver is down
    const { env, url } = await store.env({
      ...LOCAL_RECEIVERS,
      TENDER_WORKER_POLL_MS: '100',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_INTERVAL_MS: '300', // real time: the project's clock is not advanced here
      WEBHOOK_MAX_ATTEMPTS: '1000',
      WEBHOOK_BREAKER_FAILURES: '0', // every attempt goes out: this test is about the crash, not the breaker
    });

    let server = await store.serve(env, url);
    const created = await tender(['project', 'create', '--name', 'Crash shop', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const project = JSON.parse(created.stdout.trim());
    assert.match(project.webhook_secret, /^whsec_/);
    const set = await tender(
      ['project', 'set-webhook', '--project', project.project_id, '--url', `http://127.0.0.1:${hookPort}/hook`, '--json'],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    const auth = { authorization: basic(project.api_key) };
    const api = (method: string, path: string, body?: unknown) => request(`${url}${path}`, method, body, auth);

    // status changes whose deliveries fail (connection refused) and wait for their retries
    const orders: string[] = [];
    const acknowledged = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const o = await api('POST', '/v1/orders/', validOrder({ merchant_order_id: `crash-${i}` }));
      assert.equal(o.status, 201, o.text);
      orders.push(o.body.id);
      assert.equal((await api('DELETE', `/v1/orders/${o.body.id}/`)).status, 200);
      acknowledged.add(o.body.id);
    }
    await waitFor('failed attempts', async () => {
      const log = await api('GET', `/v1/orders/${orders.at(-1)}/webhooks/`);
      return log.body.deliveries[0]?.attempts.some((a: Json) => a.error === 'connection refused');
    });

    // more status changes under way, and the process is killed in the middle of them
    const burst = Array.from({ length: 20 }, async (_, i) => {
      const o = await api('POST', '/v1/orders/', validOrder({ merchant_order_id: `burst-${i}` })).catch(() => undefined);
      if (o?.status !== 201) return;
      orders.push(o.body.id);
      const c = await api('DELETE', `/v1/orders/${o.body.id}/`).catch(() => undefined);
      if (c?.status === 200) acknowledged.add(o.body.id);
    });
    await waitFor('some of the burst', async () => acknowledged.size >= 25, 30_000);
    server.kill('SIGKILL');
    await exited(server);
    await Promise.all(burst);
    assert.ok(acknowledged.size >= 25);

    // the receiver comes up, then the service restarts
    const received = new Map<string, Set<string>>(); // order id -> webhook ids
    const secret = new Webhook(project.webhook_secret);
    receiverServer = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const msg = secret.verify(body, req.headers as Record<string, string>) as { order_id: string; project_id: string };
        assert.equal(msg.project_id, project.project_id);
        if (!received.has(msg.order_id)) received.set(msg.order_id, new Set());
        received.get(msg.order_id)!.add(String(req.headers['webhook-id']));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiverServer!.listen(hookPort, '127.0.0.1', resolve));
    server = await store.serve(env, url);

    // every acknowledged change arrives; so does every change that committed before the kill
    await waitFor('every acknowledged webhook', async () => [...acknowledged].every((id) => received.has(id)), 90_000);
    for (const id of orders) {
      const o = await api('GET', `/v1/orders/${id}/`);
      if (o.body.status !== 'cancelled') continue;
      await waitFor(`deliveries of ${id}`, async () => {
        const log = await api('GET', `/v1/orders/${id}/webhooks/`);
        return log.body.deliveries.length > 0 && log.body.deliveries.every((d: Json) => d.status === 'succeeded');
      });
    }
    server.kill('SIGTERM');
    await exited(server);

    // the store: each outbox row has a delivery, each delivery succeeded, and the receiver has it
    const check = async (q: Queryable) => {
      const outbox = await q.query<{ id: number; order_id: string }>('SELECT id, order_id FROM outbox WHERE project_id = $1', [
        project.project_id,
      ]);
      const deliveries = await q.query<{ id: string; outbox_id: number; status: string; order_id: string }>(
        'SELECT id, outbox_id, status, order_id FROM webhook_deliveries WHERE project_id = $1',
        [project.project_id],
      );
      assert.ok(outbox.length >= acknowledged.size, `${outbox.length} outbox rows for ${acknowledged.size} acknowledged changes`);
      for (const row of outbox) {
        const ds = deliveries.filter((d) => Number(d.outbox_id) === Number(row.id));
        assert.equal(ds.length, 1, `outbox row ${row.id} has ${ds.length} deliveries`);
        assert.equal(ds[0].status, 'succeeded');
        assert.ok(received.get(row.order_id)?.has(ds[0].id), `delivery ${ds[0].id} was not received`);
      }
      for (const id of acknowledged)
        assert.ok(
          outbox.some((r) => r.order_id === id),
          `no outbox row for acknowledged order ${id}`,
        );
    };
    if (pgUrl) {
      await withPg(async (c) => {
        await c.query(`SET search_path = ${schema}`);
        await check({ query: async (sql, params) => (await c.query(sql, params as Json[])).rows as Json, exec: async () => {} });
      });
    } else {
      const db = await pgliteDb(dir);
      try {
        await check(db);
      } finally {
        await db.close();
      }
    }
  },
);
