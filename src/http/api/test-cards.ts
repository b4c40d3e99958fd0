import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { testCardViews } from '../../services/payments/sandbox.ts';
import { answer, Enum, errorAnswers } from '../../domain/schemas/common.ts';
import { testCardsExample } from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';

const TestCardView = Type.Object({
  pan: Type.String(),
  brand: Type.String(),
  brands: Type.Array(Type.String()),
  three_ds: Enum(['Y', 'C', 'U', 'R'], { description: 'Y frictionless, C challenge, U not enrolled, R rejected' }),
  challenge_code: Type.Optional(Type.String()),
  result: Enum(['accepted', 'declined', 'error', 'late_decline']),
  reason: Type.Optional(Type.String()),
  fault: Type.Optional(
    Enum(['slow', 'lost_answer', 'processing_follow_ups'], {
      description: 'a fault of an acquirer over a network: slow answer, lost answer, captures and refunds that answer processing',
    }),
  ),
  liability_shift: Type.Boolean(),
  description: Type.String(),
});

/** GET /v1/test/cards/: the simulator's test card table (test projects). */
export const testCardRoutes =
  (_ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/test/cards/',
      {
        schema: {
          tags: ['test'],
          summary: "The simulated acquirer's test cards",
          security: BasicAuth,
          response: {
            200: answer(
              'The test cards and what any other card does',
              Type.Object({ cards: Type.Array(TestCardView), default_behaviour: Type.String() }),
              testCardsExample,
            ),
            ...errorAnswers(403),
          },
        },
      },
      async () => ({
        cards: testCardViews(),
        default_behaviour:
          'any other Luhn-valid card number of a known brand is approved with frictionless 3-D Secure (Y); an expiry date in the past declines with expired_card',
      }),
    );
  };
