import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/context.ts';
import { authenticate } from '../../services/payments.ts';
import { ErrorBody, TransactionParams, Uuid } from '../../domain/schemas/common.ts';
import { BasicAuth } from '../auth.ts';

export const AuthenticateInput = Type.Object(
  {
    vault_token: Uuid({ description: 'from the vault, for a card stored with this transaction' }),
    cvc: Type.String({ pattern: '^[0-9]{3}$', description: '3 digits' }),
  },
  { additionalProperties: false },
);

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody };

/** Server-to-server start of a card transaction: 3-D Secure, then the customer's redirect. */
export const paymentRoutes = (ctx: Ctx): FastifyPluginAsyncTypebox => async (app) => {
  app.post(
    '/v1/orders/:order_id/transactions/:transaction_id/authenticate/',
    {
      schema: {
        tags: ['payments'],
        summary: 'Start 3-D Secure authentication of a card transaction',
        security: BasicAuth,
        params: TransactionParams,
        body: AuthenticateInput,
        response: { 200: Type.Object({ redirect_url: Type.String({ format: 'uri' }) }), ...errors },
      },
    },
    async (req) => authenticate(ctx, req.project, req.params.order_id, req.params.transaction_id, req.body),
  );
};
