import type { Ctx } from './context.ts';
export type { LinkState } from './context.ts';
import { ping } from '../../store/db/db.ts';
import { pendingMigrations } from '../../store/db/migrate.ts';

/** Whether the database answers (the database part of /readyz); never throws. */
async function databaseReady(ctx: Ctx): Promise<boolean> {
  try {
    await ping(ctx.db);
    return true;
  } catch {
    return false;
  }
}

/**
 * What keeps this node from serving payments now, one line each; empty when ready. Never throws.
 * An acquirer link down is not among them: it stops only the payments of the live projects bound
 * to it (they fail at once, nothing sent), not the node's other projects, test ones included;
 * taking the node out of the balancer for it would take every node out (degradations below).
 */
export async function readinessProblems(ctx: Ctx): Promise<string[]> {
  const problems: string[] = [];
  if (ctx.lifecycle.stopping) problems.push('shutting down');
  if (!(await databaseReady(ctx))) problems.push('database unavailable');
  else {
    const pending = await pendingMigrations(ctx.db).catch(() => undefined);
    if (pending === undefined) problems.push('database unavailable');
    else if (pending.length) problems.push(`migrations pending: ${pending.join(', ')}`);
  }
  return problems;
}

/** What this node serves only in part now: each acquirer link down, one line each (/readyz `degraded`). Never throws. */
export async function degradations(ctx: Ctx): Promise<string[]> {
  const down: string[] = [];
  for (const link of ctx.links ?? []) {
    const up = await Promise.resolve()
      .then(() => link.up())
      .catch(() => false);
    if (!up) down.push(`acquirer link down: ${link.name}`);
  }
  return down;
}

/** What each link tells about itself (connected, signed on, in flight, last echo), for /readyz's body. */
export function linkStates(ctx: Ctx): object[] {
  return (ctx.links ?? []).flatMap((link) => (link.state ? [link.state()] : []));
}
