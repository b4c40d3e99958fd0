import { readFileSync } from 'node:fs';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { loadCheckout, outcomeOf, transactionOf, type Checkout } from '../../services/payments/checkout.ts';
import { billingNeeded, payOnPage, payWithWalletB } from '../../services/wallets/pay.ts';
import { deviceBilling } from '../../services/wallets/billing.ts';
import { recipientKeys } from '../../services/wallets/keys.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import { formatMinor } from '../../domain/currency.ts';
import { answer, errorAnswers, TransactionParams, Uuid } from '../../domain/schemas/common.ts';
import { walletBPayExample, walletPayAnswerExample } from '../../domain/schemas/examples.ts';
import { checkCsrf, csrfKey, originAllowed } from './security.ts';
import { WALLET_B, type WalletMethod } from '../../domain/payment-methods.ts';

/**
 * The wallet-b-pay pay step and what the hosted page's device wallet button needs:
 *   POST /pay/{order_id}/select-payment-method/wallet-b-pay/{transaction_id}/  pay step (spec), bound to the ids and vaultToken
 *   GET  /pay/assets/wallets.js                                                the button script (script-src 'self')
 *   GET  /pay/{order_id}/wallet-b-pay/config/                                  the Payment Request data of the order
 *   POST /pay/{order_id}/wallet-b-pay/device/                                  the device's token (and the billing address the
 *                                                                              order needs): token service + pay step
 * No API key (spec "Authentication" 6); the page routes are bound to a CSRF token as well.
 */

export const BrowserInfo = {
  browser_info_screen_width: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'pixels' })),
  browser_info_screen_height: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000, description: 'pixels' })),
  browser_info_color_depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 64, description: 'bits' })),
  browser_info_user_agent: Type.Optional(Type.String({ maxLength: 2048 })),
  browser_info_time_zone_offset: Type.Optional(
    Type.Integer({ minimum: -1440, maximum: 1440, description: 'minutes, as getTimezoneOffset() gives it' }),
  ),
  browser_info_language: Type.Optional(
    Type.String({ minLength: 1, maxLength: 35, pattern: '^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$', description: 'language tag such as nl-NL' }),
  ),
  browser_info_java_enabled: Type.Optional(Type.Boolean()),
};

const WalletPayBody = Type.Object(
  {
    vaultToken: Uuid({ description: 'from the token service, or from the vault in the decrypted payload flow' }),
    cryptogram: Type.Optional(Type.String({ maxLength: 256, pattern: '^[A-Za-z0-9+/=_-]*$', description: 'empty for PAN_ONLY' })),
    eciIndicator: Type.Optional(Type.String({ pattern: '^([0-9]{2})?$', description: 'empty when the wallet gave none' })),
    ...BrowserInfo,
  },
  { additionalProperties: false, $id: 'WalletBPay', examples: [walletBPayExample] },
);

export const WalletPayAnswer = Type.Object({
  is_successful: Type.Boolean(),
  redirect_url: Type.String({ format: 'uri' }),
  reason: Type.String({ description: "'' when authorized; authentication_required for 3-D Secure; else why it failed" }),
});

const DeviceBody = Type.Object(
  {
    csrf: Type.String({ maxLength: 200 }),
    walletBPayMessage: Type.String({ minLength: 1, maxLength: 65_536 }),
    transaction_id: Type.Optional(Uuid()),
    billingAddress: Type.Optional(
      Type.Object(
        {},
        { additionalProperties: true, maxProperties: 32, description: 'paymentMethodData.info.billingAddress, when the order needs one' },
      ),
    ),
    ...BrowserInfo,
  },
  { additionalProperties: false },
);

const SCRIPT = readFileSync(new URL('./assets/wallets.js', import.meta.url), 'utf8');

/**
 * The Payment Request method data of wallet-b-pay for an order (DIRECT tokenization to the
 * project's key). The wallet is asked for the billing address (FULL) when a new transaction
 * needs the one the order lacks.
 */
async function paymentRequestOf(ctx: Ctx, c: Checkout, transactionId?: string) {
  const keys = await recipientKeys(ctx, c.project);
  const merchantId = keys.recipientId.startsWith('merchant:') ? keys.recipientId.slice('merchant:'.length) : undefined;
  const amount = formatMinor(c.order.amount, c.order.currency);
  return {
    supported_methods: 'https://google.com/pay',
    label: c.merchantName,
    currency: c.order.currency,
    amount,
    payment_data_request: {
      environment: c.project.mode === 'test' ? 'TEST' : 'PRODUCTION',
      apiVersion: 2,
      apiVersionMinor: 0,
      merchantInfo: { merchantName: c.merchantName, ...(merchantId ? { merchantId } : {}) },
      allowedPaymentMethods: [
        {
          type: 'CARD',
          parameters: {
            allowedAuthMethods: ['PAN_ONLY', 'CRYPTOGRAM_3DS'],
            allowedCardNetworks: ['AMEX', 'MASTERCARD', 'VISA'],
            ...(!transactionId && billingNeeded(c).length
              ? { billingAddressRequired: true, billingAddressParameters: { format: 'FULL' } }
              : {}),
          },
          tokenizationSpecification: { type: 'DIRECT', parameters: { protocolVersion: 'ECv2', publicKey: keys.publicKey } },
        },
      ],
      transactionInfo: { totalPriceStatus: 'FINAL', totalPrice: amount, currencyCode: c.order.currency },
    },
  };
}

/** An order the hosted page can still pay with the wallet (the named transaction, or a new one). */
export function payable(c: Checkout | undefined, method: WalletMethod, transactionId?: string): Checkout {
  if (!c) throw notFound('order');
  if (transactionId && transactionOf(c, transactionId)?.payment_method !== method) throw notFound('transaction');
  if (!transactionId && !c.methods.includes(method)) throw new DomainError('Forbidden', `${method} is not offered for this order`);
  const { outcome } = outcomeOf(c);
  if (outcome !== 'open') throw new DomainError('TransactionAlreadyStarted', `this order is ${outcome}`);
  return c;
}

export const walletPayRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const key = csrfKey(ctx.masterKey);

    app.post(
      '/pay/:order_id/select-payment-method/wallet-b-pay/:transaction_id/',
      {
        schema: {
          tags: [WALLET_B],
          summary: 'Pay a wallet-b-pay transaction with its vaulted card',
          description:
            'With a cryptogram (CRYPTOGRAM_3DS) the payment is authorized at once, with liability shift. With an empty cryptogram (PAN_ONLY) ' +
            'the customer is sent to 3-D Secure: redirect_url leads there. No API key: bound to the ids and the vaultToken.',
          params: TransactionParams,
          body: WalletPayBody,
          response: {
            200: answer(
              'Authorized (redirect_url: the merchant), or sent to 3-D Secure (reason authentication_required), or refused (reason)',
              WalletPayAnswer,
              walletPayAnswerExample,
            ),
            ...errorAnswers(400, 403, 404, 409),
          },
        },
      },
      async (req) => payWithWalletB(ctx, req.params.order_id, req.params.transaction_id, req.body),
    );

    app.get('/pay/assets/wallets.js', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('Cache-Control', 'public, max-age=300')
        .header('X-Content-Type-Options', 'nosniff')
        .send(SCRIPT),
    );

    app.get<{ Params: { order_id: string }; Querystring: { transaction_id?: string } }>(
      '/pay/:order_id/wallet-b-pay/config/',
      { schema: { hide: true } },
      async (req, reply) => {
        const c = payable(await loadCheckout(ctx, req.params.order_id), WALLET_B, req.query.transaction_id);
        return reply.header('Cache-Control', 'no-store').send(await paymentRequestOf(ctx, c, req.query.transaction_id));
      },
    );

    app.post<{ Params: { order_id: string } }>(
      '/pay/:order_id/wallet-b-pay/device/',
      { schema: { hide: true, body: DeviceBody } },
      async (req, reply) => {
        const body = req.body as typeof DeviceBody.static;
        const { csrf, walletBPayMessage, transaction_id, billingAddress, ...browser } = body;
        const c = payable(await loadCheckout(ctx, req.params.order_id), WALLET_B, transaction_id);
        const scope = { action: 'wallet-b-device', orderId: c.order.id, transactionId: transaction_id };
        if (!originAllowed(req.headers.origin, ctx.config.publicBaseUrl) || !checkCsrf(key, scope, csrf, c.now)) {
          throw new DomainError('Forbidden', 'this page has expired: reload it and try again');
        }
        // checked before anything starts: a refused address stores and pays nothing
        const billing = deviceBilling(c, WALLET_B, transaction_id, billingAddress);
        const result = await payOnPage(ctx, c, transaction_id, walletBPayMessage, browser, billing);
        return reply.header('Cache-Control', 'no-store').send(result);
      },
    );
  };

export const DEVICE_CSRF_ACTION = 'wallet-b-device';
export const walletScriptPath = '/pay/assets/wallets.js';
export const deviceUrls = (orderId: string, transactionId?: string) => ({
  config_url: `/pay/${orderId}/wallet-b-pay/config/${transactionId ? `?transaction_id=${transactionId}` : ''}`,
  pay_url: `/pay/${orderId}/wallet-b-pay/device/`,
});
