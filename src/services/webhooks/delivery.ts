import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import type { Config } from '../../config.ts';
import { findProjects } from '../../store/platform/projects.ts';
import { batcher } from '../../store/db/coalesce.ts';
import * as store from '../../store/webhooks/deliveries.ts';
import type { DeliveryRow } from '../../store/webhooks/deliveries.ts';
import { signedHeaders } from '../../domain/webhook-signing.ts';
import { addressClass, isIpLiteral, isLocalName } from '../../domain/ssrf.ts';
import { signingSecrets } from './endpoints.ts';
import { webhooks as webhookMetrics } from '../../telemetry/metrics.ts';
import { traced } from '../../telemetry/tracing.ts';
import { breakerScope, breakersFor, slotsFor } from './fairness.ts';
import type { JobRow, ProjectRow } from '../../domain/entities.ts';

/** The start of a receiver's answer kept in the log: printable text, at most this many bytes. */
const EXCERPT_BYTES = 300;
const excerptOf = (b: Buffer) =>
  b
    .subarray(0, EXCERPT_BYTES)
    .toString('utf8')
    .replace(/\uFFFD+$/, '') // a character cut in two at the end
    // eslint-disable-next-line no-control-regex -- control characters are what this removes
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ') || undefined;

/** At most this much of a receiver's answer is read; the rest is cut off with the connection. */
const MAX_RESPONSE_BYTES = 4096;
/** A delivery taken for an attempt is left alone this long past the timeout; then another runner may retry it. */
const HOLD_MARGIN_MS = 5_000;

// ---- HTTP ----------------------------------------------------------------------------------

export interface SendResult {
  status?: number;
  error?: string;
  durationMs: number;
  /** the start of the answer, for the log */
  excerpt?: string;
}

/**
 * Whose rule refuses private and loopback addresses for a delivery: a live project's (always), a
 * test project's on a service whose WEBHOOK_PRIVATE_ADDRESSES refuses them, or none (a test
 * project in the one-machine sandbox, which may call the developer's own receiver).
 */
export type AddressRule = 'live' | 'test' | undefined;
const REFUSED: Record<'live' | 'test', string> = {
  live: 'refused for a live project',
  test: 'refused for a test project on this service (WEBHOOK_PRIVATE_ADDRESSES=refuse)',
};

/**
 * The rule for a project's deliveries. Test projects reach private addresses where
 * WEBHOOK_PRIVATE_ADDRESSES allows it; unset, on the embedded store (one machine, the sandbox)
 * and not on PostgreSQL (a shared service, where a test event to 127.0.0.1 was SSRF with the
 * internal answer in the delivery log).
 */
export function addressRuleOf(ctx: Pick<Ctx, 'config' | 'db'>, project: Pick<ProjectRow, 'mode'>): AddressRule {
  if (project.mode === 'live') return 'live';
  const setting = ctx.config.webhook.privateAddresses ?? (ctx.db.kind === 'pglite' ? 'allow' : 'refuse');
  return setting === 'refuse' ? 'test' : undefined;
}

/** Resolves like dns.lookup, but fails when any address is not public: the connection uses what was checked (no DNS rebinding). */
const publicOnly =
  (why: string): LookupFunction =>
  (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, ''); // net reads no address with an error
      // the message is the merchant's to read (delivery log): it names no address or class
      if (addresses.some((a) => addressClass(a.address))) {
        const refused = Object.assign(new Error(`${hostname} does not resolve to public addresses only: ${why}`), { code: 'ESSRF' });
        return callback(refused, '');
      }
      if (options?.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
export const publicOnlyLookup = publicOnly(REFUSED.live);
const lookups = { live: publicOnlyLookup, test: publicOnly(REFUSED.test) };

const agents = new Map<string, Agent>();

/** One connection pool per address rule and timeout; a refusing rule's pool connects to public addresses only. */
function agentFor(rule: AddressRule, timeoutMs: number): Agent {
  const key = `${rule}:${timeoutMs}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({
      connect: { timeout: timeoutMs, ...(rule ? { lookup: lookups[rule] } : {}) },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4_000,
      maxResponseSize: -1,
    });
    agents.set(key, agent);
  }
  return agent;
}

function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no response within ${timeoutMs} ms`;
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `timeout: no response within ${timeoutMs} ms`;
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `timeout: could not connect within ${timeoutMs} ms`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection closed by the receiver';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ESSRF':
      return e.message ?? 'address refused';
  }
  return `${code ? code + ': ' : ''}${e?.message ?? String(err)}`.slice(0, 300);
}

/**
 * POSTs one message. Only the status line and headers must arrive within the timeout; at most a
 * few KB of the body are read (within the same deadline) and the rest is cut off, so a slow or
 * endless receiver cannot hold a worker.
 */
export async function send(
  config: Config,
  rule: AddressRule,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<SendResult> {
  const timeoutMs = config.webhook.timeoutMs;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (rule) {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    const c = isIpLiteral(host) ? addressClass(host) : isLocalName(host) ? 'loopback' : undefined;
    if (c) return { error: `${host} is a ${c} address: ${REFUSED[rule]}`, durationMs: 0 };
  }
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, timeoutMs);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Tender-Webhooks/1', ...headers },
      body,
      dispatcher: agentFor(rule, timeoutMs),
      signal: ac.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const durationMs = elapsed();
    let read = 0;
    const head: Buffer[] = []; // the start of the answer, for the delivery log
    try {
      for await (const chunk of res.body) {
        if (read < EXCERPT_BYTES) head.push(chunk as Buffer);
        read += (chunk as Buffer).length;
        if (read > MAX_RESPONSE_BYTES) break; // leaving the loop destroys the body and its connection
      }
    } catch {
      /* the status counts; a body cut off by the deadline does not matter */
    }
    return { status: res.statusCode, durationMs, excerpt: excerptOf(Buffer.concat(head)) };
  } catch (err) {
    return { error: describe(err, timedOut, timeoutMs), durationMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}

/** How long a delivery of a project at its share of slots waits for one, then is put back for (ms). */
const SHARE_WAIT_MS = 1000;

// ---- the delivery job ----------------------------------------------------------------------

const payloadOf = (d: Pick<DeliveryRow, 'event' | 'order_id' | 'project_id'>) =>
  JSON.stringify({ event: d.event, order_id: d.order_id, project_id: d.project_id });

/**
 * What the delivery jobs of one claimed batch share. Their reads go out as one statement each
 * (projects, pending heads, secrets), and the claims and outcomes of attempts that happen
 * together go out as one statement too (store/db/coalesce.ts batcher): a handful of statements for
 * the batch instead of seven or eight per delivery. Each delivery still keeps its own claim and
 * outcome rows, checked against its attempt count, so ordering and at-least-once are unchanged.
 */
interface Batch {
  projects: Promise<Map<string, ProjectRow>>;
  heads: Promise<Map<string, DeliveryRow[]>>;
  secrets(project: ProjectRow): Promise<string[]>;
  claim(item: { d: DeliveryRow; now: Date; holdUntil: Date }): Promise<number | undefined>;
  record(item: store.AttemptRecord): Promise<{ more: boolean } | undefined>;
}

function batchFor(ctx: Ctx, jobs: JobRow[]): Batch {
  const db = ctx.db;
  const projectIds = [...new Set(jobs.map((j) => j.project_id))];
  // the three reads go out side by side (on three connections of the pool)
  const projects = findProjects(db, projectIds).then((rows) => new Map(rows.map((p) => [p.id, p])));
  const heads = store
    .pendingHeadsOf(
      db,
      jobs.map((j) => ({ project_id: j.project_id, order_id: j.ref_id })),
    )
    .then((rows) => {
      const byOrder = new Map<string, DeliveryRow[]>();
      for (const r of rows) byOrder.set(r.order_id, [...(byOrder.get(r.order_id) ?? []), r]);
      return byOrder;
    });
  const secretRows = store.findSecrets(db, projectIds).then((rows) => new Map(rows.map((r) => [r.project_id, r])));
  for (const p of [projects, heads, secretRows]) p.catch(() => {}); // each caller sees the error
  const opened = new Map<string, Promise<string[]>>();
  const sizes = { maxInFlight: 2, maxBatch: 64 };
  return {
    projects,
    heads,
    secrets(project) {
      let s = opened.get(project.id);
      if (!s) opened.set(project.id, (s = secretRows.then((rows) => signingSecrets(ctx, project, rows.get(project.id)))));
      return s;
    },
    claim: batcher((items) => store.claimAttempts(db, items), sizes),
    record: batcher((items) => store.recordAttempts(db, items), sizes),
  };
}

/**
 * One attempt of one delivery: take it, POST it, write down what happened. Returns when its
 * URL's chain is due next (project clock, ms): null when nothing waits, undefined when unknown.
 * Only the POST holds one of the WEBHOOK_CONCURRENCY slots; taking the delivery and writing the
 * outcome go with the batch's other deliveries. The order's job stays leased (deliveryLeaseMs)
 * all along, so no other runner can take the delivery meanwhile.
 */
async function attempt(ctx: Ctx, batch: Batch, project: ProjectRow, d: DeliveryRow, secrets: string[]): Promise<number | null | undefined> {
  const cfg = ctx.config.webhook;
  const slots = slotsFor(ctx.config);
  const breakers = breakersFor(ctx.config);
  const scope = breakerScope(project);
  // The endpoint's breaker is open: the delivery waits for it to close, and no attempt is counted.
  const openUntil = () => breakers.openUntil(d.url, scope, nowFor(project).getTime());
  const hold = async (until: number) => ((await store.holdDelivery(ctx.db, d, new Date(until))) ? until : undefined);
  const open = openUntil();
  if (open !== undefined) return hold(open);
  // the project's POSTs in flight are at its share and none ends soon: put back a moment, holding no worker slot
  if (!(await slots.reserve(project.id, SHARE_WAIT_MS))) return nowFor(project).getTime() + SHARE_WAIT_MS;
  // the breaker may have opened while this one waited for a slot
  const opened = openUntil();
  if (opened !== undefined) {
    slots.unreserve(project.id);
    return hold(opened);
  }
  const now = nowFor(project);
  let n: number | undefined;
  try {
    n = await batch.claim({ d, now, holdUntil: new Date(now.getTime() + cfg.timeoutMs + HOLD_MARGIN_MS) });
  } catch (err) {
    slots.unreserve(project.id);
    throw err;
  }
  if (n === undefined) {
    slots.unreserve(project.id);
    return undefined; // another runner took it
  }
  const body = payloadOf(d);
  // The timestamp is wall-clock time: receivers check it against their own clock.
  const r: SendResult = await slots.run(project.id, () =>
    traced('webhook delivery', { 'tender.attempt': n }, () =>
      send(ctx.config, addressRuleOf(ctx, project), d.url, { ...signedHeaders(secrets, d.id, new Date(), body) }, body),
    ),
  );
  const ok = r.status !== undefined && r.status >= 200 && r.status < 300;
  const after = nowFor(project);
  breakers.record(d.url, scope, ok, after.getTime());
  const done = ok || n >= cfg.maxAttempts;
  webhookMetrics.attempts.inc({ outcome: ok ? 'succeeded' : done ? 'failed' : 'retry' });
  webhookMetrics.duration.observe(r.durationMs / 1000);
  const nextRetry = done ? null : new Date(after.getTime() + cfg.retryIntervalMs);
  const written = await batch.record({
    d,
    a: {
      attempt: n,
      attempted: now,
      response_status: r.status ?? null,
      response_excerpt: r.excerpt ?? null,
      error: r.error ?? null,
      duration_ms: r.durationMs,
      next_retry: nextRetry,
    },
    next: { status: ok ? 'succeeded' : done ? 'failed' : 'pending', next_attempt_at: nextRetry, completed: done ? after : null },
  });
  if (!ok)
    ctx.log.warn(
      { delivery: d.id, order: d.order_id, attempt: n, status: r.status, error: r.error, final: done },
      'webhook attempt failed',
    );
  if (!written) return undefined;
  if (nextRetry) return nextRetry.getTime();
  return written.more ? after.getTime() : null;
}

/**
 * Job deliver_webhook, one per order (ref_id = order id). Sends the oldest pending delivery of
 * each of the order's URLs that is due, then sets the job to when the next one is due. A later
 * delivery to a URL never overtakes an earlier one: it waits until that one succeeded or failed.
 */
async function deliverOrder(ctx: Ctx, batch: Batch, job: JobRow) {
  const project = (await batch.projects).get(job.project_id);
  if (!project) return;
  const orderId = job.ref_id;
  const now = nowFor(project);
  const heads = (await batch.heads).get(orderId) ?? [];
  const isDue = (d: DeliveryRow) => d.next_attempt_at !== null && new Date(d.next_attempt_at) <= now;
  const due = heads.filter(isDue);
  let times: Array<number | null | undefined> = heads.filter((d) => !isDue(d)).map((d) => new Date(d.next_attempt_at ?? now).getTime());
  if (due.length) {
    const secrets = await batch.secrets(project);
    times.push(...(await Promise.all(due.map((d) => attempt(ctx, batch, project, d, secrets)))));
  }
  if (times.includes(undefined))
    times = (await store.pendingHeads(ctx.db, project.id, orderId)).map((d) => new Date(d.next_attempt_at ?? now).getTime());
  const left = times.filter((t): t is number => typeof t === 'number');
  // Nothing left: the worker removes the job, unless a new delivery rescheduled it meanwhile.
  if (!left.length) return;
  // Never leave run_at as claimed while work is left: the worker would take that for "done".
  const claimed = new Date(job.run_at).getTime();
  await store.rescheduleOrderJob(ctx.db, orderId, new Date(job.run_at), new Date(Math.max(Math.min(...left), claimed + 1)));
}

/** deliver_webhook jobs claimed together: one promise per job, settled when that job's round is done. */
export function deliverWebhookJobs(ctx: Ctx, jobs: JobRow[]): Array<Promise<void>> {
  const batch = batchFor(ctx, jobs);
  return jobs.map((job) => deliverOrder(ctx, batch, job));
}

/** One deliver_webhook job alone. */
export const deliverOrderWebhooks = (ctx: Ctx, job: JobRow) => deliverWebhookJobs(ctx, [job])[0];

/** How long a claimed delivery job stays reserved: a bit longer than a round of attempts (22 s by default). */
export const deliveryLeaseMs = (config: Config) => 3 * config.webhook.timeoutMs + 2 * HOLD_MARGIN_MS;
