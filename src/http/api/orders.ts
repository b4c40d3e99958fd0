import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Ctx } from '../../services/platform/context.ts';
import * as svc from '../../services/payments/orders.ts';
import { OrderInput, OrderUpdate, OrderView, TransactionInput } from '../../domain/schemas/order.ts';
import { answer, errorAnswers, OrderIdParams } from '../../domain/schemas/common.ts';
import { orderExample, orderUpdateExample } from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';

const errors = errorAnswers(400, 401, 403, 404, 409, 422);

const CANCELLED = {
  ...orderExample,
  status: 'cancelled',
  transactions: orderExample.transactions.map((t) => ({ ...t, status: 'cancelled' })),
};

export const orderRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['orders'];
    app.post(
      '/v1/orders/',
      {
        schema: {
          summary: 'Create an order, with zero or one transaction',
          tags,
          security: BasicAuth,
          body: OrderInput,
          response: {
            201: answer(
              'The order created: with its transaction and payment_url when one was sent, else with order_url, the hosted page that offers every method',
              OrderView,
              orderExample,
            ),
            ...errors,
          },
        },
      },
      async (req, reply) => reply.code(201).send(await svc.createOrder(ctx, req.project, req.body)),
    );
    app.get(
      '/v1/orders/:order_id/',
      {
        schema: {
          summary: 'Retrieve an order with its transactions',
          tags,
          security: BasicAuth,
          params: OrderIdParams,
          response: { 200: answer('The order with its transactions and their events', OrderView, orderExample), ...errors },
        },
      },
      async (req) => svc.getOrder(ctx, req.project, req.params.order_id),
    );
    app.put(
      '/v1/orders/:order_id/',
      {
        schema: {
          summary: "Update the merchant's fields of an order that is not final",
          tags,
          security: BasicAuth,
          params: OrderIdParams,
          body: OrderUpdate,
          response: { 200: answer('The order as updated', OrderView, { ...orderExample, ...orderUpdateExample }), ...errors },
        },
      },
      async (req) => svc.updateOrder(ctx, req.project, req.params.order_id, req.body),
    );
    app.delete(
      '/v1/orders/:order_id/',
      {
        schema: {
          summary: 'Cancel an order whose transaction has not been authorized',
          tags,
          security: BasicAuth,
          params: OrderIdParams,
          response: { 200: answer('The cancelled order: its transaction and the order are cancelled', OrderView, CANCELLED), ...errors },
        },
      },
      async (req) => svc.cancelOrder(ctx, req.project, req.params.order_id),
    );
    app.post(
      '/v1/orders/:order_id/transactions/',
      {
        schema: {
          summary: 'Start the transaction of an order created without one',
          tags,
          security: BasicAuth,
          params: OrderIdParams,
          body: TransactionInput,
          response: {
            201: answer('The order with its new transaction (payment_url: where the customer pays)', OrderView, orderExample),
            ...errors,
          },
        },
      },
      async (req, reply) => reply.code(201).send(await svc.startTransaction(ctx, req.project, req.params.order_id, req.body)),
    );
  };
