import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { nowFor } from '../../services/platform/context.ts';
import { answer, Duration, errorAnswers } from '../../domain/schemas/common.ts';
import { clockAnswerExample, clockExample } from '../../domain/schemas/examples.ts';
import { ApiError, invalid } from '../../domain/errors.ts';
import { durationMs, isPositiveDuration } from '../../domain/duration.ts';
import { advanceTestClock } from '../../services/platform/tenancy.ts';
import { BasicAuth } from '../auth.ts';

export async function requireTestProject(req: FastifyRequest) {
  if (req.project.mode !== 'test') throw new ApiError('Forbidden', 'test endpoints are available to test projects only');
}

/** Endpoints that simulate the outside world. Test projects only (see requireTestProject). */
export const testRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['test'];
    app.post(
      '/v1/test/clock/run-due-jobs/',
      {
        schema: {
          summary: "Advance the test project's clock and run the jobs that became due",
          tags,
          security: BasicAuth,
          body: Type.Optional(Type.Object({ advance: Type.Optional(Duration) }, { additionalProperties: false, examples: [clockExample] })),
          response: {
            200: answer(
              "The project's clock now, and how many jobs ran",
              Type.Object({ clock: Type.String(), offset_ms: Type.Integer(), jobs_run: Type.Integer() }),
              clockAnswerExample,
            ),
            ...errorAnswers(400, 403),
          },
        },
      },
      async (req) => {
        const advance = req.body?.advance;
        if (advance !== undefined) {
          if (!isPositiveDuration(advance)) throw invalid('advance', 'advance must be a positive ISO 8601 duration');
          req.project.clock_offset_ms = await advanceTestClock(ctx, req.project.id, durationMs(advance));
        }
        const jobs_run = await ctx.dueWork.settle(req.project.id);
        return { clock: nowFor(req.project).toISOString().replace('Z', '+00:00'), offset_ms: req.project.clock_offset_ms, jobs_run };
      },
    );
  };
