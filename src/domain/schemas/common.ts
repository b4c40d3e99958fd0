import { Type, type TSchema, type Static } from '@sinclair/typebox';
import { PAYABLE_CURRENCIES } from '../money.ts';

/** A string limited to the given values, as a plain JSON Schema enum (one clear Ajv error). */
export const Enum = <const T extends string>(values: readonly T[], opts: Record<string, unknown> = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });

export const Uuid = (opts: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...opts });
/** The payable ISO 4217 codes, listed, so the schema refuses what validation refuses (no XAU, XTS...). */
export const Currency = Type.Unsafe<string>({ type: 'string', enum: PAYABLE_CURRENCIES, description: 'ISO 4217 code' });
export const Amount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'minor units' });
export const Duration = Type.String({ minLength: 2, maxLength: 64, description: 'ISO 8601 duration, positive' });
/** Absolute http(s) URI: other schemes (javascript:, data:) are never followed. */
export const Url = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
export const Timestamp = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      status: Type.Integer(),
      type: Type.String(),
      value: Type.String(),
      field: Type.Optional(Type.String()),
    }),
  },
  { $id: 'Error' },
);

export const OrderIdParams = Type.Object({ order_id: Uuid() });
export const TransactionParams = Type.Object({ order_id: Uuid(), transaction_id: Uuid() });

export type { Static, TSchema };
