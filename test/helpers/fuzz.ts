import fc from 'fast-check';
import type { Json } from './json.ts';

/** A JSON Schema as /openapi.json writes it (the parts the generators read). */
export type Schema = Record<string, Json>;

const NASTY = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e',
  '%00',
  "'; DROP TABLE orders; --",
  '<script>',
  ['..', '..', 'etc', 'passwd'].join('/'),
  '𝕏',
  ' ',
  '',
];

/** Strings of every kind: plain, unicode, the well-known nasty ones, very long. */
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(...NASTY),
  fc.string({ minLength: 300, maxLength: 3000 }),
);

/** Any JSON value, including deeply nested ones. */
const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 20, max: 2000 }).map((n) => JSON.parse('['.repeat(n) + ']'.repeat(n)) as unknown),
  anyText,
  fc.constantFrom(null, true, -1, 0, 1.5, 2 ** 53, -0, 1e308),
);

/** Values that fit a schema, as far as a schema can say (formats and patterns included). */
function valid(schema: Schema, resolve: (ref: string) => Schema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.$ref) return valid(resolve(schema.$ref), resolve, depth);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((s: Schema) => valid(s, resolve, depth)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return validString(schema);
    case 'integer':
      return fc.integer({ min: Math.max(schema.minimum ?? -1000, -(2 ** 31)), max: Math.min(schema.maximum ?? 10 ** 6, 2 ** 31) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return depth > 4
        ? fc.constant([])
        : fc.array(valid(schema.items ?? {}, resolve, depth + 1), {
            minLength: schema.minItems ?? 0,
            maxLength: Math.min(schema.maxItems ?? 3, 3),
          });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const props: Record<string, Schema> = schema.properties ?? {};
      if (!Object.keys(props).length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
      const arbs = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, valid(s, resolve, depth + 1)]));
      return fc.record(arbs, { requiredKeys: (schema.required ?? []).filter((k: string) => k in props) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validString(schema: Schema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'uri':
      return fc.webUrl({ validSchemes: ['https'] });
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'email':
      return fc.emailAddress();
    case 'card-number':
      return fc.constantFrom('4111111111111111', '5555555555554444', '378282246310005');
  }
  if (schema.pattern)
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length <= (schema.maxLength ?? 1e9) && s.length >= (schema.minLength ?? 0));
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
}

/** A valid value broken in one place: a member dropped, retyped, made nasty text, or an unknown one added. */
function broken(schema: Schema, resolve: (ref: string) => Schema): fc.Arbitrary<unknown> {
  return fc
    .tuple(valid(schema, resolve), fc.nat(), fc.constantFrom('drop', 'retype', 'text', 'unknown', 'deep'), anyJson, anyText)
    .map(([value, pick, how, json, text]) => {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return how === 'deep' ? json : text;
      const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      const keys = Object.keys(copy);
      const key = keys.length ? keys[pick % keys.length] : 'x';
      if (how === 'drop') delete copy[key];
      else if (how === 'retype') copy[key] = json;
      else if (how === 'text') copy[key] = text;
      else if (how === 'unknown') copy[`unknown_${pick % 100}`] = json;
      else copy[key] = JSON.parse('{"a":'.repeat(40 + (pick % 100)) + '1' + '}'.repeat(40 + (pick % 100)));
      return copy;
    });
}

/** A raw request body: valid JSON of the schema, a broken one, any JSON at all, or bytes that are not JSON. */
export function body(schema: Schema | undefined, resolve: (ref: string) => Schema): fc.Arbitrary<{ raw?: string; contentType?: string }> {
  const json = (a: fc.Arbitrary<unknown>) => a.map((v) => ({ raw: JSON.stringify(v), contentType: 'application/json' }));
  const garbage = fc.oneof(
    anyText.map((raw) => ({ raw, contentType: 'application/json' })),
    fc.constantFrom(
      { raw: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
      { raw: '<x/>', contentType: 'application/xml' },
      { raw: '{}', contentType: 'text/plain' },
    ),
    fc.constant({}),
  );
  if (!schema) return fc.oneof(fc.constant({}), json(anyJson), garbage);
  return fc.oneof(
    { arbitrary: json(valid(schema, resolve)), weight: 3 },
    { arbitrary: json(broken(schema, resolve)), weight: 3 },
    json(anyJson),
    garbage,
  );
}
