import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/context.ts';
import type { KeyedCtx } from '../../services/crypto-envelope.ts';
import { createSession, setMerchantIdentity } from '../../services/wallets.ts';
import { ErrorBody } from '../../domain/schemas/common.ts';
import { BasicAuth } from '../auth.ts';

export const SessionBody = Type.Object(
  {
    validationUrl: Type.String({ format: 'uri', maxLength: 2048, description: "validationURL of the browser's onvalidatemerchant event: https on the provider's validation hosts" }),
    merchantIdentifier: Type.String({ minLength: 1, maxLength: 64, description: 'the project id without hyphens' }),
    displayName: Type.String({ minLength: 1, maxLength: 64, description: 'shop name shown to the customer' }),
    initiativeContext: Type.String({ minLength: 1, maxLength: 253, description: 'domain name of the payment page' }),
  },
  { additionalProperties: false, $id: 'WalletASessionRequest' },
);

const IdentityBody = Type.Object(
  {
    certificate: Type.String({ minLength: 1, maxLength: 65_536, description: 'merchant identity certificate, PEM' }),
    private_key: Type.String({ minLength: 1, maxLength: 65_536, description: 'its private key, PEM (stored encrypted)' }),
  },
  { additionalProperties: false },
);

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 502: ErrorBody, 504: ErrorBody };

/** wallet-a-pay: merchant validation sessions, and the merchant identity live validation presents. */
export const walletARoutes = (ctx: Ctx): FastifyPluginAsyncTypebox => async (app) => {
  const kctx = ctx as KeyedCtx;
  const tags = ['wallet-a-pay'];
  app.post(
    '/v1/wallet-a-pay/sessions/',
    {
      schema: {
        tags,
        summary: 'Validate the merchant for a wallet-a-pay payment sheet',
        description:
          'Called from the onvalidatemerchant event. Live projects ask the wallet provider over mutual TLS with the merchant identity; ' +
          'test projects get a sandbox session of the same shape, offline. Pass sessionData to completeMerchantValidation().',
        security: BasicAuth,
        body: SessionBody,
        response: { 200: Type.Object({ sessionData: Type.Unknown() }), ...errors },
      },
    },
    async (req) => createSession(kctx, req.project, req.body),
  );
  app.put(
    '/v1/wallet-a-pay/merchant-identity/',
    {
      schema: {
        tags,
        summary: 'Set the merchant identity certificate used for live merchant validation',
        security: BasicAuth,
        body: IdentityBody,
        response: {
          200: Type.Object({ subject: Type.String(), issuer: Type.String(), valid_to: Type.String(), fingerprint256: Type.String() }),
          ...errors,
        },
      },
    },
    async (req) => setMerchantIdentity(kctx, req.project, req.body),
  );
};
