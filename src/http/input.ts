import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import { HttpError } from './errors.ts';

/** Deepest nesting of objects and arrays a body may have; Tender's own schemas need 5. */
const MAX_DEPTH = 32;

/** PostgreSQL's text and jsonb refuse NUL; JSON text must be well-formed UTF-16 to become UTF-8. */
// eslint-disable-next-line no-control-regex -- NUL is what this refuses (PostgreSQL text cannot hold it)
const BAD_TEXT = /[\u0000\p{Cs}]/u; // in unicode mode a surrogate pair is one code point: only lone ones match
const badText = (s: string) => BAD_TEXT.test(s);

const join = (path: string, key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

/**
 * The first problem of a parsed request part, without recursion (a stack of pending values), so
 * a body nested 100,000 deep is refused, not a stack overflow: nesting beyond MAX_DEPTH, or a
 * string or object key with a NUL or an unpaired surrogate. Names the field as the errors do.
 */
function inputProblem(value: unknown, part: string): { field: string; message: string } | undefined {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: '', depth: 0 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    const field = path || part;
    if (typeof v === 'string') {
      if (badText(v)) return { field, message: `${field} contains a NUL character or an unpaired surrogate` };
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (depth >= MAX_DEPTH) return { field: '', message: `${part} is nested deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: join(path, i), depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      if (badText(keys[i])) return { field, message: `${field} has a key with a NUL character or an unpaired surrogate` };
      stack.push({ v: (v as Record<string, unknown>)[keys[i]], path: join(path, keys[i]), depth: depth + 1 });
    }
  }
  return undefined;
}

const checkPart = (value: unknown, part: string) => {
  const problem = inputProblem(value, part);
  if (problem) throw new DomainError('ValidationError', problem.message, problem.field || undefined);
};

/**
 * Every request's text, where it enters: path parameters, query and body (JSON or a hosted
 * page's form) are checked before any other hook or the schema validation walks them.
 */
export function installInputChecks(app: FastifyInstance) {
  app.addHook('onRequest', async (req) => {
    const encoding = req.headers['content-encoding'];
    // bodies are read as sent: a compressed one would be taken for its bytes
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
      throw new HttpError('ValidationError', 'Content-Encoding is not supported: send the body uncompressed', 'Content-Encoding', 415);
  });
  app.addHook('preValidation', async (req: FastifyRequest) => {
    checkPart(req.params, 'path');
    checkPart(req.query, 'query');
    if (req.body !== undefined) checkPart(req.body, 'body');
  });
}
