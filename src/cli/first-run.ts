import type { Ctx } from '../services/context.ts';
import { listProjects } from '../store/projects.ts';
import { createProject, type CreatedProject } from '../services/tenancy.ts';

/** On an empty store, creates a merchant and a test project so `npm start` is usable at once. */
export async function ensureFirstProject(ctx: Ctx): Promise<CreatedProject | undefined> {
  if ((await listProjects(ctx.db)).length) return undefined;
  return createProject(ctx, { name: 'My test shop', mode: 'test' });
}
