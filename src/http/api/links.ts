import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import * as svc from '../../services/links/payment-links.ts';
import { Amount, answer, Currency, Duration, errorAnswers, Url, Uuid } from '../../domain/schemas/common.ts';
import { PaymentMethodName } from '../../domain/schemas/order.ts';
import { linkExample, linkInputExample } from '../../domain/schemas/examples.ts';
import { LinkView } from '../../domain/schemas/link.ts';
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
