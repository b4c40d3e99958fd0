import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { eventually } from '../helpers/money.ts';

/**
 * A slow acquirer holds no database connection and no lock (issue 29): while 20 payments on the
 * slow test card wait for their authorization, a normal payment of the same project and a capture
 * of another order complete, on a pool of 5 connections. The slow card answers after 20 s here
 * (10 s in the sandbox) so that "still in flight" holds on a loaded machine too; nothing is timed.
 */
const SLOW = '4000000000001018';
const IN_FLIGHT = 20;
let t: TestService;
before(async () => {
  t = await startTestService({
    pool: { size: 5 },
    config: { acquirer: { timeoutMs: 60_000, recoveryMs: 65_000, simSlowMs: 20_000, simSettleMs: 3000 } },
  });
});
after(async () => t?.close());

const inFlight = async () =>
  (
    await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM acquirer_attempts WHERE kind = 'authorization' AND status = 'processing'",
    )
  )[0].n;

test(`${IN_FLIGHT} payments on the slow card in flight: a normal payment and a capture of another order still complete`, async () => {
  const held = await payOrder(t, {}, { capture_mode: 'manual' });
  let slowDone = 0;
  const slow = Array.from({ length: IN_FLIGHT }, () => payOrder(t, {}, { pan: SLOW }).finally(() => slowDone++));
  await eventually(async () => assert.equal(await inFlight(), IN_FLIGHT), 60_000);

  const [paid, capture] = await Promise.all([
    payOrder(t, {}),
    t.api('POST', `/v1/orders/${held.id}/transactions/${held.transactions[0].id}/captures/`),
  ]);
  assert.equal(paid.status, 'completed');
  assert.equal(paid.transactions[0].status, 'accepted');
  assert.equal(capture.status, 201, capture.text);
  assert.equal(capture.body.status, 'completed');
  // ... while every slow one is still waiting for its acquirer
  assert.equal(slowDone, 0, 'no slow payment had its answer yet');
  assert.equal(await inFlight(), IN_FLIGHT);

  const orders = await Promise.all(slow);
  for (const o of orders) assert.equal(o.status, 'completed');
  assert.equal(await inFlight(), 0);
});
