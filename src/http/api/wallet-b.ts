import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { configureRecipient, pinTokenClock, tokenizationParameters } from '../../services/wallets/keys.ts';
import { answer, errorAnswers } from '../../domain/schemas/common.ts';
import { recipientExample, tokenClockExample, tokenizationExample } from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';
import { WALLET_B } from '../../domain/payment-methods.ts';

const Tokenization = Type.Object({
  recipient_id: Type.String(),
  tokenization_specification: Type.Object({
    type: Type.String(),
    parameters: Type.Object({
      protocolVersion: Type.String(),
      publicKey: Type.String({ description: 'base64 uncompressed EC P-256 point' }),
    }),
  }),
  token_service_url: Type.String(),
});

const RecipientBody = Type.Object(
  {
    recipient_id: Type.Optional(
      Type.String({ maxLength: 100, description: 'merchant:<id> or gateway:<id>, as the wallet provider signs tokens for' }),
    ),
    private_key: Type.Optional(Type.String({ maxLength: 4096, description: 'recipient private key to import: base64 PKCS#8, EC P-256' })),
  },
  { additionalProperties: false, examples: [recipientExample] },
);

const errors = errorAnswers(400, 401, 403);

/** wallet-b-pay settings of the project: the tokenization parameters the token service decrypts for. */
export const walletBRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = [WALLET_B];
    app.get(
      '/v1/wallet-b-pay/tokenization/',
      {
        schema: {
          tags,
          summary: "The project's wallet-b-pay tokenization parameters",
          security: BasicAuth,
          response: { 200: answer('The tokenization parameters to give the wallet', Tokenization, tokenizationExample), ...errors },
        },
      },
      async (req) => tokenizationParameters(ctx, req.project),
    );
    app.put(
      '/v1/wallet-b-pay/tokenization/',
      {
        schema: {
          tags,
          summary: 'Set the recipient id, or import a recipient private key',
          security: BasicAuth,
          body: RecipientBody,
          response: { 200: answer('The tokenization parameters as now set', Tokenization, tokenizationExample), ...errors },
        },
      },
      async (req) => configureRecipient(ctx, req.project, req.body),
    );
  };

/** Test projects only: pins the clock wallet-b-pay tokens are checked against (replaying recorded tokens). */
export const walletBTestRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.put(
      '/v1/test/wallet-b-pay/clock/',
      {
        schema: {
          tags: ['test'],
          summary: 'Pin the token clock of wallet-b-pay (without now, or with null, it follows the project clock again)',
          security: BasicAuth,
          body: Type.Object(
            { now: Type.Optional(Type.String({ format: 'date-time' })) },
            { additionalProperties: false, examples: [tokenClockExample] },
          ),
          response: {
            200: answer('The token clock', Type.Object({ now: Type.String(), pinned: Type.Boolean() }), {
              now: '2026-11-25T10:15:00.000Z',
              pinned: true,
            }),
            ...errors,
          },
        },
      },
      async (req) => pinTokenClock(ctx, req.project, req.body.now ?? null),
    );
  };
