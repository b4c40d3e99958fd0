import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { basic, startTestService, validOrder, type TestService } from './service.ts';
import type { Db } from '../../src/store/db/db.ts';
import { payOrder } from './pay.ts';
import { seedOrders, type SeedResult } from '../../src/services/platform/seed.ts';
import type { Json } from './json.ts';

/** The example orders the search e2e files query, on a service of their own. */
export interface SearchFixture {
  t: TestService;
  /** project A (the service's own): a dozen orders made through the API, by name (a1, r1, ...); o.link a payment link id */
  o: Record<string, Json>;
  /** project B: 25,000+ seeded orders */
  B: { project_id: string; api_key: string };
  seeded: SeedResult;
}

const customer = (email: string | undefined, id: string) => {
  const c: Record<string, unknown> = { ...validOrder().customer, merchant_customer_id: id, email_address: email };
  if (email === undefined) delete c.email_address;
  return c;
};

/** Starts the service and makes the example orders of both projects; closes the service if that fails. */
export async function startSearchService(): Promise<SearchFixture> {
  // many reports of one project one after another, each abandoned: no per-project report limit here (fair-shares.test.ts has it)
  const t = await startTestService({ env: { REPORT_CONCURRENCY_PER_PROJECT: '0' } });
  try {
    return { t, ...(await exampleOrders(t)) };
  } catch (err) {
    await t.close();
    throw err;
  }
}

async function exampleOrders(t: TestService) {
  const o: Record<string, Json> = {};
  const txnPath = (x: Json) => `/v1/orders/${x.id}/transactions/${x.transactions[0].id}`;
  const ok = (res: { status: number; text: string }, status = 201) => assert.equal(res.status, status, res.text);
  o.a1 = await payOrder(t, {
    merchant_order_id: 'ORD-A-1',
    description: 'Gift card for Ada',
    currency: 'EUR',
    amount: 1234,
    customer: customer('ada@example.com', 'c-1'),
  });
  o.a2 = await payOrder(
    t,
    { merchant_order_id: 'ORD-A-2', description: 'Tea set', currency: 'JPY', amount: 1234, customer: customer('Grace@Example.COM', 'c-2') },
    { pan: '5555555555554444' },
  );
  o.a3 = await payOrder(
    t,
    { merchant_order_id: 'ORD-B-3', description: 'Two mugs', currency: 'KWD', amount: 1234, customer: customer('alan@example.com', 'c-3') },
    { capture_mode: 'manual' },
  );
  o.a4 = await payOrder(
    t,
    { merchant_order_id: 'ORD-B-4', description: 'Desk lamp', currency: 'EUR', amount: 5000, customer: customer('ada@example.com', 'c-1') },
    { capture_mode: 'manual' },
  );
  o.a5 = await payOrder(
    t,
    {
      merchant_order_id: 'ORD-C-5',
      description: 'Concert tickets',
      currency: 'USD',
      amount: 999,
      customer: customer('ken@example.com', 'c-5'),
    },
    { pan: '4000000000000002' },
  );
  const a6 = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({
      merchant_order_id: 'X 4',
      description: 'Say "hi" now',
      currency: 'EUR',
      amount: 250,
      customer: customer(undefined, 'c-6'),
    }),
  );
  ok(a6);
  const a7 = await t.api(
    'POST',
    '/v1/orders/',
    validOrder({
      merchant_order_id: undefined,
      description: undefined,
      currency: 'GBP',
      amount: 100,
      customer: customer('zed@example.com', 'c-7'),
    }),
  );
  ok(a7);
  ok(await t.api('DELETE', `/v1/orders/${a7.body.id}/`), 200);
  o.a8 = await payOrder(
    t,
    {
      merchant_order_id: 'ORD-C-8',
      description: 'Running shoes',
      currency: 'EUR',
      amount: 2000,
      customer: customer('ada@example.com', 'c-8'),
    },
    { pan: '378282246310005' },
  );
  o.a9 = await payOrder(t, {
    merchant_order_id: 'ORD-C-9',
    description: 'Coffee',
    currency: 'EUR',
    amount: 1500,
    customer: customer('bob@example.com', 'c-9'),
  });
  const r1 = await t.api('POST', `/v1/orders/${o.a1.id}/refunds/`, { amount: 400, description: 'returned' });
  ok(r1);
  const c3 = await t.api('POST', `${txnPath(o.a3)}/captures/`);
  ok(c3);
  const v4 = await t.api('POST', `${txnPath(o.a4)}/voids/amount/`, { amount: 1500, description: 'partial release' });
  ok(v4);
  const cb8 = await t.api('POST', `/v1/test/orders/${o.a8.id}/chargeback/`, {});
  ok(cb8);
  ok(await t.api('POST', `/v1/test/orders/${o.a9.id}/settle/`, {}), 200);
  o.link = randomUUID();
  await t.db.query('UPDATE orders SET payment_link_id = $1 WHERE id = $2', [o.link, a6.body.id]);
  Object.assign(o, { a6: { id: a6.body.id }, a7: { id: a7.body.id }, r1: r1.body, c3: c3.body, v4: v4.body, cb8: cb8.body });
  for (const k of Object.keys(o)) if (k !== 'link') o[k] = (await t.api('GET', `/v1/orders/${o[k].id}/`)).body;

  const b = await t.newProject('test');
  const B = { project_id: b.project_id, api_key: b.api_key };
  // 21,000 payment orders and their capture, void, refund and chargeback orders: over 25,000
  const seeded = await seedOrders(t.svc.ctx, { projectId: B.project_id, orders: 21_000, batch: 7000 });
  return { o, B, seeded };
}

export const ALL_A = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'a9', 'r1', 'c3', 'v4', 'cb8'];

/** POST /v1/search/orders/ on the service `svc()` returns (read at call time, so a file can declare it before its `before`). */
export function searchOn(svc: () => TestService) {
  return (body: Record<string, unknown>, key?: string, qs = '') => svc().api('POST', `/v1/search/orders/${qs}`, body, { key });
}

export function expectError(res: { status: number; body: Json; text: string }, field: string, value: RegExp) {
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.error.type, 'ValidationError', res.text);
  assert.equal(res.body.error.status, 400);
  assert.equal(res.body.error.field, field, res.text);
  assert.match(res.body.error.value, value);
}

/** A CSV report as a client streams it: the response, its body not read yet. */
export function csvDownload(t: TestService, key: string, body: Record<string, unknown>, signal?: AbortSignal) {
  return fetch(`${t.url}/v1/search/orders/?format=csv`, {
    method: 'POST',
    headers: { authorization: basic(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });
}

/**
 * PostgreSQL: how many of this store's report connections are running a COPY now. A report
 * connection back in its pool shows its last COPY too, but idle; a parallel plan's workers show
 * the same query, but only client backends count.
 */
export async function runningCopies(db: Db): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND query LIKE 'COPY (%' AND state = 'active'
       AND application_name = 'tender-report ' || current_schema()`,
  );
  return n;
}
