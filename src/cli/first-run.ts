import type { Ctx } from '../services/platform/context.ts';
import { listProjects } from '../store/platform/projects.ts';
import { createProject, type CreatedProject } from '../services/platform/tenancy.ts';
import { createFirstUser, type CreatedUser } from '../services/portal/users.ts';

/**
 * On an empty store, creates a merchant and a test project so `npm start` is usable at once,
 * and a portal user for that merchant (its generated password is shown once).
 */
export async function ensureFirstProject(ctx: Ctx): Promise<(CreatedProject & { portal_user: CreatedUser }) | undefined> {
  if ((await listProjects(ctx.db)).length) return undefined;
  const project = await createProject(ctx, { name: 'My test shop', mode: 'test' });
  return { ...project, portal_user: await createFirstUser(ctx, project.merchant_id) };
}
