import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { deliveryLog, resendWebhooks } from '../../services/webhooks/endpoints.ts';
import { answer, errorAnswers, OrderIdParams } from '../../domain/schemas/common.ts';
import { webhookLogExample } from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';

const Attempt = Type.Object(
  {
    attempt: Type.Integer({ description: '1 for the first try' }),
    time: Type.Optional(Type.String({ description: 'when the attempt started (project clock); absent when it was interrupted' })),
    url: Type.String(),
    response_status: Type.Optional(Type.Integer({ description: "the receiver's HTTP status; only 2xx counts" })),
    response_excerpt: Type.Optional(
      Type.String({ description: "extension: the start of the receiver's answer (at most 300 bytes, control characters as spaces)" }),
    ),
    error: Type.Optional(Type.String({ description: 'why no response counted: timeout, connection refused, ...' })),
    duration_ms: Type.Optional(Type.Integer({ description: 'until the response headers, or the failure; absent when it was interrupted' })),
    interrupted: Type.Optional(
      Type.Boolean({
        description:
          'true when the service stopped while the attempt was under way: no outcome was recorded, and the receiver may have had it',
      }),
    ),
    next_retry: Type.Optional(Type.String({ description: 'when the next attempt was scheduled; absent after the last one' })),
  },
  { $id: 'WebhookAttempt' },
);

const Delivery = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'sent as the webhook-id header; the same on every retry' }),
    event: Type.String({ description: 'status_changed' }),
    order_status: Type.Optional(
      Type.String({ description: 'the order status the change led to (not sent: receivers retrieve the order)' }),
    ),
    url: Type.String(),
    target: Type.String({ description: 'why this URL: order, project or payment_link' }),
    resend: Type.Boolean(),
    status: Type.String({ enum: ['pending', 'succeeded', 'failed'] }),
    created: Type.String(),
    completed: Type.Optional(Type.String()),
    next_attempt: Type.Optional(Type.String({ description: 'while pending: when the next attempt is due' })),
    attempts: Type.Array(Attempt),
  },
  { $id: 'WebhookDelivery' },
);

const DeliveryLog = Type.Object(
  { order_id: Type.String({ format: 'uuid' }), deliveries: Type.Array(Delivery) },
  { $id: 'WebhookDeliveryLog' },
);

const errors = errorAnswers(400, 401, 403, 404);

/** The delivery log of an order's webhooks, and a way to send them again. */
export const webhookRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['webhooks'];
    app.get(
      '/v1/orders/:order_id/webhooks/',
      {
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Webhook delivery log of an order',
          params: OrderIdParams,
          response: {
            200: answer("The order's webhook deliveries, newest first, with each attempt", DeliveryLog, webhookLogExample),
            ...errors,
          },
        },
      },
      async (req) => deliveryLog(ctx, req.project, req.params.order_id),
    );
    app.post(
      '/v1/orders/:order_id/webhooks/resend/',
      {
        schema: {
          tags,
          security: BasicAuth,
          summary: "Queue a new status_changed delivery to the order's webhook URLs",
          description: 'No body.',
          params: OrderIdParams,
          response: {
            202: answer('Queued: the delivery log with the new delivery pending', DeliveryLog, {
              ...webhookLogExample,
              deliveries: [{ ...webhookLogExample.deliveries[0], resend: true, status: 'pending', attempts: [] }],
            }),
            ...errors,
          },
        },
      },
      async (req, reply) => reply.code(202).send(await resendWebhooks(ctx, req.project, req.params.order_id)),
    );
  };
