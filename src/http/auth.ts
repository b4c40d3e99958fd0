import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Ctx } from '../services/platform/context.ts';
import { authenticate } from '../services/platform/tenancy.ts';
import type { ProjectRow } from '../domain/entities.ts';
import { requireTlsForLive } from './transport.ts';
import { DomainError } from '../domain/errors.ts';
import { throttleOf } from '../services/platform/throttle.ts';
import { noteActive } from '../services/platform/fair-share.ts';
import { statusOf } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    project: ProjectRow;
  }
}

/**
 * Basic authentication with the project's API key on every route of this plugin scope. Failed
 * attempts are counted per client address: over PUBLIC_RATE_LIMIT_PER_MINUTE they get 429, not
 * 401, until the minute passes (a valid key still gets in).
 */
export function requireApiKey(app: FastifyInstance, ctx: Ctx) {
  app.decorateRequest('project', null as unknown as ProjectRow);
  app.addHook('onRequest', async (req: FastifyRequest) => {
    try {
      req.project = await authenticate(ctx, req.headers.authorization);
    } catch (err) {
      if (err instanceof DomainError && statusOf(err) === 401)
        await throttleOf(ctx).limit('auth-failure', [req.ip], ctx.config.publicRateLimitPerMinute);
      throw err;
    }
    requireTlsForLive(req, req.project.mode, ctx.config.liveRequiresTls);
    noteActive(ctx, req.project.id);
  });
}

export const BasicAuth = [{ basicAuth: [] as string[] }];
