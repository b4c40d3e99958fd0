import assert from 'node:assert/strict';
import type { TestService } from './service.ts';
import { payOrder } from './pay.ts';
import { checkLedger } from '../../src/services/payments/ledger-check.ts';
import type { Json } from './json.ts';

type Key = { key?: string };

/**
 * The money calls of the API as a client makes them, on the service `svc()` returns (read at
 * call time, so a test file can declare them before its `before` starts the service).
 */
export function moneyClient(svc: () => TestService) {
  const txnPath = (o: Json) => `/v1/orders/${o.id}/transactions/${o.transactions[0].id}`;
  return {
    txnPath,
    capture: (o: Json, k: Key = {}) => svc().api('POST', `${txnPath(o)}/captures/`, undefined, k),
    voidAll: (o: Json, k: Key = {}) => svc().api('POST', `${txnPath(o)}/voids/`, undefined, k),
    voidPart: (o: Json, amount: number, k: Key = {}) =>
      svc().api('POST', `${txnPath(o)}/voids/amount/`, { amount, description: 'one mug less' }, k),
    refund: (o: Json, amount: number, k: Key = {}) =>
      svc().api('POST', `/v1/orders/${o.id}/refunds/`, { amount, description: 'returned' }, k),
    get: async (id: string, k: Key = {}) => (await svc().api('GET', `/v1/orders/${id}/`, undefined, k)).body,
    runJobs: (advance: string, key: string) => svc().api('POST', '/v1/test/clock/run-due-jobs/', { advance }, { key }),
    preauth: (mode: 'manual' | 'delayed' = 'manual', k: Key = {}) => payOrder(svc(), {}, { capture_mode: mode, key: k.key }),
    sale: (k: Key = {}) => payOrder(svc(), {}, { key: k.key }),
    async ledgerSound(projectId = svc().project.project_id) {
      const r = await checkLedger(svc().db, projectId);
      assert.deepEqual(r.violations, []);
    },
  };
}

/**
 * The background worker may claim a due job a moment before run-due-jobs does; what the job
 * does is then visible a moment later. Retries the assertion for a few seconds.
 */
export async function eventually(fn: () => Promise<void>, ms = 8000) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export function expectError(res: { status: number; body: Json; text: string }, status: number, type: string) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.error.type, type, res.text);
  assert.equal(res.body.error.status, status);
}
