import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator, SIMULATOR_CAPABILITIES } from '../../src/acquirer/simulator/index.ts';
import { withFaults } from '../../src/acquirer/faults.ts';
import { remoteConnector } from '../../src/acquirer/remote.ts';
import { serveConnector } from '../helpers/acquirer-server.ts';
import { connectorConformance } from '../helpers/conformance.ts';
import { createCardOrder, futureExpiry, vault } from '../helpers/cards.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { compareWithAcquirer } from '../helpers/acquirer-truth.ts';
import { advanceTestClock } from '../../src/services/platform/tenancy.ts';
import { sweepDueRecoveries } from '../../src/services/payments/attempts/inquiry.ts';

// The simulator passes the connector conformance kit (test/helpers/conformance.ts), in process and
// over loopback HTTP (src/acquirer/remote.ts, the acquirer of a service in another process).
const card = { pan: '4111111111111111', expiry: futureExpiry(), brand: 'visa' };
connectorConformance({ name: 'simulator', make: () => createSimulator({ settleMs: 0 }), card });
const remote = serveConnector(createSimulator({ settleMs: 0 }));
connectorConformance({ name: 'simulator over loopback HTTP', make: async () => remoteConnector((await remote).url, 5000), card });

const started: TestService[] = [];
after(async () => {
  await Promise.all(started.map((s) => s.close()));
  await (await remote).close();
});
const start = async (opts: Parameters<typeof startTestService>[0]) => {
  const s = await startTestService(opts);
  started.push(s);
  return s;
};

test('what the project connector cannot do is refused with a clear error before any call', async () => {
  const sim = createSimulator();
  const limited = { ...sim, capabilities: { ...SIMULATOR_CAPABILITIES, void: false, partial_refund: false } };
  const t = await start({ testConnector: limited });
  const held = await payOrder(t, {}, { capture_mode: 'manual' });
  const txnPath = `/v1/orders/${held.id}/transactions/${held.transactions[0].id}`;
  const before = sim.operations.size;
  const voided = await t.api('POST', `${txnPath}/voids/`);
  assert.equal(voided.status, 409, voided.text);
  assert.match(voided.body.error.value, /cannot void/);
  const sale = await payOrder(t, {});
  const part = await t.api('POST', `/v1/orders/${sale.id}/refunds/`, { amount: 100 });
  assert.equal(part.status, 422, part.text);
  assert.match(part.body.error.value, /refunds only the whole captured amount/);
  assert.equal(sim.operations.size, before + 1, 'only the sale went to the acquirer');
  const [{ n }] = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM acquirer_attempts WHERE kind IN ('void', 'refund')");
  assert.equal(n, 0, 'no attempt recorded for a refused operation');
});

test('through lost answers, duplicates and errors Tender records what the acquirer did, once, and recovers every attempt', async () => {
  const acquirer = withFaults(createSimulator({ settleMs: 0 }), {
    probability: { error: 0.1, lost_answer: 0.2, duplicate: 0.2, delay: 0.2 },
    delayMs: 5,
    seed: 29,
    methods: ['authorize', 'capture', 'void', 'refund'],
  });
  const t = await start({ testConnector: acquirer, env: { TENDER_WORKER: 'off' } });
  const ops: Promise<unknown>[] = [];
  for (let i = 0; i < 8; i++) {
    ops.push(
      payOrder(t, {}, { capture_mode: 'manual' }).then((o) =>
        t.api('POST', `/v1/orders/${o.id}/transactions/${o.transactions[0].id}/captures/`),
      ),
    );
    ops.push(
      payOrder(t, {}, { capture_mode: 'manual' }).then((o) =>
        t.api('POST', `/v1/orders/${o.id}/transactions/${o.transactions[0].id}/voids/amount/`, { amount: 500, description: 'part' }),
      ),
    );
    ops.push(payOrder(t, {}).then((o) => Promise.all([1, 2].map(() => t.api('POST', `/v1/orders/${o.id}/refunds/`, { amount: 300 })))));
  }
  await Promise.all(ops);
  // recovery: the attempts' jobs, reached by advancing the project's clock past ACQUIRER_RECOVERY_MS
  for (let round = 0; round < 5; round++) {
    const [{ n }] = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM acquirer_attempts WHERE status IN ('processing', 'unknown')",
    );
    if (!n) break;
    await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT1H' });
  }
  const truth = await compareWithAcquirer(t.db, acquirer.acquirer);
  const operations = Object.values(truth.attempts).reduce((n, x) => n + x, 0);
  assert.ok(operations >= 40, `${operations} attempts`);
  assert.ok(
    acquirer.injected.lost_answer > 0 && acquirer.injected.duplicate > 0 && acquirer.injected.error > 0,
    JSON.stringify(acquirer.injected),
  );
  // nothing left in flight; every operation the acquirer did is known to Tender and recorded as it
  // ended there (succeeded exactly when accepted and not reversed), with its amount; each payment's
  // counters are the money the acquirer moved
  assert.deepEqual(truth.violations, []);
  const report = await checkLedger(t.db);
  assert.deepEqual(report.violations, []);
});

/** The simulator, its 3-D Secure server unreachable while `down`. */
function flakyLookups() {
  const sim = createSimulator();
  const state = {
    down: true,
    connector: {
      ...sim,
      authenticate3ds: async (req: Parameters<typeof sim.authenticate3ds>[0]) => {
        if (state.down) throw new Error('the 3-D Secure server is unreachable');
        return sim.authenticate3ds(req);
      },
    },
  };
  return state;
}

/** A service on flakyLookups, and a new card transaction of it with its card stored, to authenticate at `path`. */
async function startUnreachable() {
  const server = flakyLookups();
  const t = await start({ testConnector: server.connector });
  const { order, txn, setup_token } = await createCardOrder(t);
  const stored = await vault(t, { pan: '4111111111111111', expiry: futureExpiry(), setup_token });
  return { server, t, order, txn, stored, path: `/v1/orders/${order.id}/transactions/${txn.id}/authenticate/` };
}

test('a 3-D Secure lookup without an answer is an attempt that failed: nothing starts, and the transaction can be authenticated again', async () => {
  const { server, t, order, txn, path, stored } = await startUnreachable();
  const first = await t.api('POST', path, { vault_token: stored.body.vault_token, cvc: '123' });
  assert.equal(first.status, 502, first.text);
  assert.equal(first.body.error.type, 'FailedToFetchTransactionInformation');
  const attempts = () =>
    t.db.query<{ id: string; status: string; error: string | null; project_id: string }>(
      "SELECT id, status, error, project_id FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'three_ds' ORDER BY created, id",
      [txn.id],
    );
  const [failed] = await attempts();
  assert.equal(failed.status, 'failed');
  assert.match(failed.error ?? '', /unreachable/);
  // settled: once its recovery time has come, the sweep still passes it over
  await advanceTestClock(t.svc.ctx, failed.project_id, t.config.acquirer.recoveryMs + 1000);
  assert.equal(await sweepDueRecoveries(t.svc.ctx, 100, failed.project_id), 0, 'a settled lookup is not swept');
  const jobs = await t.db.query("SELECT 1 FROM jobs WHERE kind = 'acquirer_recovery' AND ref_id = $1", [failed.id]);
  assert.equal(jobs.length, 0, 'a settled lookup gets no recovery job');
  const still = (await t.api('GET', `/v1/orders/${order.id}/`)).body;
  assert.equal(still.transactions[0].status, 'new');
  const [{ n }] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM card_authentications WHERE transaction_id = $1', [
    txn.id,
  ]);
  assert.equal(n, 0, 'no 3-D Secure row without an answer');
  server.down = false;
  const again = await t.api('POST', path, { vault_token: stored.body.vault_token, cvc: '123' });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(
    (await attempts()).map((a) => a.status),
    ['failed', 'succeeded'],
  );
  assert.equal((await t.api('GET', `/v1/orders/${order.id}/`)).body.transactions[0].status, 'pending');
});

test('the retry of an unanswered lookup with the same Idempotency-Key asks again: 502 while the server is down, then 200', async () => {
  const { server, t, order, txn, path, stored } = await startUnreachable();
  const send = () =>
    t.api('POST', path, { vault_token: stored.body.vault_token, cvc: '123' }, { headers: { 'idempotency-key': 'start-once-1' } });
  // a 5xx is not kept for the key: the retry runs, finds the key's lookup unanswered, and asks again
  assert.equal((await send()).status, 502);
  assert.equal((await send()).status, 502);
  server.down = false;
  const ok = await send();
  assert.equal(ok.status, 200, ok.text);
  const statuses = await t.db.query<{ status: string }>(
    "SELECT status FROM acquirer_attempts WHERE transaction_id = $1 AND kind = 'three_ds' ORDER BY created, id",
    [txn.id],
  );
  assert.deepEqual(statuses.map((a) => a.status).sort(), ['failed', 'failed', 'succeeded']);
  assert.equal((await t.api('GET', `/v1/orders/${order.id}/`)).body.transactions[0].status, 'pending');
  // answered now, the key replays its 200 and asks nothing more
  const replay = await send();
  assert.equal(replay.status, 200);
  assert.deepEqual(replay.body, ok.body);
  assert.equal((await t.db.query('SELECT 1 FROM acquirer_attempts WHERE transaction_id = $1', [txn.id])).length, 3);
});
