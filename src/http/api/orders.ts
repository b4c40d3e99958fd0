import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Ctx } from '../../services/context.ts';
import * as svc from '../../services/orders.ts';
import { OrderInput, OrderUpdate, OrderView, TransactionInput } from '../../domain/schemas/order.ts';
import { ErrorBody, OrderIdParams } from '../../domain/schemas/common.ts';
import { BasicAuth } from '../auth.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody };

export const orderRoutes = (ctx: Ctx): FastifyPluginAsyncTypebox => async (app) => {
  const tags = ['orders'];
  app.post('/v1/orders/', { schema: { tags, security: BasicAuth, body: OrderInput, response: { 201: OrderView, ...errors } } }, async (req, reply) =>
    reply.code(201).send(await svc.createOrder(ctx, req.project, req.body)),
  );
  app.get('/v1/orders/:order_id/', { schema: { tags, security: BasicAuth, params: OrderIdParams, response: { 200: OrderView, ...errors } } }, async (req) =>
    svc.getOrder(ctx, req.project, req.params.order_id),
  );
  app.put('/v1/orders/:order_id/', { schema: { tags, security: BasicAuth, params: OrderIdParams, body: OrderUpdate, response: { 200: OrderView, ...errors } } }, async (req) =>
    svc.updateOrder(ctx, req.project, req.params.order_id, req.body),
  );
  app.delete('/v1/orders/:order_id/', { schema: { tags, security: BasicAuth, params: OrderIdParams, response: { 200: OrderView, ...errors } } }, async (req) =>
    svc.cancelOrder(ctx, req.project, req.params.order_id),
  );
  app.post(
    '/v1/orders/:order_id/transactions/',
    { schema: { tags, security: BasicAuth, params: OrderIdParams, body: TransactionInput, response: { 201: OrderView, ...errors } } },
    async (req, reply) => reply.code(201).send(await svc.startTransaction(ctx, req.project, req.params.order_id, req.body)),
  );
};
