import { readFileSync } from 'node:fs';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { UUID_PATTERN } from '../domain/ids.ts';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Ctx } from '../services/platform/context.ts';
import { degradations, linkStates, readinessProblems } from '../services/platform/health.ts';
import { installObservation } from './observe.ts';
import { fastifyTracing, requestIdOf } from '../telemetry/tracing.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './errors.ts';
import { installInputChecks } from './input.ts';
import { documentErrors } from './documented-errors.ts';
import { isCardNumber } from '../domain/card.ts';
import { installTransportRules } from './transport.ts';
import { requireApiKey } from './auth.ts';
import { installRefusalBrake } from './refusal-brake.ts';
import { installRateLimit, limitAnonymous, payResourceOf } from './rate-limit.ts';
import { idempotency } from './idempotency.ts';
import { requireTestProject } from './api/test-tools.ts';
import type { Routes } from './registry.ts';
import { docsRoutes, type Json } from './docs.ts';
import { shapeBody } from '../domain/schemas/shape.ts';
import { lazyValidators } from './lazy-validation.ts';

/** Path prefix of a surface whose base URL is on this host: `http://h/vault` -> `/vault`. */
export const prefixOf = (url: string) => new URL(url).pathname.replace(/\/+$/, '');

/** Drops `null` members (null means absent), except inside free-form merchant data. */
function stripNulls(value: unknown, key?: string): unknown {
  if (key === 'extra' || key === 'order_lines') return value;
  if (Array.isArray(value)) return value.map((v) => stripNulls(v));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = stripNulls(v, k);
    return out;
  }
  return value;
}

/** The Fastify app of this process: the routes of its surfaces (config.surfaces) mounted one way. */
export async function buildApp(ctx: Ctx, routes: Routes): Promise<FastifyInstance> {
  const { tls } = ctx.config;
  // A missing Host is answered by our hook (with the error body) rather than by Node (an empty 400).
  const server = { requireHostHeader: false };
  const transport: object = {
    ...(tls
      ? { https: { ...server, cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), minVersion: 'TLSv1.2' } }
      : { http: server }),
    trustProxy: ctx.config.trustProxy, // a number is a hop count (proxy-addr), which Fastify's types leave out
  };
  const validators = lazyValidators();
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // the request id is the trace id (the caller's, from traceparent): X-Request-Id, logs and spans agree
    genReqId: (req) => requestIdOf(req.headers),
    // one line per request, written when it is answered (http/observe.ts)
    logController: new LogController({ disableRequestLogging: true }),
    ...transport,
    frameworkErrors,
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    bodyLimit: 1024 * 1024,
    return503OnClosing: false,
    // route validators compile on first use or right after listen, not before (src/http/lazy-validation.ts)
    schemaController: { compilersFactory: { buildValidator: validators.buildValidator as never } },
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false, allErrors: false },
      // ajv-formats' uuid also takes `urn:uuid:...`, which PostgreSQL's uuid type refuses (a 500): the plain form only.
      onCreate: (ajv: { addFormat(name: string, format: RegExp | { validate: (s: string) => boolean }): unknown }) => {
        ajv.addFormat('uuid', UUID_PATTERN);
        ajv.addFormat('card-number', { validate: isCardNumber });
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // the request id first: the request span, made next, takes it as its trace id
  installObservation(app, ctx);
  const tracing = fastifyTracing();
  if (tracing) await app.register(tracing);
  // a second after listening, so the first requests do not wait behind the compiler
  app.addHook('onListen', async () => {
    const warm = () =>
      void validators.warm().catch((err) => ctx.log.error({ err: (err as Error).message }, 'a route schema does not compile'));
    setTimeout(warm, 1000).unref();
  });
  // Responses are documented by their schemas but written as they are (no field stripping).
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app);
  app.addHook('onRoute', documentErrors);
  installTransportRules(app);
  installInputChecks(app);
  app.removeContentTypeParser('text/plain'); // JSON only (415), hosted pages add their form parser below
  // On shutdown, answers to requests still in flight close their keep-alive connection, so close()
  // does not wait for those sockets' keep-alive timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.addHook('preValidation', async (req) => {
    // then as real clients send it: PHP's `[]` for `{}` (a whole body too: no route takes an array),
    // customers normalised (domain/schemas/shape.ts)
    if (Array.isArray(req.body) && req.body.length === 0) req.body = {};
    if (req.body && typeof req.body === 'object') req.body = shapeBody(req.routeOptions.schema?.body as never, stripNulls(req.body));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Tender payment API', version: '1.0.0', description: 'Card and wallet payments. See docs/api.md.' },
      components: { securitySchemes: { basicAuth: { type: 'http', scheme: 'basic', description: 'API key as username, empty password' } } },
    },
    hideUntagged: true,
    // read when the document is first generated (after listen), so PORT=0 shows the real port
    transformObject: (d) => ('openapiObject' in d ? { ...d.openapiObject, servers: [{ url: ctx.config.publicBaseUrl }] } : d.swaggerObject),
    // shared schemas keep their $id (Customer, Order, Error) as component names instead of def-0, def-1...
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  // the reference page: rendered here from the document, no script, no CDN (src/http/docs.ts)
  await app.register(docsRoutes(() => app.swagger() as Json));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
    // every reason at once: the database, migrations, a stop under way
    const [problems, degraded] = await Promise.all([readinessProblems(ctx), degradations(ctx)]);
    // and each acquirer link's state (connected, signed on, in flight, last echo) when a node has one;
    // a link down leaves the node ready, degraded: only the live projects bound to it cannot pay
    const links = linkStates(ctx);
    const shown = { ...(degraded.length ? { degraded } : {}), ...(links.length ? { acquirer_links: links } : {}) };
    if (!problems.length) return { status: degraded.length ? 'degraded' : 'ready', ...shown };
    return reply.code(503).send({ error: { status: 503, type: 'ServerError', value: problems.join('; ') }, problems, ...shown });
  });

  const surfaces = new Set(ctx.config.surfaces);
  if (surfaces.has('api')) {
    await app.register(async (api) => {
      requireApiKey(api, ctx);
      // before the rate limit: a project that keeps being refused waits before its next refusal too
      installRefusalBrake(api, ctx.config.limits, (req) => (req.project ? `project:${req.project.id}` : `address:${req.ip}`));
      installRateLimit(api, ctx.config.rateLimitPerMinute, ctx.config.redisUrl);
      idempotency(api, ctx);
      await api.register(async (t) => {
        t.addHook('preHandler', requireTestProject);
        for (const p of routes.test) await t.register(p(ctx));
      });
      for (const p of routes.authenticated) await api.register(p(ctx));
    });
    // hosted pages: every form post is limited per client address and per order, link or transaction;
    // their forms post urlencoded bodies, every other route takes JSON only (415)
    await app.register(async (pub) => {
      await pub.register(formbody);
      installRefusalBrake(pub, ctx.config.limits, (req) => `pay:${req.ip}`);
      limitAnonymous(pub, ctx, 'pay-post', { subjectsOf: (req) => [payResourceOf(req.url)] });
      for (const p of routes.public) await pub.register(p(ctx));
    });
  }
  const elsewhere = { vault: ctx.config.vaultUrl, 'wallet-b-token': ctx.config.walletBTokenUrl, portal: ctx.config.portalUrl } as const;
  for (const [surface, url] of Object.entries(elsewhere) as [keyof typeof elsewhere, string][]) {
    if (!surfaces.has(surface)) continue;
    await app.register(
      async (scope) => {
        // the portal's pages post urlencoded forms, like the hosted pages; the other surfaces take JSON only
        if (surface === 'portal') {
          await scope.register(formbody);
          installRefusalBrake(scope, ctx.config.limits, (req) => `portal:${req.ip}`);
        }
        for (const p of routes[surface]) await scope.register(p(ctx));
      },
      { prefix: prefixOf(url) },
    );
  }
  return app as unknown as FastifyInstance;
}
