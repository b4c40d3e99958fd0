import type { Ctx } from '../platform/context.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { invalid } from '../../domain/errors.ts';
import { isTimeZone } from '../../domain/project.ts';
import { setProjectTimeZone } from '../../store/platform/projects.ts';
import { audit, type Actor } from './actions.ts';

/** Settings > Time zone: the IANA zone the portal shows the project's times in. A name Intl does not know changes nothing. */
export async function saveTimeZone(ctx: Ctx, actor: Actor, project: ProjectRow, zone: string) {
  const name = zone.trim();
  if (!isTimeZone(name))
    throw invalid('time_zone', `unknown time zone ${JSON.stringify(zone.trim().slice(0, 64))}: give an IANA name such as Europe/Amsterdam`);
  await setProjectTimeZone(ctx.db, project.id, name);
  ctx.keyCache?.clear(); // a project read through the key cache has its new zone now
  await audit(ctx, actor, 'time_zone_set', project.id, { time_zone: name });
  return name;
}
