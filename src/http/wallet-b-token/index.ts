import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { tokenize } from '../../services/wallets/keys.ts';
import { answer, errorAnswers, Uuid } from '../../domain/schemas/common.ts';
import { tokenizeAnswerExample, tokenizeExample } from '../../domain/schemas/examples.ts';
import { limitAnonymous } from '../rate-limit.ts';
import { throttleOf } from '../../services/platform/throttle.ts';
import { WALLET_B } from '../../domain/payment-methods.ts';

/**
 * {wallet_b_token_url}/tokens/ and /test/tokens/: the wallet-b-pay token service. No API key
 * (spec "Authentication" 6): a request is bound to the transaction's one-use setupToken.
 */

const TokenizeBody = Type.Object(
  {
    walletBPayMessage: Type.String({ minLength: 1, maxLength: 65_536, description: 'the payment token from the wallet, as a string' }),
    setupToken: Uuid({ description: "the transaction's setup_token: one use, valid 300 s after order creation" }),
    transactionId: Uuid(),
  },
  { additionalProperties: false, $id: 'WalletBTokenize', examples: [tokenizeExample] },
);

const TokenizeAnswer = Type.Object({
  vaultToken: Uuid(),
  cryptogram: Type.String({ description: 'empty for PAN_ONLY' }),
  eciIndicator: Type.String({ description: 'empty for PAN_ONLY, and when the wallet gave none' }),
});

/** A refused token's error also carries `code`, the check that failed (docs/wallet-b-token.md). */
const RefusedBody = Type.Object({
  error: Type.Object({
    status: Type.Integer(),
    type: Type.String(),
    value: Type.String(),
    field: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
  }),
});

export const walletBTokenRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    // anonymous callers: limited per client address, and per transaction once the body names it
    limitAnonymous(app, ctx, 'wallet-b-token');
    app.addHook('preHandler', async (req) => {
      const txn = (req.body as { transactionId?: unknown } | undefined)?.transactionId;
      if (typeof txn === 'string')
        await throttleOf(ctx).limit('wallet-b-token', [`transaction:${txn.toLowerCase()}`], ctx.config.publicRateLimitPerMinute);
    });
    for (const test of [false, true]) {
      app.post(
        test ? '/test/tokens/' : '/tokens/',
        {
          schema: {
            tags: [WALLET_B],
            summary: test ? 'Tokenize a wallet-b-pay token of the test environment' : 'Tokenize a wallet-b-pay token',
            description:
              "Verifies and decrypts the token with the project's keys, vaults its card against the setupToken and answers the vault token. " +
              (test
                ? "Root keys: the test set, which includes the project's sandbox root key. Test projects only."
                : 'Root keys: the production set.'),
            body: TokenizeBody,
            response: {
              200: answer('The token is verified and its card vaulted: pay with vaultToken', TokenizeAnswer, tokenizeAnswerExample),
              400: answer('The token was refused: error.code names the check that failed (docs/wallet-b-token.md)', RefusedBody, {
                error: {
                  status: 400,
                  type: 'ValidationError',
                  value: 'the token signature does not verify',
                  field: 'walletBPayMessage',
                  code: 'signature',
                },
              }),
              ...errorAnswers(403, 409, 429),
            },
          },
        },
        async (req) => tokenize(ctx, req.body, { test }),
      );
    }
  };
