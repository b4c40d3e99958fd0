import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import * as svc from '../../services/links/payment-links.ts';
import { Amount, answer, Currency, Duration, Enum, errorAnswers, Url, Uuid } from '../../domain/schemas/common.ts';
import { PaymentMethodName } from '../../domain/schemas/order.ts';
import { PAYMENT_METHODS } from '../../domain/project.ts';
import { linkExample, linkInputExample } from '../../domain/schemas/examples.ts';
import { LINK_STATUSES } from '../../domain/link-status.ts';
import { BasicAuth } from '../auth.ts';

/** The writable fields of the spec's Payment link; anything else is refused by name. */
const LinkInput = Type.Object(
  {
    merchant_order_id: Type.String({ minLength: 1, maxLength: 255 }),
    amount: Amount,
    currency: Currency,
    description: Type.Optional(Type.String({ maxLength: 1024 })),
    payment_methods: Type.Optional(
      Type.Array(PaymentMethodName, {
        uniqueItems: true,
        maxItems: 20,
        description: 'the methods the link offers (default: every active one)',
      }),
    ),
    expiration_period: Type.Optional(Duration),
    return_url: Type.Optional(Url),
    webhook_url: Type.Optional(Url),
  },
  { additionalProperties: false, $id: 'PaymentLinkInput', examples: [linkInputExample] },
);
// The service's own input type must accept what the schema lets through.
const _fits: (x: Static<typeof LinkInput>) => svc.LinkInput = (x) => x;
void _fits;

const Ids = Type.Array(Type.String({ format: 'uuid' }));
const LinkView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    project_id: Type.String({ format: 'uuid' }),
    merchant_id: Type.String({ format: 'uuid' }),
    merchant_order_id: Type.String(),
    amount: Type.Integer(),
    currency: Type.String(),
    description: Type.Optional(Type.String()),
    payment_methods: Type.Optional(Type.Array(Enum(PAYMENT_METHODS))),
    expiration_period: Type.String(),
    return_url: Type.Optional(Type.String()),
    webhook_url: Type.Optional(Type.String()),
    payment_url: Type.String({ description: 'the link to send to the customer' }),
    status: Type.Unsafe<string>({ type: 'string', enum: [...LINK_STATUSES] }),
    reason: Type.String({ description: 'why the link has its status' }),
    completed_order_id: Type.Optional(Type.String({ format: 'uuid' })),
    orders: Type.Record(Type.String(), Ids, { description: 'order ids grouped by order status' }),
    created: Type.String(),
    modified: Type.String(),
    completed: Type.Optional(Type.String()),
  },
  { additionalProperties: true, $id: 'PaymentLink' },
);

const LinkParams = Type.Object({ payment_link_id: Uuid() });
const errors = errorAnswers(400, 401, 403, 404);

export const linkRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['payment links'];
    app.post(
      '/v1/paymentlinks/',
      {
        schema: {
          summary: 'Create a payment link',
          description:
            'A link to send to the customer (payment_url): each visit can make a new order from it until one is paid or the link expires.',
          tags,
          security: BasicAuth,
          body: LinkInput,
          response: { 201: answer('The payment link created', LinkView, linkExample), ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await svc.createLink(ctx, req.project, req.body)),
    );
    app.get(
      '/v1/paymentlinks/:payment_link_id/',
      {
        schema: {
          summary: 'Retrieve a payment link with its status and orders',
          tags,
          security: BasicAuth,
          params: LinkParams,
          response: { 200: answer('The payment link', LinkView, linkExample), ...errors },
        },
      },
      async (req) => svc.getLink(ctx, req.project, req.params.payment_link_id),
    );
  };
