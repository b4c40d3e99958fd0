import type { FastifyPluginAsync } from 'fastify';
import type { Ctx } from '../services/platform/context.ts';

/** A capability's routes, given the context. */
export type RoutePlugin = (ctx: Ctx) => FastifyPluginAsync;

/** Where each capability's routes are mounted; main.ts lists them (docs/architecture.md). */
export interface Routes {
  /** on the API host, behind the API key (Basic auth) */
  authenticated: RoutePlugin[];
  /** behind the API key, test projects only (403 on live) */
  test: RoutePlugin[];
  /** on the API host without an API key: hosted pages under /pay, bound to ids and tokens */
  public: RoutePlugin[];
  /** the other surfaces, each under its own base URL's path */
  vault: RoutePlugin[];
  'wallet-b-token': RoutePlugin[];
  portal: RoutePlugin[];
}
