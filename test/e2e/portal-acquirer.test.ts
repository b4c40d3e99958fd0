// Issue 41: the money rule on every surface. The portal ran captures, voids and refunds inside a
// transaction it held open across the acquirer's call: the attempt committed only after the
// answer, the connection and the payment's row locks were held meanwhile, and one merchant's
// portal stalled every other. Now the code that calls the acquirer refuses to run with a
// transaction held or outside callAcquirer, and the portal takes the API's path.
// The acquirer here is the simulator behind a gate: a capture or refund asked is held there until
// the test lets it go, so "in flight at the acquirer" is a state the test waits for, not a timing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { PortalClient, portalUser } from '../helpers/portal.ts';
import { eventually } from '../helpers/money.ts';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import type { Connector, FollowUpRef } from '../../src/acquirer/connector.ts';
import { findProject } from '../../src/store/platform/projects.ts';
import { captureTransaction } from '../../src/services/payments/captures.ts';
import { refundOrder } from '../../src/services/payments/refunds.ts';
import { connectorFor, operationRef } from '../../src/services/payments/connectors.ts';
import { callAcquirer, HeldTransactionError, UnguardedCallError } from '../../src/services/payments/attempts/call.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';

/** The simulator, its captures and refunds held at the acquirer while `gate.closed`. */
function gatedAcquirer() {
  const sim = createSimulator({ settleMs: 0 });
  const gate = { closed: false, waiting: 0, asked: [] as string[], open: () => {} };
  let opened = Promise.resolve();
  const close = () => {
    gate.closed = true;
    opened = new Promise<void>((resolve) => (gate.open = () => ((gate.closed = false), resolve())));
  };
  const held = (kind: 'capture' | 'refund') => async (req: FollowUpRef) => {
    gate.asked.push(`${kind} ${req.transaction_id}`);
    if (gate.closed) {
      gate.waiting++;
      await opened;
      gate.waiting--;
    }
    return sim[kind](req);
  };
  const connector: Connector = Object.assign(Object.create(sim) as Connector, { capture: held('capture'), refund: held('refund') });
  return { connector, gate, close };
}

const acquirer = gatedAcquirer();
let t: TestService;
let c: PortalClient;
before(async () => {
  // ten connections, as in the issue: twelve held captures would take them all
  t = await startTestService({
    pool: { size: 10 },
    testConnector: acquirer.connector,
    // the gate holds calls for as long as a test needs: no timeout or recovery meanwhile
    env: { ACQUIRER_TIMEOUT_MS: '60000', ACQUIRER_RECOVERY_MS: '65000' },
  });
  const user = await portalUser(t);
  c = new PortalClient(t);
  assert.equal((await c.signIn(user.email, user.password)).status, 303);
});
after(async () => {
  acquirer.gate.open();
  await t?.close();
});

const ctx = () => t.svc.ctx;
const orderPath = (id: string) => `/projects/${t.project.project_id}/orders/${id}/`;
let seq = 0;
const token = () => `pa-${process.pid}-${String(++seq).padStart(10, '0')}`;
const txnOf = async (id: string) =>
  (
    await t.db.query<{ captured_amount: number; refunded_amount: number; is_capturable: boolean }>(
      'SELECT captured_amount, refunded_amount, is_capturable FROM transactions WHERE order_id = $1',
      [id],
    )
  )[0];
const attempts = async (kind: string, status: string) =>
  (
    await t.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM acquirer_attempts WHERE project_id = $1 AND kind = $2 AND status = $3',
      [t.project.project_id, kind, status],
    )
  )[0].n;

test('an acquirer call is refused with a transaction held or outside callAcquirer, and nothing reaches the acquirer', async () => {
  const o = await payOrder(t, {}, { capture_mode: 'manual' });
  const sale = await payOrder(t, { amount: 1000 });
  const project = (await findProject(t.db, t.project.project_id))!;
  const asked = acquirer.gate.asked.length;

  // a surface wrapping the use case in a transaction of its own (as the portal did)
  const open = await t.db.begin();
  await assert.rejects(
    t.db.within(open, () => captureTransaction(ctx(), project, o.id, o.transactions[0].id)),
    (err) => err instanceof HeldTransactionError && /inside a database transaction/.test(err.message),
  );
  await open.rollback();
  // ... or in a tx() callback: refused before anything is recorded
  await assert.rejects(
    t.db.tx(() => refundOrder(ctx(), project, sale.id, { amount: 100 })),
    (err) => err instanceof HeldTransactionError,
  );
  assert.equal(await attempts('refund', 'processing'), 0, 'no refund recorded');
  // ... and callAcquirer itself, asked in one, never runs the call
  let called = false;
  await assert.rejects(
    t.db.tx(() =>
      callAcquirer(ctx(), { id: 'a-refund', kind: 'refund' }, async () => {
        called = true;
        return connectorFor(ctx(), project).refund({ ...operationRef(sale.transactions[0], new Date()), reference: 'x' });
      }),
    ),
    (err) => err instanceof HeldTransactionError,
  );
  assert.equal(called, false);
  // ... or a connector's money method called directly
  const ref = { ...operationRef(o.transactions[0], new Date()), reference: 'x' };
  await assert.rejects(connectorFor(ctx(), project).capture(ref), UnguardedCallError);
  await assert.rejects(connectorFor(ctx(), project).refund(ref), UnguardedCallError);

  assert.equal(acquirer.gate.asked.length, asked, 'the acquirer was never asked');
  assert.deepEqual(await txnOf(o.id), { captured_amount: 0, refunded_amount: 0, is_capturable: true });
  assert.equal((await txnOf(sale.id)).refunded_amount, 0);
  // the rule kept, the same use cases work
  assert.equal((await captureTransaction(ctx(), project, o.id, o.transactions[0].id)).status, 'completed');
  assert.equal((await refundOrder(ctx(), project, sale.id, { amount: 100 })).status, 'completed');
});

test('the connectors reach the services only through connectorFor (static check of src/)', () => {
  // connectorFor hands out the guarded connector: reading ctx.connectors elsewhere would bypass it
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : n.endsWith('.ts') ? [join(dir, n)] : []));
  const allowed = new Set(['src/main.ts', 'src/services/payments/connectors.ts', 'src/services/platform/context.ts']);
  const readers = files('src').filter(
    (f) => !allowed.has(f) && /\bconnectors\s*(\.|\?\.|\[)\s*['"]?(test|live)\b/.test(readFileSync(f, 'utf8')),
  );
  assert.deepEqual(readers, []);
});

/** Sessions of other backends holding a lock on this store's orders or transactions (PostgreSQL). */
async function lockHolders(): Promise<number> {
  const [{ s }] = await t.db.query<{ s: string }>('SELECT current_schema() AS s');
  const [{ n }] = await t.db.query<{ n: number }>(
    `SELECT count(DISTINCT l.pid)::int AS n FROM pg_locks l
       JOIN pg_class r ON r.oid = l.relation JOIN pg_namespace ns ON ns.oid = r.relnamespace
      WHERE ns.nspname = $1 AND r.relname IN ('orders', 'transactions') AND l.pid <> pg_backend_pid()`,
    [s],
  );
  return n;
}

test(
  '12 portal captures at a slow acquirer hold no connection; another merchant creates an order meanwhile',
  { timeout: 180_000 },
  async () => {
    const N = 12;
    const preauths = [];
    for (let i = 0; i < N; i++) preauths.push(await payOrder(t, { amount: 1000 + i }, { capture_mode: 'manual' }));
    await c.get(orderPath(preauths[0].id));
    acquirer.close();
    let answers: Promise<{ status: number }[]> | undefined;
    try {
      answers = Promise.all(
        preauths.map((o) =>
          c.post(`${orderPath(o.id)}actions`, { action: 'capture', transaction_id: o.transactions[0].id, token: token() }),
        ),
      );
      // all twelve at the acquirer at once, each recorded and committed (seen from outside)
      await eventually(async () => assert.equal(acquirer.gate.waiting, N), 30_000);
      assert.equal(await attempts('capture', 'processing'), N, 'every capture recorded and committed before its call');
      if (t.db.kind === 'postgres') {
        assert.equal(await lockHolders(), 0, 'no session holds the orders or transactions while the acquirer is asked');
        assert.equal(t.db.pool!().waiting, 0);
      }
      const other = await t.newProject('test');
      const started = Date.now();
      const made = await t.api(
        'POST',
        '/v1/orders/',
        { merchant_order_id: 'other-1', currency: 'EUR', amount: 500 },
        { key: other.api_key },
      );
      const took = Date.now() - started;
      assert.equal(made.status, 201, made.text);
      assert.ok(took < 1000, `another merchant's order took ${took} ms`);
      assert.equal(acquirer.gate.waiting, N, 'the captures were still at the acquirer');
    } finally {
      acquirer.gate.open();
    }
    for (const r of await answers) assert.equal(r.status, 303);
    for (const [i, o] of preauths.entries()) assert.equal((await txnOf(o.id)).captured_amount, 1000 + i);
  },
);

test('5 portal and 5 API refunds of 1000 at once on a sale of 10000 refund exactly 10000', { timeout: 180_000 }, async () => {
  const sale = await payOrder(t, { amount: 10_000 });
  await c.get(orderPath(sale.id));
  acquirer.close();
  let sent: Promise<Array<{ status: number; text: string }>> | undefined;
  try {
    const portal = Array.from({ length: 5 }, () =>
      c.post(`${orderPath(sale.id)}actions`, { action: 'refund', amount: '1000', token: token() }),
    );
    const api = Array.from({ length: 5 }, () => t.api('POST', `/v1/orders/${sale.id}/refunds/`, { amount: 1000, description: 'api' }));
    sent = Promise.all([...portal, ...api]);
    // every refund reserved its amount and is at the acquirer together
    await eventually(async () => assert.equal(acquirer.gate.waiting, 10), 30_000);
  } finally {
    acquirer.gate.open();
  }
  const results = await sent;
  assert.deepEqual(
    results.map((r) => r.status),
    [303, 303, 303, 303, 303, 201, 201, 201, 201, 201],
    results.map((r) => r.text.slice(0, 200)).join('\n'),
  );
  assert.equal((await txnOf(sale.id)).refunded_amount, 10_000);
  const more = await t.api('POST', `/v1/orders/${sale.id}/refunds/`, { amount: 1 });
  assert.equal(more.status, 422, more.text);
  assert.deepEqual((await checkLedger(t.db, t.project.project_id)).violations, []);
});
