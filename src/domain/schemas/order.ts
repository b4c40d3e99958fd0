import { Type, type Static } from '@sinclair/typebox';
import { Amount, Currency, Duration, Enum, Url } from './common.ts';
import { ADDRESS_PATTERN, NAME_PATTERN, POSTAL_CODE_PATTERN } from '../customer.ts';

const Text = (max: number, opts: Record<string, unknown> = {}) => Type.String({ maxLength: max, ...opts });
const strict = { additionalProperties: false } as const;

export const RECEIVER_TYPES = ['card-account', 'iban', 'email', 'phone-number', 'other'] as const;

export const Customer = Type.Object(
  {
    merchant_customer_id: Type.Optional(Text(255)),
    email_address: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    first_name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, pattern: NAME_PATTERN })),
    last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, pattern: NAME_PATTERN })),
    address_type: Type.Optional(Enum(['billing'])),
    address: Type.Optional(Type.String({ minLength: 1, maxLength: 120, pattern: ADDRESS_PATTERN })),
    postal_code: Type.Optional(Type.String({ minLength: 1, maxLength: 10, pattern: POSTAL_CODE_PATTERN })),
    city: Type.Optional(Type.String({ minLength: 1, maxLength: 120, pattern: ADDRESS_PATTERN })),
    state: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
    locale: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2,3}([_-][A-Za-z0-9]{2,8})*$', maxLength: 35 })),
    phone_numbers: Type.Optional(Type.Array(Type.String({ pattern: '^\\+?[0-9][0-9 ()./-]{3,30}$' }), { maxItems: 10 })),
    ip_address: Type.Optional(Type.Union([Type.String({ format: 'ipv4' }), Type.String({ format: 'ipv6' })])),
    // SDK extension fields (docs/design.md "Unknown fields")
    gender: Type.Optional(Text(32)),
    birthdate: Type.Optional(Type.String({ format: 'date' })),
    additional_addresses: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 10 })),
    user_agent: Type.Optional(Text(1024)),
  },
  { ...strict, $id: 'Customer' },
);

export const Client = Type.Object(
  {
    user_agent: Type.Optional(Text(1024)),
    platform_name: Type.Optional(Text(255)),
    platform_version: Type.Optional(Text(255)),
    plugin_name: Type.Optional(Text(255)),
    plugin_version: Type.Optional(Text(255)),
  },
  strict,
);

export const PaymentMethodDetailsInput = Type.Object(
  {
    receiver_account_number: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    receiver_account_number_type: Type.Optional(Enum(RECEIVER_TYPES)),
  },
  strict,
);

export const TransactionInput = Type.Object(
  {
    payment_method: Type.String({ minLength: 1, maxLength: 64 }),
    capture_mode: Type.Optional(Enum(['manual', 'delayed'])),
    expiration_period: Type.Optional(Duration),
    transaction_type: Type.Optional(Enum(['aft'])),
    payment_method_details: Type.Optional(PaymentMethodDetailsInput),
  },
  strict,
);

export const OrderInput = Type.Object(
  {
    merchant_order_id: Type.Optional(Text(255)),
    merchant_name: Type.Optional(Text(255)),
    description: Type.Optional(Text(1024)),
    currency: Currency,
    amount: Amount,
    expiration_period: Type.Optional(Duration),
    payment_methods: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { uniqueItems: true, maxItems: 20 })),
    transactions: Type.Optional(Type.Array(TransactionInput, { maxItems: 1 })),
    return_url: Type.Optional(Url),
    failure_url: Type.Optional(Url),
    webhook_url: Type.Optional(Url),
    customer: Type.Optional(Customer),
    client: Type.Optional(Client),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    order_lines: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 500 })),
  },
  { ...strict, $id: 'OrderInput' },
);
export type OrderInput = Static<typeof OrderInput>;
export type TransactionInput = Static<typeof TransactionInput>;
export type CustomerInput = Static<typeof Customer>;

export const OrderUpdate = Type.Object(
  {
    description: Type.Optional(Text(1024)),
    merchant_order_id: Type.Optional(Text(255)),
    return_url: Type.Optional(Url),
    failure_url: Type.Optional(Url),
    webhook_url: Type.Optional(Url),
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  strict,
);
export type OrderUpdate = Static<typeof OrderUpdate>;

/** Response shapes, loose on purpose: documented for OpenAPI, not used to strip output. */
const Any = Type.Record(Type.String(), Type.Unknown());
export const TransactionView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    order_id: Type.String({ format: 'uuid' }),
    status: Type.String(),
    currency: Type.String(),
    amount: Type.Integer(),
    credit_debit: Type.String(),
    payment_method: Type.Optional(Type.String()),
    payment_method_brand: Type.Optional(Type.String()),
    payment_method_details: Type.Optional(Any),
    payment_url: Type.Optional(Type.String()),
    is_capturable: Type.Boolean(),
    events: Type.Array(Any),
  },
  { additionalProperties: true },
);
export const OrderView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    project_id: Type.String({ format: 'uuid' }),
    merchant_id: Type.String({ format: 'uuid' }),
    status: Type.String(),
    currency: Type.String(),
    amount: Type.Integer(),
    flags: Type.Array(Type.String()),
    created: Type.String(),
    modified: Type.String(),
    order_url: Type.Optional(Type.String()),
    transactions: Type.Array(TransactionView),
  },
  { additionalProperties: true, $id: 'Order' },
);
