import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { idempotencyKeyOf, type CardData, type Connector, type OperationRef } from '../../src/acquirer/connector.ts';
import { withFaults } from '../../src/acquirer/faults.ts';

/**
 * The connector conformance kit: what every connector must do for Tender's attempts (docs/money.md
 * "Acquirer attempts") to keep money right. Call it from a test file with a factory of the
 * connector under test (the simulator's: test/e2e/connector-conformance.test.ts; a live
 * connector's against its acquirer's test host). Each check makes its own operations.
 */
export interface ConformanceSubject {
  name: string;
  /** a fresh connector (each check takes one) */
  make(): Connector | Promise<Connector>;
  /** a card the acquirer approves without a challenge */
  card: CardData;
  currency?: string;
}

const ref = (amount: number, currency: string, id = randomUUID()): OperationRef => ({
  operation_id: id,
  idempotency_key: idempotencyKeyOf(id),
  project_id: '00000000-0000-4000-8000-000000000001',
  transaction_id: randomUUID(),
  amount,
  currency,
  now: new Date(),
});

export function connectorConformance(s: ConformanceSubject) {
  const currency = s.currency ?? 'EUR';
  const three = { trans_status: 'Y' as const, eci: '05', liability_shift: true };
  const authorize = async (c: Connector, capture: boolean, amount = 1000) => {
    const r = ref(amount, currency);
    const o = await c.authorize({ ...r, card: s.card, three_ds: three, capture });
    assert.equal(o.status, 'accepted', `${s.name}: authorization approved (${o.response_code} ${o.response_code_description})`);
    assert.ok(o.reference, 'an approved authorization has a reference for its follow-ups');
    return { r, reference: o.reference! };
  };

  test(`${s.name}: declares every capability`, async () => {
    const c = await s.make();
    for (const k of [
      'partial_capture',
      'multiple_captures',
      'partial_refund',
      'void',
      'three_ds',
      'late_answers',
      'notifications',
    ] as const)
      assert.equal(typeof c.capabilities[k], 'boolean', k);
    assert.equal(Boolean(c.notification), c.capabilities.notifications, 'notification() exactly when notifications are declared');
  });

  test(`${s.name}: the same operation id twice is one operation with one answer`, async () => {
    const c = await s.make();
    const r = ref(1200, currency);
    const a = await c.authorize({ ...r, card: s.card, three_ds: three, capture: true });
    const b = await c.authorize({ ...r, card: s.card, three_ds: three, capture: true });
    assert.equal(a.status, 'accepted');
    assert.deepEqual(b, a, 'a repeat answers what the first did');
    const auth = await authorize(c, false);
    const cap = ref(1000, currency);
    const first = await c.capture({ ...cap, reference: auth.reference });
    const again = await c.capture({ ...cap, reference: auth.reference });
    assert.equal(again.reference, first.reference, 'the capture was made once');
  });

  test(`${s.name}: pre-authorization, partial capture, void and partial refunds carry their own amounts`, async () => {
    const c = await s.make();
    const held = await authorize(c, false);
    const captured = await c.capture({ ...ref(c.capabilities.partial_capture ? 600 : 1000, currency), reference: held.reference });
    assert.ok(['accepted', 'processing'].includes(captured.status), captured.response_code_description);
    if (c.capabilities.void) {
      const other = await authorize(c, false);
      const voided = await c.void({ ...ref(1000, currency), reference: other.reference });
      assert.equal(voided.status, 'accepted', voided.response_code_description);
    }
    const sale = await authorize(c, true);
    const parts = c.capabilities.partial_refund ? [300, 200] : [1000];
    const refs = new Set<string>();
    for (const amount of parts) {
      const r = await c.refund({ ...ref(amount, currency), reference: sale.reference });
      assert.ok(['accepted', 'processing'].includes(r.status), r.response_code_description);
      if (r.reference) refs.add(r.reference);
    }
    assert.equal(refs.size, parts.length, 'each refund is its own operation at the acquirer');
  });

  test(`${s.name}: an answer lost on the way is found by inquiry; an operation never sent is not_found`, async () => {
    const inner = await s.make();
    let lose = true;
    const c = withFaults(inner, { rule: (call) => (call.method === 'authorize' && lose ? 'lost_answer' : 'none') });
    const r = ref(900, currency);
    await assert.rejects(c.authorize({ ...r, card: s.card, three_ds: three, capture: true }));
    lose = false;
    const asked = await c.inquire({
      operation_id: r.operation_id,
      idempotency_key: r.idempotency_key,
      kind: 'authorization',
      project_id: r.project_id,
      now: new Date(),
    });
    assert.equal(asked.status, 'accepted', 'the acquirer did it: inquiry says so');
    assert.equal(c.acquirer.get(r.operation_id)?.calls, 1, 'one authorization at the acquirer');
    const never = ref(900, currency);
    const none = await inner.inquire({
      operation_id: never.operation_id,
      idempotency_key: never.idempotency_key,
      kind: 'capture',
      project_id: never.project_id,
      now: new Date(),
    });
    assert.equal(none.status, 'not_found');
  });

  test(`${s.name}: an authorization whose answer was lost can be reversed`, async () => {
    const inner = await s.make();
    const c = withFaults(inner, { rule: (call) => (call.method === 'authorize' ? 'lost_answer' : 'none') });
    const r = ref(700, currency);
    await assert.rejects(c.authorize({ ...r, card: s.card, three_ds: three, capture: true }));
    const rev = ref(700, currency);
    const o = await c.reverse({ ...rev, original_operation_id: r.operation_id });
    assert.equal(o.status, 'accepted', o.response_code_description);
    assert.equal(c.acquirer.get(r.operation_id)?.reversed, true);
    const again = await c.reverse({ ...rev, original_operation_id: r.operation_id });
    assert.deepEqual(again, o, 'the reversal too is one operation per id');
  });
}
