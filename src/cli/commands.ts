import type { Ctx } from '../services/context.ts';
import { createProject, rotateKey } from '../services/tenancy.ts';
import { listProjects } from '../store/projects.ts';

/**
 * Administrative commands. The CLI runs them on the store directly, or, when a server holds
 * the embedded store, through that server's admin endpoint (see store/lock.ts).
 */
export type Command = (ctx: Ctx & { masterKey: Buffer }, args: Record<string, any>) => Promise<unknown>;

export const commands: Record<string, Command> = {
  'project create': (ctx, a) => createProject(ctx, { name: String(a.name), mode: a.mode, merchantId: a.merchant }),
  'key rotate': (ctx, a) => rotateKey(ctx, String(a.project)),
  'project list': async (ctx) =>
    (await listProjects(ctx.db)).map((p) => ({ project_id: p.id, merchant_id: p.merchant_id, name: p.name, mode: p.mode })),
};
