import { Type, type Static, type TOptional, type TUnknown } from '@sinclair/typebox';
import { Amount, Currency, Duration, Enum, Url } from './common.ts';
import { RiskView } from './risk.ts';
import { PAYMENT_METHODS, CARD } from '../payment-methods.ts';
import { ORDER_STATUSES, TRANSACTION_STATUSES } from '../status.ts';
import {
  customerExample,
  orderExample,
  orderInputExample,
  orderUpdateExample,
  transactionExample,
  transactionInputExample,
} from './examples.ts';

/** A payment method of the service (which ones a project offers: GET /v1/merchants/self/projects/self/). */
export const PaymentMethodName = Type.String({
  minLength: 1,
  maxLength: 64,
  description: `one of ${PAYMENT_METHODS.join(', ')}, or an alias the operator configured for one (PAYMENT_METHOD_ALIASES)`,
  examples: [CARD],
});
import { ADDRESS_PATTERN, ADDRESS_TYPES, NAME_PATTERN, POSTAL_CODE_PATTERN } from '../customer.ts';

const Text = (max: number, opts: Record<string, unknown> = {}) => Type.String({ maxLength: max, ...opts });
const strict = { additionalProperties: false } as const;

const RECEIVER_TYPES = ['card-account', 'iban', 'email', 'phone-number', 'other'] as const;

const Name = () => Type.String({ minLength: 1, maxLength: 120, pattern: NAME_PATTERN });
const AddressLine = () => Type.String({ minLength: 1, maxLength: 120, pattern: ADDRESS_PATTERN });
const PostalCode = () => Type.String({ minLength: 1, maxLength: 10, pattern: POSTAL_CODE_PATTERN });

/** An entry of `customer.additional_addresses` (an SDK extension: the plugin SDK's Address entity). */
const AdditionalAddress = Type.Object(
  {
    address_type: Type.Optional(Enum(ADDRESS_TYPES)),
    address: Type.Optional(AddressLine()),
    street: Type.Optional(AddressLine()),
    housenumber: Type.Optional(Text(32)),
    postal_code: Type.Optional(PostalCode()),
    city: Type.Optional(AddressLine()),
    state: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    // the pattern only: this is the client's own record of the address, not checked against ISO 3166
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
  },
  strict,
);

const Customer = Type.Object(
  {
    merchant_customer_id: Type.Optional(Text(255)),
    email_address: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    first_name: Type.Optional(Name()),
    last_name: Type.Optional(Name()),
    address_type: Type.Optional(Enum(ADDRESS_TYPES)),
    address: Type.Optional(AddressLine()),
    postal_code: Type.Optional(PostalCode()),
    city: Type.Optional(AddressLine()),
    state: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    locale: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*$', maxLength: 35 })),
    phone_numbers: Type.Optional(Type.Array(Type.String({ pattern: '^\\+?[0-9][0-9 ()./-]{3,30}$' }), { maxItems: 10 })),
    // The client's record of where the shopper was, kept as sent: the plugin SDK fills it from
    // REMOTE_ADDR, whatever that holds ('test' in its own tests), and reads it back unchanged.
    ip_address: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[!-~]+$',
        description: 'IPv4 or IPv6 address; other printable text is kept as sent',
      }),
    ),
    // SDK extension fields (docs/design.md "Unknown fields")
    gender: Type.Optional(Text(32)),
    birthdate: Type.Optional(Type.String({ format: 'date' })),
    additional_addresses: Type.Optional(Type.Array(AdditionalAddress, { maxItems: 10 })),
    user_agent: Type.Optional(Text(1024)),
  },
  { ...strict, $id: 'Customer', examples: [customerExample] },
);

const Client = Type.Object(
  {
    user_agent: Type.Optional(Text(1024)),
    platform_name: Type.Optional(Text(255)),
    platform_version: Type.Optional(Text(255)),
    plugin_name: Type.Optional(Text(255)),
    plugin_version: Type.Optional(Text(255)),
  },
  strict,
);

/**
 * Open to other members here so that the payment method is checked first (an unknown method is
 * reported as such, not as its details' unknown field); services/payments/orders.ts then refuses members
 * not listed, by name.
 */
export const PaymentMethodDetailsInput = Type.Object(
  {
    receiver_account_number: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    receiver_account_number_type: Type.Optional(Enum(RECEIVER_TYPES)),
    verified_terms_of_service: Type.Optional(
      Type.Boolean({ description: 'afterpay: the customer accepted the terms (the WooCommerce plugin sends it)' }),
    ),
    issuer_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'iDEAL: the bank the customer chose in the shop (GET /v1/ideal/issuers/); optional' }),
    ),
  },
  { additionalProperties: true },
);

export const TransactionInput = Type.Object(
  {
    payment_method: PaymentMethodName,
    capture_mode: Type.Optional(
      Enum(['manual', 'delayed'], {
        description:
          "manual: capture by POST .../captures/; delayed: captured by the service after the project's capture window; absent: captured at once",
      }),
    ),
    expiration_period: Type.Optional(Duration),
    transaction_type: Type.Optional(
      Enum(['aft'], { description: 'aft: an account funding transaction (needs the receiver and a billing address)' }),
    ),
    payment_method_details: Type.Optional(PaymentMethodDetailsInput),
  },
  { ...strict, examples: [transactionInputExample] },
);

export const OrderInput = Type.Object(
  {
    merchant_order_id: Type.Optional(Text(255)),
    merchant_name: Type.Optional(Text(255)),
    description: Type.Optional(Text(1024)),
    currency: Currency,
    amount: Amount,
    expiration_period: Type.Optional(Duration),
    payment_methods: Type.Optional(
      Type.Array(PaymentMethodName, {
        uniqueItems: true,
        maxItems: 20,
        description: 'the methods order_url offers (default: every active one)',
      }),
    ),
    transactions: Type.Optional(Type.Array(TransactionInput, { maxItems: 1 })),
    return_url: Type.Optional(Url),
    failure_url: Type.Optional(Url),
    webhook_url: Type.Optional(Url),
    customer: Type.Optional(Customer),
    client: Type.Optional(Client),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    order_lines: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 500 })),
  },
  { ...strict, $id: 'OrderInput', examples: [orderInputExample] },
);
export type OrderInput = Static<typeof OrderInput>;
export type TransactionInput = Static<typeof TransactionInput>;

/** Fields of the order's representation that a PUT may repeat unchanged but never change. */
export const READ_ONLY_FIELDS = [
  'id',
  'project_id',
  'merchant_id',
  'merchant_name',
  'currency',
  'amount',
  'status',
  'flags',
  'created',
  'modified',
  'completed',
  'expiration_period',
  'payment_methods',
  'client',
  'order_url',
  'transactions',
  'refunded_amount',
  'related_order_id',
  'related_payment_link_id',
  'related_orders',
  'refund_orders',
  'chargeback_orders',
  'reversal_orders',
  'capture_of_order_id',
  'void_of_order_id',
  'refund_of_order_id',
  'chargeback_of_order_id',
  'reversal_of_order_id',
] as const;

/**
 * PUT takes the order as GET returns it (the SDKs' update flow): the merchant's fields, validated
 * as on creation, and the read-only ones, compared with the order by services/payments/orders.ts.
 */
export const OrderUpdate = Type.Object(
  {
    description: Type.Optional(Text(1024)),
    merchant_order_id: Type.Optional(Text(255)),
    return_url: Type.Optional(Url),
    failure_url: Type.Optional(Url),
    webhook_url: Type.Optional(Url),
    customer: Type.Optional(Customer),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    order_lines: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 500 })),
    ...(Object.fromEntries(
      READ_ONLY_FIELDS.map((f) => [f, Type.Optional(Type.Unknown({ description: 'read-only: accepted when unchanged' }))]),
    ) as Record<(typeof READ_ONLY_FIELDS)[number], TOptional<TUnknown>>),
  },
  { ...strict, $id: 'OrderUpdate', examples: [orderUpdateExample] },
);
export type OrderUpdate = Static<typeof OrderUpdate>;

/** Response shapes, loose on purpose: documented for OpenAPI, not used to strip output. */
const Any = Type.Record(Type.String(), Type.Unknown());
const TransactionView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    order_id: Type.String({ format: 'uuid' }),
    status: Enum(TRANSACTION_STATUSES),
    currency: Type.String(),
    amount: Type.Integer(),
    credit_debit: Enum(['credit', 'debit'], {
      description: 'credit: money to the merchant; debit: back to the customer (refunds, chargebacks)',
    }),
    payment_method: Type.Optional(Enum(PAYMENT_METHODS)),
    capture_mode: Type.Optional(Enum(['manual', 'delayed'])),
    payment_method_brand: Type.Optional(Type.String()),
    payment_method_details: Type.Optional(Any),
    payment_url: Type.Optional(Type.String()),
    is_capturable: Type.Boolean(),
    risk: Type.Optional(RiskView),
    events: Type.Array(Any),
  },
  { additionalProperties: true, examples: [transactionExample] },
);
export const OrderView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    project_id: Type.String({ format: 'uuid' }),
    merchant_id: Type.String({ format: 'uuid' }),
    status: Enum(ORDER_STATUSES),
    currency: Type.String(),
    amount: Type.Integer(),
    flags: Type.Array(Type.String()),
    created: Type.String(),
    modified: Type.String(),
    order_url: Type.Optional(Type.String()),
    transactions: Type.Array(TransactionView),
  },
  { additionalProperties: true, $id: 'Order', examples: [orderExample] },
);
/**
 * An order as the API answers it (services/payments/order-view.ts renderOrder): the schema's
 * fields, the ones it leaves loose (additionalProperties) typed as renderOrder writes them, and
 * any other.
 */
export type OrderView = Omit<Static<typeof OrderView>, 'transactions'> &
  Record<string, unknown> & {
    transactions: TransactionView[];
    merchant_order_id?: string;
    description?: string;
    customer?: Static<typeof Customer>;
    refunded_amount?: number;
    related_order_id?: string;
    related_orders?: string[];
  };
/** A transaction as the API answers it (renderTransaction), typed the same way. */
export type TransactionView = Omit<Static<typeof TransactionView>, 'events'> &
  Record<string, unknown> & {
    events: Array<{ event: string; id: string; occurred: string; noticed: string; source: string }>;
    reason?: string;
    outcomes?: { three_d_secure?: { trans_status?: string; eci?: string } } & Record<string, unknown>;
  };
