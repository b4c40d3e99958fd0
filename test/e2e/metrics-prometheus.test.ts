// Debian's prometheus scrapes a running Tender (METRICS_PORT) every second while card payments,
// declines, a pre-authorization with its capture, a void, a refund, a chargeback and a failing
// webhook go through; each metric family is then read back through Prometheus's HTTP API.
// Both stores (PGlite by default, PostgreSQL with DATABASE_URL).
import { test, before, after } from 'node:test';
import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/service.ts';
import { payOrder } from '../helpers/pay.ts';
import { freePort } from '../helpers/cli.ts';
import { startPrometheus, type Prometheus } from '../helpers/prometheus.ts';
import { jobGauges } from '../../src/store/platform/job-gauges.ts';
import { isPaymentMethod } from '../../src/domain/payment-methods.ts';
import { spawnSync } from 'node:child_process';

let t: TestService;
let prom: Prometheus;
let metricsPort: number;
const logs: Array<{ level: number; msg: string; operation?: string; outcome?: string }> = [];
const closedPort = await freePort(); // nothing listens there: every webhook attempt fails

before(async () => {
  metricsPort = await freePort();
  t = await startTestService({
    logStream: new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l) logs.push(JSON.parse(l) as { level: number; msg: string });
        done();
      },
    }),
    env: {
      LATE_DECLINE_MS: '1000',
      METRICS_PORT: String(metricsPort),
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_INTERVAL_MS: '600000',
      WEBHOOK_MAX_ATTEMPTS: '3',
    },
  });
  prom = await startPrometheus([`127.0.0.1:${metricsPort}`]);
});
after(async () => {
  await prom?.stop();
  await t?.close();
});

const txnPath = (o: { id: string; transactions: Array<{ id: string }> }) => `/v1/orders/${o.id}/transactions/${o.transactions[0].id}`;

test('/metrics is on its own port and loopback only, not on the API port', async () => {
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  assert.equal((await fetch(`${t.url}/metrics`)).status, 404);
  assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status, 404);
});

test('every metric family moves as payments, declines, operations and a failing webhook go through', { timeout: 180_000 }, async () => {
  await prom.until('up{job="tender"}', (v) => v === 1, 'prometheus scrapes tender');

  // two sales (one EUR 19.95, one EUR 5.00), two declines, a failing webhook on the first
  const sale = await payOrder(t, { amount: 1995, webhook_url: `http://127.0.0.1:${closedPort}/hook` });
  assert.equal(sale.status, 'completed');
  assert.equal((await payOrder(t, { amount: 500 })).status, 'completed');
  assert.equal((await payOrder(t, {}, { pan: '4000000000000002' })).status, 'error');
  assert.equal((await payOrder(t, {}, { pan: '4000000000009995' })).status, 'error');
  // the acquirer answers error (processing_error)
  assert.equal((await payOrder(t, {}, { pan: '4000000000000119' })).status, 'error');
  // an unknown outcome (processing), which the late-decline job then settles through an inquiry
  assert.equal((await payOrder(t, {}, { pan: '4000000000000341' })).status, 'processing');
  // a pre-authorization captured, another voided
  const held = await payOrder(t, { amount: 700 }, { capture_mode: 'manual' });
  assert.equal((await t.api('POST', `${txnPath(held)}/captures/`, {})).status, 201);
  const voided = await payOrder(t, { amount: 300 }, { capture_mode: 'manual' });
  assert.equal((await t.api('POST', `${txnPath(voided)}/voids/`, {})).status, 201);
  // a refund and a chargeback of the first sale
  assert.equal((await t.api('POST', `/v1/orders/${sale.id}/refunds/`, { amount: 495, description: 'one mug back' })).status, 201);
  assert.equal((await t.api('POST', `/v1/test/orders/${sale.id}/chargeback/`, { amount: 1000 })).status, 201);

  // HTTP: by surface, route pattern (never an id), method, status class
  await prom.until('tender_http_requests_total{surface="api",route="/v1/orders/",method="POST",status_class="2xx"}', (v) => v >= 6);
  await prom.until('sum(tender_http_requests_total{surface="vault",method="POST"})', (v) => v >= 6);
  await prom.until('sum(tender_http_requests_total{surface="pay"})', (v) => v >= 6);
  await prom.until('sum(tender_http_request_duration_seconds_count{surface="api"})', (v) => v >= 10);
  const routes = await prom.samples('tender_http_requests_total');
  for (const s of routes) assert.doesNotMatch(s.metric.route, /[0-9a-f]{8}-[0-9a-f]{4}/, `a route label holds an id: ${s.metric.route}`);

  // payments: authorizations by outcome and reason, the rate, orders by kind, money by currency
  await prom.until('sum(tender_authorizations_total{connector="simulator",outcome="accepted"})', (v) => v === 4);
  await prom.until('tender_authorizations_total{outcome="declined",reason="declined"}', (v) => v === 1);
  await prom.until('tender_authorizations_total{outcome="declined",reason="insufficient_funds"}', (v) => v === 1);
  await prom.until('tender_authorizations_total{outcome="error",reason="processing_error"}', (v) => v === 1);
  await prom.until(
    'sum(tender_authorizations_total{outcome="accepted"}) / sum(tender_authorizations_total{outcome!="processing"})',
    (v) => Math.abs(v - 4 / 7) < 1e-9, // 4 accepted, 2 declined, 1 error; processing left out
    'the authorization rate',
  );
  // by mode and payment method: a test project's traffic is told apart from live money
  await prom.until('sum(tender_authorizations_total{mode="test",method="credit-card",outcome="accepted"})', (v) => v === 4);
  await prom.until('tender_orders_total{mode="test",method="credit-card",kind="payment",status="completed"}', (v) => v === 4);
  await prom.until('tender_order_amount_minor_total{mode="test",method="credit-card",kind="refund",currency="EUR"}', (v) => v === 495);
  await prom.until(
    'tender_acquirer_calls_total{mode="test",connector="simulator",operation="authorize",outcome="accepted"}',
    (v) => v === 4,
  );
  assert.equal(await prom.value('count(tender_authorizations_total{mode="live"})'), undefined, 'no live series from test payments');
  for (const family of ['tender_authorizations_total', 'tender_orders_total', 'tender_order_amount_minor_total'])
    for (const { metric } of await prom.samples(family)) {
      assert.ok(['test', 'live'].includes(metric.mode), `${family} mode=${metric.mode}`);
      assert.ok(isPaymentMethod(metric.method) || ['none', 'other'].includes(metric.method), `${family} method=${metric.method}`);
    }
  // exact counts: a status change is counted once, whichever path wrote it (one statement or the general one)
  await prom.until('tender_orders_total{kind="payment",status="completed"}', (v) => v === 4); // 2 sales, 2 pre-authorizations
  await prom.until('tender_orders_total{kind="payment",status="processing"}', (v) => v === 8, 'every card payment passes processing once');
  // two declines, the error answer, and the processing one once its late decline comes
  await prom.until('tender_orders_total{kind="payment",status="error"}', (v) => v === 4);
  for (const kind of ['capture', 'void', 'refund', 'chargeback'])
    await prom.until(`tender_orders_total{kind="${kind}",status="completed"}`, (v) => v === 1, `one ${kind} completed`);
  await prom.until('tender_order_amount_minor_total{kind="payment",currency="EUR"}', (v) => v === 1995 + 500 + 700 + 300);
  await prom.until('tender_order_amount_minor_total{kind="refund",currency="EUR"}', (v) => v === 495);

  // acquirer: calls by connector, operation, outcome; latency; in flight back at 0
  await prom.until('tender_acquirer_calls_total{connector="simulator",operation="authorize",outcome="accepted"}', (v) => v === 4);
  await prom.until('tender_acquirer_calls_total{connector="simulator",operation="refund",outcome="accepted"}', (v) => v === 1);
  await prom.until('sum(tender_acquirer_call_duration_seconds_count{operation="authenticate3ds"})', (v) => v >= 6);
  await prom.until('tender_acquirer_calls_total{connector="simulator",operation="authorize",outcome="error"}', (v) => v === 1);
  await prom.until('tender_acquirer_in_flight{connector="simulator"}', (v) => v === 0);
  await prom.until('tender_acquirer_unknown_outcomes_total{connector="simulator"}', (v) => v === 1);
  await prom.until('tender_acquirer_recoveries_total{connector="simulator",outcome="declined"}', (v) => v === 1, 'the inquiry settles it');
  // an acquirer error and a failed webhook attempt are warnings in the log
  const warned = logs.filter((l) => l.level === 40).map((l) => l.msg);
  assert.ok(warned.includes('acquirer call failed'), warned.join(', '));
  assert.ok(
    logs.some((l) => l.msg === 'acquirer call failed' && l.operation === 'authorize' && l.outcome === 'error'),
    'the warning names the operation and outcome',
  );

  // webhooks: the failing one's attempt counted as a retry, left in the backlog, which ages
  await prom.until('tender_webhook_attempts_total{outcome="retry"}', (v) => v >= 1);
  await prom.until('tender_webhook_attempt_duration_seconds_count', (v) => v >= 1);
  await prom.until('tender_webhook_backlog', (v) => v >= 1);
  await prom.until('tender_webhook_backlog_oldest_seconds', (v) => v > 0);
  assert.ok(
    logs.some((l) => l.msg === 'webhook attempt failed' && l.level === 40),
    'a failed webhook attempt is a warning',
  );

  // jobs: every kind has its series; the failing delivery's job waits for its retry (not due)
  await prom.until('count(tender_jobs_due)', (v) => v >= 9, 'a tender_jobs_due series per kind');
  await prom.until('tender_jobs_lag_seconds{kind="deliver_webhook"}', (v) => v === 0);
  await prom.until('count(tender_jobs_running)', (v) => v >= 9);

  // the database and the process
  const store = t.db.kind;
  await prom.until(`sum(tender_db_query_duration_seconds_count{store="${store}",statement="select"})`, (v) => v > 10);
  await prom.until(`sum(tender_db_query_duration_seconds_count{store="${store}",statement="insert"})`, (v) => v > 5);
  if (store === 'postgres') {
    await prom.until('tender_db_pool_max', (v) => v > 0);
    await prom.until('tender_db_pool_in_use', (v) => v >= 0);
    await prom.until('tender_db_pool_waiting', (v) => v === 0);
  }
  await prom.until('tender_ready', (v) => v === 1);
  await prom.until('process_resident_memory_bytes', (v) => v > 0);
  await prom.until('nodejs_eventloop_lag_seconds', (v) => v >= 0);
  await prom.until('tender_metrics_collect_errors_total', (v) => v === 0);
});

test('promtool check metrics passes on /metrics (names, types, help, units)', async () => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  assert.match(text, /^tender_authorizations_total\{/m, 'payments were counted before the check');
  const checked = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(checked.status, 0, `promtool check metrics:\n${checked.stdout}${checked.stderr}`);
});

test('the job gauges: a due job not taken counts with its lag, a leased one as running', async () => {
  const [p] = await t.db.query<{ id: string }>('SELECT id FROM projects WHERE id = $1', [t.project.project_id]);
  // kinds no worker knows, so the running worker never takes them
  await t.db.query(
    `INSERT INTO jobs (project_id, kind, ref_id, run_at, locked_until) VALUES
       ($1, 'metrics_test_due', 'a', now() - interval '90 seconds', NULL),
       ($1, 'metrics_test_leased', 'b', now() - interval '5 seconds', now() + interval '10 minutes')`,
    [p.id],
  );
  try {
    const byKind = new Map((await jobGauges(t.db)).map((g) => [g.kind, g]));
    const due = byKind.get('metrics_test_due');
    // the worker may have leased it meanwhile: then it counts as running
    assert.ok(due && due.due + due.running === 1, JSON.stringify(due));
    if (due.due === 1) assert.ok(due.lag_seconds >= 90 && due.lag_seconds < 600, String(due.lag_seconds));
    assert.deepEqual(byKind.get('metrics_test_leased'), { kind: 'metrics_test_leased', due: 0, running: 1, lag_seconds: 0 });
    // and through Prometheus's next scrapes
    await prom.until('tender_jobs_running{kind="metrics_test_leased"}', (v) => v === 1);
  } finally {
    await t.db.query("DELETE FROM jobs WHERE kind LIKE 'metrics_test_%'");
  }
});
