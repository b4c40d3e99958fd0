// /readyz says whether this node can serve payments, and when not, each reason in its body: the
// database does not answer, migrations are pending, a stop is under way; an acquirer link down
// leaves it ready but degraded, naming the link.
// Both stores (PGlite by default, PostgreSQL with DATABASE_URL).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/main.ts';
import type { Db } from '../../src/store/db/db.ts';
import { freshStore } from '../helpers/service.ts';

let svc: Service;
let store: Awaited<ReturnType<typeof freshStore>>;
let dataDir: string;
/** the database as the service sees it: while `unreachable`, every statement fails as a dropped connection would */
let unreachable = false;
let linkUp = true;

before(async () => {
  store = await freshStore();
  const db = new Proxy(store.db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if ((prop === 'query' || prop === 'exec') && typeof v === 'function')
        return (...args: unknown[]) =>
          unreachable ? Promise.reject(new Error('connect ECONNREFUSED')) : (v as (...a: unknown[]) => unknown)(...args);
      return v;
    },
  }) as Db;
  dataDir = mkdtempSync(join(tmpdir(), 'tender-ready-'));
  const config = loadConfig(
    { TENDER_DATA_DIR: dataDir, LOG_LEVEL: 'silent', TENDER_WORKER: 'off' },
    { port: 0, masterKey: randomBytes(32).toString('hex') },
  );
  svc = await startService({ config, db, log: createLogger('silent'), links: [{ name: 'acquirer-a', up: () => linkUp }] });
});
after(async () => {
  unreachable = false;
  await svc?.close();
  await store?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const ready = async () => {
  const res = await fetch(`${svc.url}/readyz`);
  return {
    status: res.status,
    body: (await res.json()) as { status?: string; problems?: string[]; degraded?: string[]; error?: { value: string } },
  };
};

test('ready when the database answers, every migration is applied and the links are up', async () => {
  assert.deepEqual(await ready(), { status: 200, body: { status: 'ready' } });
});

test('the database unreachable: 503 saying so, ready again when it answers', async () => {
  unreachable = true;
  try {
    const r = await ready();
    assert.equal(r.status, 503);
    assert.deepEqual(r.body.problems, ['database unavailable']);
    assert.equal(r.body.error?.value, 'database unavailable');
  } finally {
    unreachable = false;
  }
  assert.equal((await ready()).status, 200);
});

test('a migration pending: 503 naming it', async () => {
  const [last] = await store.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1');
  await store.db.query('DELETE FROM schema_migrations WHERE name = $1', [last.name]);
  try {
    const r = await ready();
    assert.equal(r.status, 503);
    assert.deepEqual(r.body.problems, [`migrations pending: ${last.name}`]);
  } finally {
    await store.db.query('INSERT INTO schema_migrations (name) VALUES ($1)', [last.name]);
  }
  assert.equal((await ready()).status, 200);
});

test('an acquirer link down: still 200, degraded naming the link; with the database gone too, 503 for the database', async () => {
  linkUp = false;
  try {
    const r = await ready();
    assert.equal(r.status, 200, 'one link down does not take the node out of the balancer');
    assert.equal(r.body.status, 'degraded');
    assert.deepEqual(r.body.degraded, ['acquirer link down: acquirer-a']);
    assert.equal(r.body.problems, undefined);
    unreachable = true;
    const both = await ready();
    assert.equal(both.status, 503);
    assert.deepEqual(both.body.problems, ['database unavailable']);
    assert.deepEqual(both.body.degraded, ['acquirer link down: acquirer-a']);
  } finally {
    unreachable = false;
    linkUp = true;
  }
  assert.equal((await ready()).status, 200);
});
