import type { FastifyPluginAsync } from 'fastify';
import type { Ctx } from '../../services/context.ts';

/** The merchant portal. For now a placeholder page that points to the API docs. */
export const portalRoutes = (ctx: Ctx): FastifyPluginAsync => async (app) => {
  app.get('/', { schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Tender portal</title></head>` +
          `<body style="font-family:system-ui;max-width:40rem;margin:3rem auto;padding:0 1rem"><h1>Tender portal</h1>` +
          `<p>The merchant portal is not built yet. Manage projects with <code>npx tender</code> and read the <a href="${ctx.config.publicBaseUrl}/docs">API documentation</a>.</p></body></html>`,
      ),
  );
};
