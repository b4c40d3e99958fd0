import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric Tender exports (docs/operations.md names and explains each), in one
 * registry per process, read by the metrics server (telemetry/server.ts) on METRICS_PORT.
 *
 * Labels are bounded sets: surfaces, route patterns, methods, status classes, connector names,
 * operations, outcomes, reasons, currencies (ISO 4217), card brands, job kinds, the project's
 * mode (test, live) and its payment method (paymentMethodLabel: the fixed method list). Never an id, a
 * key, a URL or anything a client typed: a label value is a time series of its own, and a
 * metric is read by people who may not see card data.
 *
 * Counting costs a Map lookup and an addition; with no METRICS_PORT nothing reads the registry,
 * so the counters are kept either way rather than checking a flag on every call.
 */
export const registry = new Registry();
registry.setDefaultLabels({ service: 'tender' });
// process: CPU, memory, event-loop lag, handles, GC (prom-client's default metrics, process_* and nodejs_*)
collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
// gauges named like counters (`promtool check metrics` refuses a gauge ending in _total); each is
// the sum of the labelled gauge of the same name without it (nodejs_active_handles by type...)
for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
  registry.removeSingleMetric(name);

const registers = [registry];
// seconds: from a quarter millisecond (an in-memory PGlite statement) to ten seconds (a timed-out acquirer)
const LATENCY = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const http = {
  requests: new Counter({
    name: 'tender_http_requests_total',
    help: 'HTTP requests answered, by surface, route pattern, method and status class (2xx, 4xx...)',
    labelNames: ['surface', 'route', 'method', 'status_class'] as const,
    registers,
  }),
  duration: new Histogram({
    name: 'tender_http_request_duration_seconds',
    help: 'Time from a request received to its answer sent, by surface, route pattern, method and status class',
    labelNames: ['surface', 'route', 'method', 'status_class'] as const,
    buckets: LATENCY,
    registers,
  }),
};

export const payments = {
  authorizations: new Counter({
    name: 'tender_authorizations_total',
    help: "Authorization answers from the acquirer, by mode (test, live), payment method, connector, card brand, outcome (accepted, declined, error, processing) and decline reason ('' when none)",
    labelNames: ['mode', 'method', 'connector', 'brand', 'outcome', 'reason'] as const,
    registers,
  }),
  orders: new Counter({
    name: 'tender_orders_total',
    help: 'Order status changes, by mode (test, live), payment method, kind (payment, capture, void, refund, chargeback, reversal) and the status reached',
    labelNames: ['mode', 'method', 'kind', 'status'] as const,
    registers,
  }),
  amount: new Counter({
    name: 'tender_order_amount_minor_total',
    help: 'Money of orders that completed, in minor units of the currency (cents), by mode (test, live), payment method, kind and currency',
    labelNames: ['mode', 'method', 'kind', 'currency'] as const,
    registers,
  }),
};

export const acquirer = {
  calls: new Counter({
    name: 'tender_acquirer_calls_total',
    help: 'Calls to an acquirer, by mode (test, live), connector, operation and outcome (accepted, declined, error, processing, timeout, failed: threw)',
    labelNames: ['mode', 'connector', 'operation', 'outcome'] as const,
    registers,
  }),
  duration: new Histogram({
    name: 'tender_acquirer_call_duration_seconds',
    help: 'Time an acquirer call took, by mode (test, live), connector and operation',
    labelNames: ['mode', 'connector', 'operation'] as const,
    buckets: LATENCY,
    registers,
  }),
  inFlight: new Gauge({
    name: 'tender_acquirer_in_flight',
    help: 'Acquirer calls under way now, by mode (test, live) and connector',
    labelNames: ['mode', 'connector'] as const,
    registers,
  }),
  unknown: new Counter({
    name: 'tender_acquirer_unknown_outcomes_total',
    help: 'Authorizations the acquirer answered "processing" (outcome not known yet), by mode (test, live) and connector',
    labelNames: ['mode', 'connector'] as const,
    registers,
  }),
  recoveries: new Counter({
    name: 'tender_acquirer_recoveries_total',
    help: 'Inquiries that settled an unknown outcome (answer no longer processing), by mode (test, live), connector and the outcome found',
    labelNames: ['mode', 'connector', 'outcome'] as const,
    registers,
  }),
};

/**
 * The velocity limits' decisions (docs/risk.md): one per screened card attempt, labelled by the
 * project's mode, the decision and the rule that decided it (riskDecisionLabels: a rule name from
 * the fixed list, `none` for pass). Never the project, card or address: find those from the
 * transactions' `risk` objects.
 */
export const risk = {
  decisions: new Counter({
    name: 'tender_risk_decisions_total',
    help: 'Card attempts screened by the velocity limits, by mode (test, live), decision (refuse, challenge, flag, pass) and the rule that decided it (the first rule of that action; none for pass)',
    labelNames: ['mode', 'decision', 'rule'] as const,
    registers,
  }),
  /**
   * allowlist matches (docs/risk.md "Lists"): screened attempts an allowlist let past the velocity
   * limits, by mode, the list's scope (project, platform) and kind; never the project or the value
   */
  allows: new Counter({
    name: 'tender_risk_allows_total',
    help: 'Card attempts an allowlist let past the velocity limits, by mode (test, live), scope (project, platform) and kind (card, bin, country, network, email, email_domain)',
    labelNames: ['mode', 'scope', 'kind'] as const,
    registers,
  }),
  /** the platform hold (docs/risk.md): projects held, by mode; which project is in `tender risk hold list` */
  holds: new Counter({
    name: 'tender_risk_holds_total',
    help: 'Projects held by the platform hold (their decline ratio stayed far above their own for minutes), by mode (test, live)',
    labelNames: ['mode'] as const,
    registers,
  }),
};

export const webhooks = {
  attempts: new Counter({
    name: 'tender_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome: succeeded, retry (failed, will be tried again), failed (failed, no attempt left)',
    labelNames: ['outcome'] as const,
    registers,
  }),
  duration: new Histogram({
    name: 'tender_webhook_attempt_duration_seconds',
    help: "Time a webhook POST took until the receiver's status line (or the error)",
    buckets: LATENCY,
    registers,
  }),
};

export const db = {
  duration: new Histogram({
    name: 'tender_db_query_duration_seconds',
    help: 'Time a database statement took, by store (postgres, pglite) and statement kind (select, insert, update, delete, other)',
    labelNames: ['store', 'statement'] as const,
    buckets: LATENCY,
    registers,
  }),
};

/** Gauges read when Prometheus scrapes (telemetry/server.ts calls the collectors main.ts gives it). */
export const gauges = {
  poolInUse: new Gauge({ name: 'tender_db_pool_in_use', help: 'PostgreSQL connections checked out of the pool', registers }),
  poolIdle: new Gauge({ name: 'tender_db_pool_idle', help: 'PostgreSQL connections open and idle in the pool', registers }),
  poolWaiting: new Gauge({ name: 'tender_db_pool_waiting', help: 'Statements waiting for a free pool connection', registers }),
  poolMax: new Gauge({ name: 'tender_db_pool_max', help: 'The pool size (DATABASE_POOL_SIZE)', registers }),
  webhookBacklog: new Gauge({
    name: 'tender_webhook_backlog',
    help: 'Webhook deliveries pending (not yet succeeded or given up)',
    registers,
  }),
  webhookOldest: new Gauge({
    name: 'tender_webhook_backlog_oldest_seconds',
    help: 'Age of the oldest pending webhook delivery (0 when none)',
    registers,
  }),
  jobsDue: new Gauge({ name: 'tender_jobs_due', help: 'Jobs due now and not taken, by kind', labelNames: ['kind'] as const, registers }),
  jobsRunning: new Gauge({
    name: 'tender_jobs_running',
    help: 'Jobs taken by a runner (leased), by kind',
    labelNames: ['kind'] as const,
    registers,
  }),
  jobsLag: new Gauge({
    name: 'tender_jobs_lag_seconds',
    help: 'How long the oldest due job not taken has been due, by kind (0 when none)',
    labelNames: ['kind'] as const,
    registers,
  }),
  ready: new Gauge({ name: 'tender_ready', help: '1 when /readyz answers ready (or degraded), else 0', registers }),
  linksDown: new Gauge({
    name: 'tender_acquirer_links_down',
    help: "Acquirer links known down on this node (/readyz degraded): their live projects' payments fail at once",
    registers,
  }),
  scrapeErrors: new Counter({
    name: 'tender_metrics_collect_errors_total',
    help: 'Scrapes where a gauge could not be read (the database did not answer)',
    registers,
  }),
};

/** The status class of an HTTP status: 2xx, 3xx, 4xx, 5xx. */
export const statusClass = (status: number) => `${Math.floor(status / 100)}xx`;

/** A statement's kind from its first word, a bounded label (BEGIN; SELECT ... counts as select). */
export function statementKind(sql: string): string {
  const m = /^\s*(?:BEGIN;\s*)?(select|insert|update|delete|with)\b/i.exec(sql);
  return m ? m[1].toLowerCase() : 'other';
}

/** The two modes a project runs in: test (the simulator's sandbox) or live money. */
export type ModeLabel = 'test' | 'live';
