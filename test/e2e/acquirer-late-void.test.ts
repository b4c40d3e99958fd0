// A partial void whose answer is lost, then the capture of the rest: the void is settled by the
// recovery job after the capture closed the authorization (found by test/e2e/acquirer-chaos.test.ts).
// Accepted late, it is counted (voided_amount); refused late, the hold it reserved is released,
// also when the capture's own answer came later still (the capture releases what nothing takes).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createSimulator } from '../../src/acquirer/simulator/index.ts';
import { withFaults, type Fault } from '../../src/acquirer/faults.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';

const started: TestService[] = [];
after(() => Promise.all(started.map((s) => s.close())));

for (const [fault, captureFault, acquirerSays] of [
  ['lost_answer', 'none', 'accepted, settled after the capture of the rest'],
  ['error', 'none', 'never saw, settled after the capture of the rest'],
  ['error', 'lost_answer', 'never saw, settled before the capture of the rest (its answer lost too)'],
] as const) {
  test(`a partial void the acquirer ${acquirerSays}: the ledger check passes`, async () => {
    // a capture whose answer is lost is not answered its first inquiry either: its recovery comes after the void's
    const captures = new Set<string>();
    const inquired = new Set<string>();
    const acquirer = withFaults(createSimulator({ settleMs: 0 }), {
      rule: (c): Fault => {
        if (c.method === 'void') return fault;
        if (c.method === 'capture') return captures.add(c.operation_id) && captureFault;
        if (c.method === 'inquire' && captures.has(c.operation_id) && !inquired.has(c.operation_id))
          return inquired.add(c.operation_id) && 'error';
        return 'none';
      },
    });
    const t = await startTestService({ testConnector: acquirer, env: { TENDER_WORKER: 'off' } });
    started.push(t);
    const o = await payOrder(t, { amount: 2000 }, { capture_mode: 'manual' });
    const txnPath = `/v1/orders/${o.id}/transactions/${o.transactions[0].id}`;
    const part = await t.api('POST', `${txnPath}/voids/amount/`, { amount: 500, description: 'part' });
    assert.equal(part.status, 201, part.text);
    assert.equal(part.body.status, 'processing');
    const capture = await t.api('POST', `${txnPath}/captures/`);
    assert.equal(capture.status, 201, capture.text);
    assert.equal(capture.body.amount, 1500, 'the capture takes what the void in flight leaves');
    assert.equal(capture.body.status, captureFault === 'none' ? 'completed' : 'processing');
    for (let round = 0; round < 2; round++) {
      const ran = await t.api('POST', '/v1/test/clock/run-due-jobs/', { advance: 'PT1H' });
      assert.equal(ran.status, 200, ran.text);
    }
    const [txn] = await t.db.query<{ status: string; captured_amount: number; voided_amount: number }>(
      'SELECT status, captured_amount, voided_amount FROM transactions WHERE id = $1',
      [o.transactions[0].id],
    );
    assert.deepEqual(
      { ...txn, captured_amount: Number(txn.captured_amount), voided_amount: Number(txn.voided_amount) },
      { status: 'completed', captured_amount: 1500, voided_amount: fault === 'lost_answer' ? 500 : 0 },
    );
    const voidOrder = await t.api('GET', `/v1/orders/${part.body.id}/`);
    assert.equal(voidOrder.body.status, fault === 'lost_answer' ? 'completed' : 'error');
    assert.deepEqual((await checkLedger(t.db)).violations, []);
  });
}
