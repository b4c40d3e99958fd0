import type { Ctx } from '../platform/context.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { newId } from '../../domain/ids.ts';
import type { HoldSettings } from '../../domain/risk/limits.ts';
import { authorizationSlices, holdsInForce, liftHold, openHold, type HoldRow, type SliceRow } from '../../store/risk/holds.ts';
import { risk } from '../../telemetry/metrics.ts';

/**
 * The platform hold (docs/risk.md "The platform hold"): a project whose authorizations at the
 * acquirer are declined far more often than its own recent ratio, slice after slice for minutes,
 * is held: its card payments are refused (screen.ts) until the operator lifts it. Only
 * authorizations that reached the acquirer count, so an attack the velocity limits stop (their
 * refusals never reach it) cannot trip it.
 */

for (const mode of ['test', 'live'] as const) risk.holds.inc({ mode }, 0);

/** Whether the slices call for a hold, and why: every judged slice over the bound, the bound from the baseline. */
export function judgeSlices(
  h: HoldSettings,
  rows: readonly SliceRow[],
  baseSlices = Math.ceil((h.baselineMinutes * 60) / h.sliceSeconds),
): string | undefined {
  if (!h.minAuthorizations) return undefined;
  let sent = 0;
  let declined = 0;
  for (const r of rows)
    if (r.slice < baseSlices) {
      sent += r.sent;
      declined += r.declined;
    }
  const own = sent ? (100 * declined) / sent : 0;
  const bound = Math.max(h.minPercent, h.factor * own);
  const judged: number[] = [];
  for (let i = baseSlices; i < baseSlices + h.slices; i++) {
    const r = rows.find((x) => x.slice === i);
    if (!r || r.sent < h.minAuthorizations || (100 * r.declined) / r.sent <= bound) return undefined;
    judged.push(Math.round((100 * r.declined) / r.sent));
  }
  return `${judged.join(' %, ')} % of authorizations declined in ${h.slices} slices of ${h.sliceSeconds} s in a row, over ${Math.round(bound)} % (the project's own ${own.toFixed(1)} % in the ${baseSlices * h.sliceSeconds} s before)`;
}

/** Checks the project's last slices and holds it when they call for it. Answers the new hold. */
async function checkHold(ctx: Ctx, project: Pick<ProjectRow, 'id' | 'mode'>, now = Date.now()): Promise<HoldRow | undefined> {
  const h = ctx.config.risk.hold;
  if (!h.minAuthorizations) return undefined;
  const slice = h.sliceSeconds * 1000;
  const baseSlices = Math.ceil((h.baselineMinutes * 60) / h.sliceSeconds);
  // the judged slices are the last complete ones; the one under way is not judged yet
  const since = new Date(now - (now % slice) - (h.slices + baseSlices) * slice);
  const rows = await authorizationSlices(ctx.replica, project.id, since, slice);
  const reason = judgeSlices(h, rows, baseSlices);
  if (!reason) return undefined;
  const hold = await openHold(ctx.db, { id: newId(), project_id: project.id, reason, created: new Date(now) });
  if (hold) {
    risk.holds.inc({ mode: project.mode });
    ctx.log.warn({ project: project.id, reason }, 'project held by the platform hold: tender risk hold lift --project ID to lift it');
  }
  return hold;
}

const lastCheck = new WeakMap<object, Map<string, number>>();
/** After a screening, at most once a slice per project and node, off the payment's path: checkHold. */
export function watchHold(ctx: Ctx, project: Pick<ProjectRow, 'id' | 'mode'>, now = Date.now()) {
  const h = ctx.config.risk.hold;
  if (!h.minAuthorizations || !ctx.config.risk.enforce) return;
  let seen = lastCheck.get(ctx.db);
  if (!seen) lastCheck.set(ctx.db, (seen = new Map()));
  const slice = Math.floor(now / (h.sliceSeconds * 1000));
  if (seen.get(project.id) === slice) return;
  if (seen.size > 100_000) seen.clear();
  seen.set(project.id, slice);
  checkHold(ctx, project, now).catch((err) => ctx.log.warn({ err: (err as Error).message }, 'platform hold not checked'));
}

export const holdList = (ctx: Ctx, projectId?: string) => holdsInForce(ctx.db, projectId);

export const liftProjectHold = (ctx: Ctx, projectId: string, by: string) => liftHold(ctx.db, projectId, by, new Date());
