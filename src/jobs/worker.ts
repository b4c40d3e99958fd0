import type { Ctx } from '../services/platform/context.ts';
import { claimDue, countDueLeft, extendLeases, failJob, finishJob, finishJobs, renewLeases } from '../store/platform/jobs.ts';
import { batcher } from '../store/db/coalesce.ts';
import type { JobRow } from '../domain/entities.ts';

/** A kind of due work: its handler runs at least once, so it must be safe to run again. */
export interface JobKind {
  run: (ctx: Ctx, job: JobRow) => Promise<void>;
  /**
   * Runs several claimed jobs of this kind together (their statements shared): one promise per
   * job, in order, each settled when that job is done. Only for `concurrent` kinds.
   */
  runBatch?: (ctx: Ctx, jobs: JobRow[]) => Array<Promise<void>>;
  /** Jobs of this kind may run side by side with other jobs (the handler keeps its own order, e.g. per order). */
  concurrent?: boolean;
  /** How long a claimed job stays reserved before another node may take it over (default TENDER_JOB_LEASE_MS, 60 s). */
  leaseMs?: (config: Ctx['config']) => number;
  /**
   * Turns work that became due elsewhere (rows of its own, not jobs) into jobs of this kind, at
   * most `limit`; called before each run claims (of one project, or all). Returns how many.
   */
  sweep?: (ctx: Ctx, limit: number, projectId?: string) => Promise<number>;
}

/** Every kind of due work by name: the table main.ts writes. */
export type JobTable = Record<string, JobKind>;

async function runOne(
  ctx: Ctx,
  table: JobTable,
  job: JobRow,
  ran?: Promise<void>,
  finish: (job: JobRow) => Promise<void> = (j) => finishJob(ctx.db, j),
) {
  const kind = Object.hasOwn(table, job.kind) ? table[job.kind] : undefined;
  try {
    if (!kind) throw new Error(`no handler for job kind ${job.kind}`);
    await (ran ?? kind.run(ctx, job));
    await finish(job);
  } catch (err) {
    const backoff = Math.min(3_600_000, 1000 * 2 ** Math.min(job.attempts, 12));
    ctx.log.warn({ job: { id: job.id, kind: job.kind }, err: (err as Error).message }, 'job failed');
    await failJob(ctx.db, job, (err as Error).message, new Date(new Date(job.run_at).getTime() + backoff)).catch(() => {});
  }
}

const leaseOf = (ctx: Ctx, table: JobTable, kind: string) =>
  (Object.hasOwn(table, kind) ? table[kind].leaseMs?.(ctx.config) : undefined) ?? ctx.config.worker.leaseMs;
const concurrent = (table: JobTable, kind: string) => Object.hasOwn(table, kind) && Boolean(table[kind].concurrent);

/** The shortest lease of any kind: jobs are claimed with it, then the others get their longer one. */
const shortestLease = (ctx: Ctx, table: JobTable) =>
  Math.min(ctx.config.worker.leaseMs, ...Object.keys(table).map((k) => leaseOf(ctx, table, k)));

/**
 * Gives claimed jobs the lease of their kind. Claiming with the shortest and extending (within
 * that shortest lease) means a node killed in between leaves no job reserved for long.
 */
async function applyLeases(ctx: Ctx, table: JobTable, jobs: JobRow[], claimedWith: number) {
  const byLease = new Map<number, number[]>();
  for (const j of jobs) {
    const lease = leaseOf(ctx, table, j.kind);
    if (lease !== claimedWith) byLease.set(lease, [...(byLease.get(lease) ?? []), j.id]);
  }
  for (const [lease, ids] of byLease) await extendLeases(ctx.db, ids, lease);
}

/**
 * Runs every job due now (for one project, or all), until none is left. Returns how many ran.
 * Jobs run one after another in claim order, except kinds marked `concurrent` (webhook
 * deliveries), which run side by side (those of one claim together, through the kind's
 * runBatch), so a slow receiver holds one slot rather than the whole queue.
 */
export async function runDueJobs(ctx: Ctx, table: JobTable, projectId?: string, batch = 50): Promise<number> {
  // Concurrent jobs in flight: enough that, while some wait on the database, the webhook slots
  // (WEBHOOK_CONCURRENCY POSTs at once, webhook-delivery.ts) stay busy; claimed up to half that at a time.
  const limit = Math.max(1, batch, ctx.config.worker.concurrency, 8 * ctx.config.webhook.concurrency);
  const claimSize = Math.max(batch, Math.floor(limit / 2));
  const inFlight = new Set<Promise<void>>();
  // concurrent jobs that end together are removed in one statement
  const finish = batcher((jobs: JobRow[]) => finishJobs(ctx.db, jobs).then(() => jobs.map(() => undefined)), {
    maxInFlight: 2,
    maxBatch: 64,
  });
  // Claimed jobs may wait a while behind one another (for a webhook slot, or their turn): those
  // held for a third of their lease get it renewed, so no other runner takes them over meanwhile.
  const held = new Map<number, { job: JobRow; renewed: number }>();
  const renew = setInterval(
    () => {
      const due = new Map<number, number[]>();
      for (const h of held.values()) {
        const lease = leaseOf(ctx, table, h.job.kind);
        if (Date.now() - h.renewed < lease / 3) continue;
        h.renewed = Date.now();
        due.set(lease, [...(due.get(lease) ?? []), h.job.id]);
      }
      for (const [lease, ids] of due)
        renewLeases(ctx.db, ids, lease).catch((err) => ctx.log.warn({ err: (err as Error).message }, 'renewing job leases'));
    },
    shortestLease(ctx, table) / 6,
  );
  renew.unref();
  try {
    for (const kind of Object.values(table)) await kind.sweep?.(ctx, limit, projectId);
    let ran = 0;
    for (let round = 0; round < 100_000 && ran < 50_000; round++) {
      const room = Math.min(claimSize, limit - inFlight.size);
      // with jobs under way, claim again once a few slots are free rather than one by one
      const lease = shortestLease(ctx, table);
      const jobs =
        room > 0 && (!inFlight.size || room >= Math.min(claimSize, limit) / 2) ? await claimDue(ctx.db, room, lease, projectId) : [];
      if (!jobs.length) {
        if (!inFlight.size) break;
        await Promise.race(inFlight); // a finished job may have made more work due
        continue;
      }
      ran += jobs.length;
      await applyLeases(ctx, table, jobs, lease);
      const together = new Map<string, JobRow[]>();
      for (const job of jobs) if (concurrent(table, job.kind)) together.set(job.kind, [...(together.get(job.kind) ?? []), job]);
      for (const [kind, group] of together) {
        const runs = table[kind].runBatch?.(ctx, group);
        group.forEach((job, i) => {
          runs?.[i].catch(() => {}); // handled in runOne
          held.set(job.id, { job, renewed: Date.now() });
          const p: Promise<void> = runOne(ctx, table, job, runs?.[i], finish).finally(() => {
            inFlight.delete(p);
            held.delete(job.id);
          });
          inFlight.add(p);
        });
      }
      const inTurn = jobs.filter((job) => !concurrent(table, job.kind));
      for (const job of inTurn) held.set(job.id, { job, renewed: Date.now() });
      for (const job of inTurn) {
        await runOne(ctx, table, job);
        held.delete(job.id);
      }
    }
    await Promise.all(inFlight);
    return ran;
  } finally {
    clearInterval(renew);
  }
}

/**
 * run-due-jobs of the test clock: runs the project's due jobs, then waits while another runner
 * (the background worker) still holds some or is claiming them, running what they make due, so
 * that when it returns every job due on the project's clock has run. Waits at most `waitMs` for
 * the others.
 * Returns how many jobs this call ran.
 */
export async function settleDueJobs(ctx: Ctx, table: JobTable, projectId: string, waitMs = 10_000): Promise<number> {
  let ran = await runDueJobs(ctx, table, projectId);
  const until = Date.now() + waitMs;
  while (Date.now() < until && (await countDueLeft(ctx.db, projectId)) > 0) {
    await new Promise((r) => setTimeout(r, 25));
    ran += await runDueJobs(ctx, table, projectId);
  }
  return ran;
}

/** The background loop: polls, and wakes early on NOTIFY tender_jobs. */
export function startWorker(ctx: Ctx, table: JobTable) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let running: Promise<void> = Promise.resolve();

  const loop = async () => {
    while (!stopped) {
      try {
        await runDueJobs(ctx, table, undefined, ctx.config.worker.concurrency);
      } catch (err) {
        if (!stopped) ctx.log.error({ err: (err as Error).message }, 'worker loop');
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, ctx.config.worker.pollMs);
      });
    }
  };
  ctx.db
    .listen?.('tender_jobs', () => {
      if (timer) clearTimeout(timer);
      wake?.();
    })
    .then(
      (stop) => {
        if (stopped) void stop();
        else unlisten = stop;
      },
      () => {},
    );
  running = loop();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await running;
      await unlisten?.();
    },
  };
}
