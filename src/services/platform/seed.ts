import type { Ctx } from './context.ts';
import { nowFor } from './context.ts';
import { findProject } from '../../store/platform/projects.ts';
import { seedProject, type SeedOptions, type SeedResult } from '../../store/platform/seed.ts';
import { DomainError, invalid } from '../../domain/errors.ts';

export type { SeedOptions, SeedResult };

/** The most orders one `tender seed` makes. */
export const MAX_SEED_ORDERS = 10_000_000;

/** `tender seed`: realistic orders of every kind in a project, written straight in SQL (store/platform/seed.ts). */
export async function seedOrders(ctx: Ctx, opts: SeedOptions): Promise<SeedResult> {
  const total = opts.orders;
  if (!Number.isSafeInteger(total) || total < 1 || total > MAX_SEED_ORDERS)
    throw invalid('orders', `orders must be an integer from 1 to ${MAX_SEED_ORDERS}`);
  const project = await findProject(ctx.db, opts.projectId);
  if (!project) throw new DomainError('NotFound', `project ${opts.projectId} not found`);
  return seedProject(ctx.db, project, nowFor(project), opts);
}
