import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { IDEAL_ISSUERS } from '../../domain/payment-methods.ts';
import { answer, Enum, errorAnswers, OrderIdParams } from '../../domain/schemas/common.ts';
import { orderExample } from '../../domain/schemas/examples.ts';
import { OrderView } from '../../domain/schemas/order.ts';
import { settleTransfer } from '../../services/payments/methods/sandbox.ts';
import { BasicAuth } from '../auth.ts';

const Issuer = Type.Object({ id: Type.String(), name: Type.String(), list_type: Type.String() });

/** GET /v1/ideal/issuers/: the sandbox banks, for the older clients' getIdealIssuers() (docs/payment-methods.md). */
export const methodRoutes =
  (_ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/ideal/issuers/',
      {
        schema: {
          tags: ['payment methods'],
          summary: 'The iDEAL banks (sandbox)',
          description:
            'The banks a customer may choose for iDEAL, as older clients (ginger-php getIdealIssuers(), ginger-python get_ideal_issuers) read them. Optional in an order: without `issuer_id` the customer chooses on the iDEAL page.',
          security: BasicAuth,
          response: { 200: answer('The iDEAL banks', Type.Array(Issuer), IDEAL_ISSUERS.slice(0, 2)), ...errorAnswers(401) },
        },
      },
      async () => IDEAL_ISSUERS.map((i) => ({ ...i })),
    );
  };

/** POST /v1/test/orders/{id}/bank-transfer/: the transfer arrives (exact amount), or the order's transfer expires. Test projects. */
export const methodTestRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/test/orders/:order_id/bank-transfer/',
      {
        schema: {
          tags: ['test'],
          summary: 'Simulate a bank transfer (or viacash) arriving, or expiring',
          description:
            '`paid` with `amount`: the money arrived; only the exact amount of the transaction completes it. `expired`: it never came. Answers the order.',
          security: BasicAuth,
          params: OrderIdParams,
          body: Type.Object(
            {
              outcome: Enum(['paid', 'expired']),
              amount: Type.Optional(
                Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'minor units: what arrived' }),
              ),
            },
            { additionalProperties: false, examples: [{ outcome: 'paid', amount: 1995 }] },
          ),
          response: {
            200: answer('The order after the transfer', OrderView, { ...orderExample, status: 'completed' }),
            ...errorAnswers(400, 401, 403, 404, 409),
          },
        },
      },
      async (req) => settleTransfer(ctx, req.project, req.params.order_id, req.body),
    );
  };
