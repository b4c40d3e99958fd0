import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { nowFor } from '../../services/platform/context.ts';
import { answer, Duration, errorAnswers } from '../../domain/schemas/common.ts';
import { clockAnswerExample, clockExample } from '../../domain/schemas/examples.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import { durationMs, isoSpan, isPositiveDuration } from '../../domain/duration.ts';
import { advanceTestClock } from '../../services/platform/tenancy.ts';
import { BasicAuth } from '../auth.ts';

export async function requireTestProject(req: FastifyRequest) {
  if (req.project.mode !== 'test') throw new DomainError('Forbidden', 'test endpoints are available to test projects only');
}

/** What the API reference says of the test clock (docs/design.md, test projects). */
const CLOCK_DESCRIPTION = [
  "A test project's clock only moves forward: `advance` moves it ahead of real time for good, and every time the",
  "project writes from then on (an order's `created`, `modified` and `completed`, events, the webhook log) is in",
  "that clock, so new orders are dated ahead by `offset_ms` (`ahead`; the portal's test banner says so too).",
  'Nothing puts it back: for a clock at real time, use a new test project. Without `advance` this only tells the',
  'clock and runs the jobs due.',
].join(' ');

/** Endpoints that simulate the outside world. Test projects only (see requireTestProject). */
export const testRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['test'];
    app.post(
      '/v1/test/clock/run-due-jobs/',
      {
        config: { runsJobs: true },
        schema: {
          summary: "Advance the test project's clock and run the jobs that became due",
          description: CLOCK_DESCRIPTION,
          tags,
          security: BasicAuth,
          body: Type.Optional(Type.Object({ advance: Type.Optional(Duration) }, { additionalProperties: false, examples: [clockExample] })),
          response: {
            200: answer(
              "The project's clock now, and how many jobs ran",
              Type.Object({
                clock: Type.String({ description: "the project's clock now: the time its new orders, events and logs are dated" }),
                offset_ms: Type.Integer({ description: 'how far the clock is ahead of real time, in milliseconds (0: not moved)' }),
                ahead: Type.String({ description: 'the same as an ISO 8601 duration (PT31M; PT0S when not moved)' }),
                jobs_run: Type.Integer(),
              }),
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
        const offset_ms = Number(req.project.clock_offset_ms);
        return { clock: nowFor(req.project).toISOString().replace('Z', '+00:00'), offset_ms, ahead: isoSpan(offset_ms), jobs_run };
      },
    );
  };
