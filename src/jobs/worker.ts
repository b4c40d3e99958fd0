import type { Ctx } from '../services/context.ts';
import { claimDue, failJob, finishJob, type JobRow } from './queue.ts';

/** A job handler. It runs at least once; it must be safe to run again. */
export type JobHandler = (ctx: Ctx, job: JobRow) => Promise<void>;
export const handlers = new Map<string, JobHandler>();

export function registerJob(kind: string, handler: JobHandler) {
  handlers.set(kind, handler);
}

const LEASE_MS = 60_000;

async function runOne(ctx: Ctx, job: JobRow) {
  const handler = handlers.get(job.kind);
  try {
    if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
    await handler(ctx, job);
    await finishJob(ctx.db, job);
  } catch (err) {
    const backoff = Math.min(3_600_000, 1000 * 2 ** Math.min(job.attempts, 12));
    ctx.log.warn({ job: { id: job.id, kind: job.kind }, err: (err as Error).message }, 'job failed');
    await failJob(ctx.db, job, (err as Error).message, new Date(new Date(job.run_at).getTime() + backoff)).catch(() => {});
  }
}

/** Runs every job due now (for one project, or all), until none is left. Returns how many ran. */
export async function runDueJobs(ctx: Ctx, projectId?: string, batch = 50): Promise<number> {
  let ran = 0;
  for (let round = 0; round < 1000; round++) {
    const jobs = await claimDue(ctx.db, batch, LEASE_MS, projectId);
    if (!jobs.length) break;
    // Jobs of one batch run one after another: deliveries for one order keep their order.
    for (const job of jobs) await runOne(ctx, job);
    ran += jobs.length;
  }
  return ran;
}

/** The background loop: polls, and wakes early on NOTIFY tender_jobs. */
export function startWorker(ctx: Ctx) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let running: Promise<void> = Promise.resolve();

  const loop = async () => {
    while (!stopped) {
      try {
        await runDueJobs(ctx, undefined, ctx.config.worker.concurrency);
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
  ctx.db.listen?.('tender_jobs', () => {
    if (timer) clearTimeout(timer);
    wake?.();
  }).then((stop) => {
    if (stopped) void stop();
    else unlisten = stop;
  }, () => {});
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
