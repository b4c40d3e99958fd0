import { Type, type Static } from '@sinclair/typebox';
import { Enum } from './common.ts';
import { PAYMENT_METHODS } from '../payment-methods.ts';
import { LINK_STATUSES } from '../link-status.ts';

const Ids = Type.Array(Type.String({ format: 'uuid' }));
/** The spec's Payment link, as the API answers it (services/links/payment-links.ts renderLink). */
export const LinkView = Type.Object(
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
export type LinkView = Static<typeof LinkView>;
