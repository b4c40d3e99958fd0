import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { deliveryLog, resendWebhooks } from '../../services/webhooks/endpoints.ts';
import { projectDeliveryLog, resendDelivery, sendTestEvent } from '../../services/webhooks/log.ts';
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

const ProjectDelivery = Type.Object(
  {
    order_id: Type.Optional(Type.String({ format: 'uuid', description: 'absent for a test event' })),
    ...Delivery.properties,
    event: Type.String({ description: 'status_changed, or test for a test event' }),
  },
  { $id: 'ProjectWebhookDelivery' },
);
const ProjectDeliveryLog = Type.Object({ deliveries: Type.Array(ProjectDelivery) }, { $id: 'ProjectWebhookDeliveryLog' });
const LogQuery = Type.Object({
  status: Type.Optional(Type.String({ enum: ['pending', 'succeeded', 'failed'] })),
  event: Type.Optional(Type.String({ enum: ['status_changed', 'test'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});
const DeliveryIdParams = Type.Object({ delivery_id: Type.String({ format: 'uuid' }) });
const projectExample = {
  deliveries: [
    { order_id: webhookLogExample.order_id, ...webhookLogExample.deliveries[0] },
    { ...webhookLogExample.deliveries[0], event: 'test', target: 'project', resend: false },
  ],
};

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
    // Extensions (docs/webhooks.md "The project's log"): every delivery of the project, one sent again, a test event.
    app.get(
      '/v1/webhooks/deliveries/',
      {
        schema: {
          tags,
          security: BasicAuth,
          summary: "Extension: the project's webhook deliveries, failed ones first, then the newest",
          querystring: LogQuery,
          response: { 200: answer('Deliveries with their attempts', ProjectDeliveryLog, projectExample), ...errors },
        },
      },
      async (req) => projectDeliveryLog(ctx, req.project, req.query),
    );
    app.post(
      '/v1/webhooks/deliveries/:delivery_id/resend/',
      {
        schema: {
          tags,
          security: BasicAuth,
          summary: 'Extension: send one delivery again (a new delivery of the same order to the same URL)',
          description: 'No body. A test event is sent again as a new test event, at once.',
          params: DeliveryIdParams,
          response: {
            202: answer('Queued: the new delivery', ProjectDelivery, {
              ...projectExample.deliveries[0],
              resend: true,
              status: 'pending',
              attempts: [],
            }),
            ...errors,
          },
        },
      },
      async (req, reply) => reply.code(202).send(await resendDelivery(ctx, req.project, req.params.delivery_id)),
    );
    app.post(
      '/v1/webhooks/test/',
      {
        schema: {
          tags,
          security: BasicAuth,
          summary: "Extension: POST a signed test event to the project's webhook URL now",
          description:
            'No body. The receiver gets {"event":"test","project_id":...}, signed like every webhook. 403 without a project webhook URL.',
          response: { 200: answer('The test delivery with its one attempt', ProjectDelivery, projectExample.deliveries[1]), ...errors },
        },
      },
      async (req) => sendTestEvent(ctx, req.project),
    );
  };
