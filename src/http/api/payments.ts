import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { authenticate } from '../../services/payments/card.ts';
import { answer, errorAnswers, TransactionParams, Uuid } from '../../domain/schemas/common.ts';
import { authenticateExample, redirectExample } from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';

const AuthenticateInput = Type.Object(
  {
    vault_token: Uuid({ description: 'from the vault, for a card stored with this transaction' }),
    cvc: Type.String({
      pattern: '^[0-9]{3}$',
      description: '3 digits (the hosted page also takes the 4 of American Express: docs/design.md)',
    }),
  },
  { additionalProperties: false, examples: [authenticateExample] },
);

const errors = errorAnswers(400, 401, 403, 404, 409);

/** Server-to-server start of a card transaction: 3-D Secure, then the customer's redirect. */
export const paymentRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/orders/:order_id/transactions/:transaction_id/authenticate/',
      {
        config: { callsAcquirer: true },
        schema: {
          tags: ['payments'],
          summary: 'Start 3-D Secure authentication of a card transaction',
          security: BasicAuth,
          params: TransactionParams,
          body: AuthenticateInput,
          response: {
            200: answer(
              '3-D Secure started: send the customer to redirect_url',
              Type.Object({ redirect_url: Type.String({ format: 'uri' }) }),
              redirectExample,
            ),
            ...errors,
          },
        },
      },
      async (req) => authenticate(ctx, req.project, req.params.order_id, req.params.transaction_id, req.body),
    );
  };
