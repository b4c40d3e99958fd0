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

/** What keeps this node from serving payments now, one line each; empty when ready. Never throws. */
export async function readinessProblems(ctx: Ctx): Promise<string[]> {
  const problems: string[] = [];
  if (ctx.lifecycle.stopping) problems.push('shutting down');
  if (!(await databaseReady(ctx))) problems.push('database unavailable');
  else {
    const pending = await pendingMigrations(ctx.db).catch(() => undefined);
    if (pending === undefined) problems.push('database unavailable');
    else if (pending.length) problems.push(`migrations pending: ${pending.join(', ')}`);
  }
  for (const link of ctx.links ?? []) {
    const up = await Promise.resolve()
      .then(() => link.up())
      .catch(() => false);
    if (!up) problems.push(`acquirer link down: ${link.name}`);
  }
  return problems;
}

/** What each link tells about itself (connected, signed on, in flight, last echo), for /readyz's body. */
export function linkStates(ctx: Ctx): object[] {
  return (ctx.links ?? []).flatMap((link) => (link.state ? [link.state()] : []));
}
