import { normaliseCustomer } from '../customer.ts';

type Schema = {
  type?: unknown;
  $id?: string;
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  items?: Schema;
};

const isPlainObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

/**
 * A request body as real clients send it, made ready for validation against its schema:
 * - PHP encodes an empty array as `[]` whatever it stands for (`json_encode([])`), so an empty
 *   array where the schema wants an object counts as `{}` (`"extra": []`, `"customer": []`);
 * - a `Customer` is normalised (white space, postcode case, empty phone numbers: normaliseCustomer).
 * Free-form data (a record of unknown values, such as `extra`'s members) is left as it is.
 */
export function shapeBody(schema: Schema | undefined, value: unknown): unknown {
  if (!schema || typeof schema !== 'object') return value;
  if (schema.type === 'object' && Array.isArray(value) && value.length === 0) value = {};
  if (schema.type === 'array' && Array.isArray(value) && schema.items) return value.map((v) => shapeBody(schema.items, v));
  if (schema.type !== 'object' || !isPlainObject(value)) return value;
  const pattern = schema.patternProperties ? Object.values(schema.patternProperties)[0] : undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = shapeBody(schema.properties?.[k] ?? pattern, v);
  return schema.$id === 'Customer' ? normaliseCustomer(out) : out;
}
