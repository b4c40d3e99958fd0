import { createRequire } from 'node:module';

/**
 * Fastify's own validator compiler (Ajv, through @fastify/ajv-compiler), deferred: each route's
 * validators are compiled on the route's first request, or by warm() once the server listens,
 * instead of all (about a hundred schemas, a few hundred milliseconds) before it can listen.
 * The compiler, its options and its error objects are Fastify's defaults; only the time moves.
 * One difference: a query string is text, so its values are coerced to their schema's types
 * (`?limit=5` is the integer 5), while bodies stay strict (a JSON `"5"` is not an amount).
 */
type Validate = ((data: unknown, dataCxt?: unknown) => unknown) & { errors?: unknown };
type Compile = (route: { schema: unknown; method: string; url: string; httpPart?: string }) => Validate;
type Options = { customOptions?: Record<string, unknown> };

const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));

export function lazyValidators() {
  let factory: ((externalSchemas: unknown, options: Options) => Compile) | undefined;
  const pending: Array<() => unknown> = [];
  const buildValidator = (externalSchemas: unknown, options: Options): Compile => {
    let strict: Compile | undefined;
    let coercing: Compile | undefined;
    const made = (o: Options) => (factory ??= fromFastify('@fastify/ajv-compiler')())(externalSchemas, o);
    const compile = (route: Parameters<Compile>[0]) =>
      route.httpPart === 'querystring'
        ? (coercing ??= made({ ...options, customOptions: { ...options.customOptions, coerceTypes: true } }))(route)
        : (strict ??= made(options))(route);
    return (route) => {
      let fn: Validate | undefined;
      const compiled = () => (fn ??= compile(route));
      pending.push(compiled);
      const lazy: Validate = (data, dataCxt) => {
        const f = compiled();
        const result = f(data, dataCxt);
        lazy.errors = f.errors;
        return result;
      };
      // Fastify passes the parent object (dataCxt) to validators that carry a schemaEnv, as Ajv's do.
      return Object.assign(lazy, { schemaEnv: true, errors: null });
    };
  };
  /** Compiles what no request compiled yet, a few at a time between other work; resolves when done. */
  const warm = async () => {
    while (pending.length) {
      pending.splice(0, 4).forEach((compiled) => compiled());
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { buildValidator, warm };
}
