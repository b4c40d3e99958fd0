import assert from 'node:assert/strict';
import type { Db } from '../../src/store/db/db.ts';
import { startTestService, type ApiResponse, type TestService } from './service.ts';

export interface Expect {
  status?: number;
  type?: string;
  /** the `field` the error names; null when the error concerns the whole body */
  field: string | null;
}

/** Rows a rejected request must not have added, in every project. */
export async function stored(db: Db) {
  const [r] = await db.query<{ orders: number; transactions: number; events: number; jobs: number; attempts: number }>(
    `SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM transactions) AS transactions,
            (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM jobs) AS jobs,
            (SELECT count(*)::int FROM acquirer_attempts) AS attempts`,
  );
  return r;
}

/** Makes the call and checks it is refused with the expected error body, and stored nothing. */
export async function expectRejectedIn(db: Db, call: () => Promise<ApiResponse>, e: Expect) {
  const status = e.status ?? 400;
  const type = e.type ?? 'ValidationError';
  const before = await stored(db);
  const res = await call();
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers.get('content-type')?.split(';')[0], 'application/json');
  assert.equal(res.body.error.status, status, res.text);
  assert.equal(res.body.error.type, type, res.text);
  assert.equal(typeof res.body.error.value, 'string');
  assert.ok(res.body.error.value.length > 0);
  if (e.field === null) assert.equal(res.body.error.field, undefined, res.text);
  else assert.equal(res.body.error.field, e.field, res.text);
  assert.deepEqual(await stored(db), before, 'a rejected request stored nothing');
  return res;
}

/** A test project whose settings deactivate wallet-a-pay and limit credit-card to EUR. */
export async function limitedProject(t: TestService) {
  const limited = await t.newProject('test');
  const [row] = await t.db.query<{ settings: { payment_methods: Record<string, unknown> } }>(
    'SELECT settings FROM projects WHERE id = $1',
    [limited.project_id],
  );
  const settings = row.settings;
  delete settings.payment_methods['wallet-a-pay'];
  settings.payment_methods['credit-card'] = { currencies: ['EUR'] };
  await t.db.query('UPDATE projects SET settings = $2 WHERE id = $1', [limited.project_id, JSON.stringify(settings)]);
  return limited;
}

/** The service of the orders API tests, with a second, limited project. */
export async function ordersService() {
  const t = await startTestService();
  return { t, limited: await limitedProject(t) };
}
