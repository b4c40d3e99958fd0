import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { storeCard } from '../../services/vault/cards.ts';
import { answer, errorAnswers } from '../../domain/schemas/common.ts';
import { CardInput, VaultCard } from '../../domain/schemas/card.ts';
import { vaultCardExample } from '../../domain/schemas/examples.ts';
import { BasicAuth, requireApiKey } from '../auth.ts';
import { installRateLimit } from '../rate-limit.ts';

/** {vault_url}/v1/cards/: the card vault, behind the project's API key. */
export const vaultRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    requireApiKey(app, ctx);
    installRateLimit(app, ctx.config.rateLimitPerMinute, ctx.config.redisUrl, 'vault');
    app.post(
      '/v1/cards/',
      {
        schema: {
          tags: ['vault'],
          summary: 'Store a card against a setup_token',
          security: BasicAuth,
          body: CardInput,
          response: {
            201: answer('The card is stored: use vault_token to start the payment', VaultCard, vaultCardExample),
            ...errorAnswers(400, 401, 409, 429),
          },
        },
      },
      async (req, reply) => reply.code(201).send(await storeCard(ctx, req.body, { projectId: req.project.id, project: req.project })),
    );
  };
