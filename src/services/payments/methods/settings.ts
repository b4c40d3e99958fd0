import type { Ctx } from '../../platform/context.ts';
import { findProject, updateProjectSettings } from '../../../store/platform/projects.ts';
import { notFound } from '../../../domain/errors.ts';
import { PAYMENT_METHODS, activeMethods, settingsOf } from '../../../domain/project.ts';
import { withActiveMethods } from './rules.ts';

/**
 * Which payment methods a project offers (CLI `project methods`, the portal's Settings, tests):
 * exactly `names`, or `all` of them. An unknown name is refused by name.
 */
export async function setActiveMethods(ctx: Ctx, projectId: string, names: string[] | 'all') {
  const project = await findProject(ctx.db, projectId);
  if (!project) throw notFound('project');
  const list = names === 'all' ? [...PAYMENT_METHODS] : names;
  const settings = withActiveMethods(project.settings, list);
  await updateProjectSettings(ctx.db, project.id, settings);
  ctx.keyCache?.clear(); // a request authenticated from the cache must see the new methods now
  return { project_id: project.id, payment_methods: activeMethods(settingsOf(settings)) };
}
