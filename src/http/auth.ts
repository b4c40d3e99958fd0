import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Ctx } from '../services/context.ts';
import { authenticate } from '../services/tenancy.ts';
import type { ProjectRow } from '../store/projects.ts';
import { requireTlsForLive } from './transport.ts';

declare module 'fastify' {
  interface FastifyRequest {
    project: ProjectRow;
  }
}

/** Basic authentication with the project's API key on every route of this plugin scope. */
export function requireApiKey(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('project', null as unknown as ProjectRow);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    req.project = await authenticate(ctx, req.headers.authorization);
    requireTlsForLive(req, req.project.mode, ctx.config.liveRequiresTls);
  });
}

export const BasicAuth = [{ basicAuth: [] as string[] }];
