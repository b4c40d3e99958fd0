// DATABASE_URL with several hosts and target_session_attrs=read-write (store/hosts.ts): the pool
// connects to the first host that answers and takes writes. The failover itself (a standby
// promoted by pg_auto_failover) is run by npm run test:cluster; here, on the suite's server: a
// host that is down is passed over, and a server that only reads is refused with the 503 a lost
// database gets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import pg from 'pg';
import { pgDb } from '../../src/store/db/pg.ts';
import { DomainError } from '../../src/domain/errors.ts';

const url = process.env.DATABASE_URL;
const ro = `t_ro_${randomBytes(4).toString('hex')}`;
let down = 0;

async function admin(sql: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(sql);
  await c.end();
}

before(async () => {
  if (!url) return;
  // a port nothing listens on
  down = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  await admin(`CREATE DATABASE ${ro}`);
  await admin(`ALTER DATABASE ${ro} SET default_transaction_read_only = on`);
});
after(async () => {
  if (url) await admin(`DROP DATABASE IF EXISTS ${ro} WITH (FORCE)`);
});

const withHosts = (db: string) => {
  const u = new URL(url!);
  return `postgres://${u.username}@127.0.0.1:${down},${u.hostname}:${u.port || 5432}/${db}?target_session_attrs=read-write`;
};

test('a host that is down is passed over: queries, transactions and LISTEN go to the next', async (t) => {
  if (!url) return t.diagnostic('PostgreSQL only (PGlite has no hosts)');
  const db = pgDb({ url: withHosts(new URL(url).pathname.slice(1)), max: 2 });
  try {
    const [{ ro: readOnly }] = await db.query<{ ro: string }>("SELECT current_setting('transaction_read_only') AS ro");
    assert.equal(readOnly, 'off');
    assert.equal(await db.tx(async (q) => (await q.query<{ n: number }>('SELECT 1 AS n'))[0].n), 1);
    let heard = 0;
    const stop = await db.listen!('tender_multi_host_test', () => heard++);
    await stop();
    assert.equal(heard, 0);
  } finally {
    await db.close();
  }
});

test('with read-write, a server that takes no writes is refused: a 503 the client may retry', async (t) => {
  if (!url) return t.diagnostic('PostgreSQL only (PGlite has no hosts)');
  const db = pgDb({ url: withHosts(ro), max: 1 });
  try {
    const err = await db.query('SELECT 1').then(
      () => undefined,
      (e) => e,
    );
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.kind, 'unavailable');
    assert.match(String((err as { cause?: Error }).cause?.message), /no read-write server among 127\.0\.0\.1:\d+, .*read-only/);
  } finally {
    await db.close();
  }
});
