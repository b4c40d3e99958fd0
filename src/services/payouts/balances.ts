import type { Ctx } from '../platform/context.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { projectBalances } from '../../store/payouts/balances.ts';

/** GET /v1/balances/: what Tender owes for the project's money, per currency (docs/payouts.md). */
export async function balancesOfProject(ctx: Ctx, project: ProjectRow) {
  return { mode: project.mode, balances: await projectBalances(ctx.db, project.id) };
}
