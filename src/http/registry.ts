import type { FastifyPluginAsync } from 'fastify';
import type { Ctx } from '../services/context.ts';
import type { Surface } from '../config.ts';

/**
 * Where each capability plugs its routes in. Modules add themselves in src/http/routes.ts, so
 * app.ts does not change when a capability is added.
 */
export type RoutePlugin = (ctx: Ctx) => FastifyPluginAsync<any>;

export const apiPlugins: {
  /** behind the API key (Basic auth) */
  authenticated: RoutePlugin[];
  /** behind the API key, test projects only (403 on live) */
  test: RoutePlugin[];
  /** on the API host without an API key: hosted pages under /pay, bound to ids and tokens */
  public: RoutePlugin[];
} = { authenticated: [], test: [], public: [] };

export const surfacePlugins: Record<Exclude<Surface, 'api'>, RoutePlugin[]> = { vault: [], 'wallet-b-token': [], portal: [] };
