import type { Ctx } from '../services/platform/context.ts';
import { listProjects } from '../store/platform/projects.ts';
import { createProject, type CreatedProject } from '../services/platform/tenancy.ts';
import { createFirstUser, type CreatedUser } from '../services/portal/users.ts';

/**
 * On an empty embedded store (the sandbox `npm start` makes), creates a merchant and a test
 * project so it is usable at once, and a portal user for that merchant (its generated password
 * is shown once). An operator's PostgreSQL starts empty: its first merchant and owner are made
 * on purpose (`tender project create`, `tender user create`; README "Running it for merchants"),
 * never an `admin@example.com` nobody asked for.
 */
export async function ensureFirstProject(ctx: Ctx): Promise<(CreatedProject & { portal_user: CreatedUser }) | undefined> {
  if (ctx.db.kind !== 'pglite') return undefined;
  if ((await listProjects(ctx.db)).length) return undefined;
  const project = await createProject(ctx, { name: 'My test shop', mode: 'test' });
  return { ...project, portal_user: await createFirstUser(ctx, project.merchant_id) };
}

/** True when the store has no project yet (an operator's PostgreSQL before its first merchant). */
export const hasNoProject = async (ctx: Ctx) => !(await listProjects(ctx.db)).length;
