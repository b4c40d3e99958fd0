import type { Ctx } from '../../platform/context.ts';
import { findProject, updateProjectSettings } from '../../../store/platform/projects.ts';
import { invalid, notFound } from '../../../domain/errors.ts';
import { isSandboxMethod, methodInfo, PAYMENT_METHODS } from '../../../domain/payment-methods.ts';
import { activeMethods, settingsOf } from '../../../domain/project.ts';
import { withActiveMethods } from './rules.ts';
import type { ProjectId } from '../../../domain/ids.ts';

/**
 * Which payment methods a project offers (CLI `project methods`, the portal's Settings, tests):
 * exactly `names`, or `all` of them. An unknown name is refused by name.
 */
export async function setActiveMethods(ctx: Ctx, projectId: ProjectId, names: string[] | 'all') {
  const project = await findProject(ctx.db, projectId);
  if (!project) throw notFound('project');
  // no provider stands behind the sandbox methods: a live project cannot turn them on (amex and pay-now run on the card and the page)
  const sandboxOnly = (m: string) => isSandboxMethod(m) && !['card', 'hosted'].includes(methodInfo(m).kind);
  const list = names === 'all' ? PAYMENT_METHODS.filter((m) => project.mode === 'test' || !sandboxOnly(m)) : names;
  const refused = project.mode === 'live' ? list.find(sandboxOnly) : undefined;
  if (refused) throw invalid('payment_methods', `payment method ${refused} is available in test projects only (a sandbox)`);
  const settings = withActiveMethods(project.settings, list);
  await updateProjectSettings(ctx.db, project.id, settings);
  ctx.keyCache?.clear(); // a request authenticated from the cache must see the new methods now
  return { project_id: project.id, payment_methods: activeMethods(settingsOf(settings)) };
}
