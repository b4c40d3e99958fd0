import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Ctx } from '../../services/context.ts';
import * as svc from '../../services/orders.ts';
import { OrderInput, OrderUpdate, OrderView, TransactionInput } from '../../domain/schemas/order.ts';
import { ErrorBody, OrderIdParams } from '../../domain/schemas/common.ts';
import { BasicAuth } from '../auth.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody };

export const orderRoutes = (ctx: Ctx): FastifyPluginAsyncTypebox => async (app) => {
  const tags = ['orders'];
  app.post('/v1/orders/', { schema: { summary: 'Create an order, with zero or one transaction', tags, security: BasicAuth, body: OrderInput, response: { 201: OrderView, ...errors } } }, async (req, reply) =>
    reply.code(201).send(await svc.createOrder(ctx, req.project, req.body)),
  );
  app.get('/v1/orders/:order_id/', { schema: { summary: 'Retrieve an order with its transactions', tags, security: BasicAuth, params: OrderIdParams, response: { 200: OrderView, ...errors } } }, async (req) =>
    svc.getOrder(ctx, req.project, req.params.order_id),
  );
  app.put('/v1/orders/:order_id/', { schema: { summary: "Update the merchant's fields of an order that is not final", tags, security: BasicAuth, params: OrderIdParams, body: OrderUpdate, response: { 200: OrderView, ...errors } } }, async (req) =>
    svc.updateOrder(ctx, req.project, req.params.order_id, req.body),
  );
  app.delete('/v1/orders/:order_id/', { schema: { summary: 'Cancel an order whose transaction has not been authorized', tags, security: BasicAuth, params: OrderIdParams, response: { 200: OrderView, ...errors } } }, async (req) =>
    svc.cancelOrder(ctx, req.project, req.params.order_id),
  );
  app.post(
    '/v1/orders/:order_id/transactions/',
    { schema: { summary: 'Start the transaction of an order created without one', tags, security: BasicAuth, params: OrderIdParams, body: TransactionInput, response: { 201: OrderView, ...errors } } },
    async (req, reply) => reply.code(201).send(await svc.startTransaction(ctx, req.project, req.params.order_id, req.body)),
  );
};
