import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { createSession, setMerchantIdentity } from '../../services/wallets/keys.ts';
import { importProcessingKey, paymentProcessing } from '../../services/wallets/wallet-a.ts';
import { answer, errorAnswers } from '../../domain/schemas/common.ts';
import {
  identityAnswerExample,
  identityExample,
  processingAnswerExample,
  processingKeyExample,
  walletASessionExample,
} from '../../domain/schemas/examples.ts';
import { BasicAuth } from '../auth.ts';
import { WALLET_A } from '../../domain/payment-methods.ts';

const SessionBody = Type.Object(
  {
    validationUrl: Type.String({
      format: 'uri',
      maxLength: 2048,
      description: "validationURL of the browser's onvalidatemerchant event: https on the provider's validation hosts",
    }),
    merchantIdentifier: Type.String({ minLength: 1, maxLength: 64, description: 'the project id without hyphens' }),
    displayName: Type.String({ minLength: 1, maxLength: 64, description: 'shop name shown to the customer' }),
    initiativeContext: Type.String({ minLength: 1, maxLength: 253, description: 'domain name of the payment page' }),
  },
  { additionalProperties: false, $id: 'WalletASessionRequest', examples: [walletASessionExample] },
);

const IdentityBody = Type.Object(
  {
    certificate: Type.String({ minLength: 1, maxLength: 65_536, description: 'merchant identity certificate, PEM' }),
    private_key: Type.String({ minLength: 1, maxLength: 65_536, description: 'its private key, PEM (stored encrypted)' }),
  },
  { additionalProperties: false, examples: [identityExample] },
);

const ProcessingKeyBody = Type.Object(
  { private_key: Type.String({ minLength: 1, maxLength: 65_536, description: 'EC P-256 private key, PEM (stored encrypted)' }) },
  { additionalProperties: false, examples: [processingKeyExample] },
);

const ProcessingAnswer = Type.Object({
  merchant_identifier: Type.String({ description: 'the project id without hyphens: its SHA-256 is the token key derivation party V' }),
  public_key: Type.String({ description: 'the payment processing public key, PEM: the key of the payment processing certificate' }),
  public_key_hash: Type.String({ description: "base64 SHA-256 of the public key: tokens' header.publicKeyHash" }),
});

const errors = errorAnswers(400, 401, 403, 502, 504);

/** wallet-a-pay: merchant validation sessions, and the merchant identity live validation presents. */
export const walletARoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = [WALLET_A];
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
          response: {
            200: answer(
              'The merchant session: pass sessionData to completeMerchantValidation()',
              Type.Object({ sessionData: Type.Unknown() }),
              {
                sessionData: {
                  merchantIdentifier: '0dacfae3d4324561bd422aeb2d14c388',
                  displayName: 'Mug shop',
                  domainName: 'pay.example.com',
                  epochTimestamp: 1764065700000,
                  expiresAt: 1764069300000,
                  nonce: 'a1b2c3d4',
                  signature: '...',
                },
              },
            ),
            ...errors,
          },
        },
      },
      async (req) => createSession(ctx, req.project, req.body),
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
            200: answer(
              'The certificate now in use',
              Type.Object({ subject: Type.String(), issuer: Type.String(), valid_to: Type.String(), fingerprint256: Type.String() }),
              identityAnswerExample,
            ),
            ...errors,
          },
        },
      },
      async (req) => setMerchantIdentity(ctx, req.project, req.body),
    );
    app.get(
      '/v1/wallet-a-pay/payment-processing/',
      {
        schema: {
          tags,
          summary: 'The payment processing key wallet-a-pay tokens are encrypted to',
          description: 'Made with the project on first use; the private key never leaves Tender.',
          security: BasicAuth,
          response: {
            200: answer(
              'The payment processing public key and the identifiers tokens are made for',
              ProcessingAnswer,
              processingAnswerExample,
            ),
            ...errors,
          },
        },
      },
      async (req) => paymentProcessing(ctx, req.project),
    );
    app.put(
      '/v1/wallet-a-pay/payment-processing/',
      {
        schema: {
          tags,
          summary: 'Import the payment processing private key (the previous key is retired)',
          security: BasicAuth,
          body: ProcessingKeyBody,
          response: { 200: answer('The imported key, now in use', ProcessingAnswer, processingAnswerExample), ...errors },
        },
      },
      async (req) => importProcessingKey(ctx, req.project, req.body),
    );
  };
