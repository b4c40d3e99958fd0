import type { RouteOptions } from 'fastify';
import { errorAnswers } from '../domain/schemas/common.ts';

/**
 * The error statuses any API route can answer besides its own, added to every documented route
 * so /openapi.json lists each status a client can meet (the fuzz test holds answers to it):
 * - 400: a path, query or header that breaks a rule (NUL, a missing Host), any route;
 * - 500: an unexpected failure, any route;
 * - 401 (no or a wrong key), 403 (a live project over plain HTTP), 429 (rate limit): behind a key;
 * - 404: a route with path parameters (an id of nothing, or of another project);
 * - 413 (too large), 415 (not JSON, or compressed): a POST, PUT or PATCH, which may carry a body.
 */
export function documentErrors(route: RouteOptions) {
  const schema = route.schema as
    (RouteOptions['schema'] & { hide?: boolean; security?: unknown[]; response?: Record<string, unknown> }) | undefined;
  if (!schema || schema.hide) return;
  const statuses = [400, 500];
  if (schema.security?.length) statuses.push(401, 403, 429);
  if (route.url.includes(':')) statuses.push(404);
  if ([route.method].flat().some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) statuses.push(413, 415);
  const response = (schema.response ??= {});
  const answers = errorAnswers(...statuses) as Record<number, unknown>;
  for (const status of statuses) response[status] ??= answers[status];
}
