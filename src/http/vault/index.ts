import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/context.ts';
import type { KeyedCtx } from '../../services/crypto-envelope.ts';
import { storeCard } from '../../services/vault.ts';
import { ErrorBody, Uuid } from '../../domain/schemas/common.ts';
import { BasicAuth, requireApiKey } from '../auth.ts';
import { installRateLimit } from '../rate-limit.ts';

export const CardInput = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120, description: 'cardholder name' })),
    pan: Type.String({ pattern: '^[0-9]{12,19}$', format: 'card-number', description: 'card number, digits only, Luhn-valid, of a supported brand' }),
    expiry: Type.String({ pattern: '^(0[1-9]|1[0-2])[0-9]{4}$', description: 'MMYYYY' }),
    setup_token: Uuid({ description: "the transaction's setup_token: one use, valid 300 s after order creation" }),
  },
  { additionalProperties: false, $id: 'CardInput' },
);

export const VaultCard = Type.Object(
  {
    vault_token: Uuid(),
    truncated_pan: Type.String({ description: 'masked card number' }),
    brand: Type.String(),
    brands: Type.Array(Type.String()),
  },
  { $id: 'VaultCard' },
);

/** {vault_url}/v1/cards/: the card vault, behind the project's API key. */
export const vaultRoutes = (ctx: Ctx): FastifyPluginAsyncTypebox => async (app) => {
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
        response: { 201: VaultCard, 400: ErrorBody, 401: ErrorBody, 409: ErrorBody, 429: ErrorBody },
      },
    },
    async (req, reply) => reply.code(201).send(await storeCard(ctx as KeyedCtx, req.body, { projectId: req.project.id })),
  );
};
