import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { loadCheckout, type Checkout } from '../../services/payments/checkout.ts';
import { billingNeeded } from '../../services/wallets/pay.ts';
import { deviceBilling } from '../../services/wallets/billing.ts';
import { payOnPageWithWalletA, payWithWalletA } from '../../services/wallets/wallet-a.ts';
import { createSession } from '../../services/wallets/keys.ts';
import { merchantIdentifierOf } from '../../domain/project.ts';
import { DomainError } from '../../domain/errors.ts';
import { formatMinor } from '../../domain/currency.ts';
import { settingsOf } from '../../domain/project.ts';
import { answer, errorAnswers, TransactionParams, Uuid } from '../../domain/schemas/common.ts';
import { walletAPayExample, walletPayAnswerExample } from '../../domain/schemas/examples.ts';
import type { WalletButton } from './render.ts';
import { checkCsrf, csrfKey, originAllowed } from './security.ts';
import { renderWallet } from './wallet-sheet.ts';
import { BrowserInfo, payable, WalletPayAnswer } from './wallet-pay.ts';
import { WALLET_A } from '../../domain/payment-methods.ts';

/**
 * wallet-a-pay payments (docs/wallets.md "wallet-a-pay payments"):
 *   POST /pay/{order_id}/select-payment-method/wallet-a-pay/{transaction_id}/  pay step: token + setupToken
 *   GET  /pay/{order_id}/wallet-a-pay/config/                                  the payment request of the order (device button)
 *   POST /pay/{order_id}/wallet-a-pay/session/                                 merchant validation for the device's sheet
 *   POST /pay/{order_id}/wallet-a-pay/device/                                  the device's token (and the billing contact the
 *                                                                              order needs): pay step
 * No API key: the pay step is bound to the ids and the setupToken, the page routes to a CSRF token.
 */

const WalletAPayBody = Type.Object(
  {
    paymentToken: Type.Object(
      {},
      { additionalProperties: true, description: "the wallet's payment token (event.payment.token), or its paymentData" },
    ),
    setupToken: Uuid({ description: "the transaction's setup_token: one use" }),
    ...BrowserInfo,
  },
  { additionalProperties: false, $id: 'WalletAPay', examples: [walletAPayExample] },
);

const DeviceBody = Type.Object(
  {
    csrf: Type.String({ maxLength: 200 }),
    paymentToken: Type.Object({}, { additionalProperties: true }),
    transaction_id: Type.Optional(Uuid()),
    billingContact: Type.Optional(
      Type.Object(
        {},
        { additionalProperties: true, maxProperties: 32, description: 'event.payment.billingContact, when the order needs one' },
      ),
    ),
    ...BrowserInfo,
  },
  { additionalProperties: false },
);

const SessionBody = Type.Object(
  {
    csrf: Type.String({ maxLength: 200 }),
    validationUrl: Type.String({ format: 'uri', maxLength: 2048 }),
    transaction_id: Type.Optional(Uuid()),
  },
  { additionalProperties: false },
);

const DEVICE = 'wallet-a-device';
const NETWORKS = ['amex', 'masterCard', 'visa'];

/**
 * The wallet's payment request for an order: 3-D Secure capable cards, the order's total; and
 * the billing address (postalAddress: name and address) when a new transaction needs the one
 * the order lacks.
 */
function paymentRequestOf(c: Checkout, transactionId?: string) {
  return {
    ...(!transactionId && billingNeeded(c).length ? { requiredBillingContactFields: ['postalAddress'] } : {}),
    countryCode: settingsOf(c.project.settings).merchant_country ?? 'NL',
    currencyCode: c.order.currency,
    merchantCapabilities: ['supports3DS'],
    supportedNetworks: NETWORKS,
    total: { label: c.merchantName, amount: formatMinor(c.order.amount, c.order.currency), type: 'final' },
  };
}

/** The wallet-a-pay button (renderWallet): the device's script needs only our origin. */
export const walletAButton: WalletButton = {
  method: WALLET_A,
  csp: { 'script-src': ["'self'"], 'connect-src': ["'self'"] },
  render(slot) {
    const o = slot.checkout.order.id;
    const txn = slot.transaction;
    return renderWallet(slot, WALLET_A, () => ({
      config_url: `/pay/${o}/wallet-a-pay/config/${txn ? `?transaction_id=${txn.id}` : ''}`,
      session_url: `/pay/${o}/wallet-a-pay/session/`,
      pay_url: `/pay/${o}/wallet-a-pay/device/`,
      csrf: slot.csrf(DEVICE, txn?.id),
    }));
  },
};

export const walletAPayRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const key = csrfKey(ctx.masterKey);
    const guard = (origin: string | undefined, c: Checkout, csrf: string, transactionId?: string) => {
      if (
        !originAllowed(origin, ctx.config.publicBaseUrl) ||
        !checkCsrf(key, { action: DEVICE, orderId: c.order.id, transactionId }, csrf, c.now)
      ) {
        throw new DomainError('Forbidden', 'this page has expired: reload it and try again');
      }
    };

    app.post(
      '/pay/:order_id/select-payment-method/wallet-a-pay/:transaction_id/',
      {
        schema: {
          tags: [WALLET_A],
          summary: 'Pay a wallet-a-pay transaction with the wallet’s payment token',
          description:
            'The token (EC_v1) is verified (signature chain to the provider’s root), decrypted with the project’s payment processing key, ' +
            'checked against the transaction’s amount and currency, vaulted with the one-use setupToken and authorized with its cryptogram ' +
            '(liability shift). Refusals are a ValidationError on paymentToken with a `code`. No API key: bound to the ids and the setupToken.',
          params: TransactionParams,
          body: WalletAPayBody,
          response: {
            200: answer(
              'Authorized (redirect_url: the merchant), or refused (is_successful false, reason)',
              WalletPayAnswer,
              walletPayAnswerExample,
            ),
            ...errorAnswers(400, 403, 404, 409, 503),
          },
        },
      },
      async (req) => payWithWalletA(ctx, req.params.order_id, req.params.transaction_id, req.body),
    );

    app.get<{ Params: { order_id: string }; Querystring: { transaction_id?: string } }>(
      '/pay/:order_id/wallet-a-pay/config/',
      { schema: { hide: true } },
      async (req, reply) => {
        const c = payable(await loadCheckout(ctx, req.params.order_id), WALLET_A, req.query.transaction_id);
        return reply
          .header('Cache-Control', 'no-store')
          .send({ version: 3, payment_request: paymentRequestOf(c, req.query.transaction_id) });
      },
    );

    app.post<{ Params: { order_id: string } }>(
      '/pay/:order_id/wallet-a-pay/session/',
      { schema: { hide: true, body: SessionBody } },
      async (req, reply) => {
        const body = req.body as typeof SessionBody.static;
        const c = payable(await loadCheckout(ctx, req.params.order_id), WALLET_A, body.transaction_id);
        guard(req.headers.origin, c, body.csrf, body.transaction_id);
        const session = await createSession(ctx, c.project, {
          validationUrl: body.validationUrl,
          merchantIdentifier: merchantIdentifierOf(c.project.id),
          displayName: c.merchantName.slice(0, 64),
          initiativeContext: new URL(ctx.config.publicBaseUrl).hostname,
        });
        return reply.header('Cache-Control', 'no-store').send(session);
      },
    );

    app.post<{ Params: { order_id: string } }>(
      '/pay/:order_id/wallet-a-pay/device/',
      { schema: { hide: true, body: DeviceBody } },
      async (req, reply) => {
        const { csrf, paymentToken, transaction_id, billingContact, ...browser } = req.body as typeof DeviceBody.static;
        const c = payable(await loadCheckout(ctx, req.params.order_id), WALLET_A, transaction_id);
        guard(req.headers.origin, c, csrf, transaction_id);
        // checked before anything starts: a refused address stores and pays nothing
        const billing = deviceBilling(c, WALLET_A, transaction_id, billingContact);
        return reply
          .header('Cache-Control', 'no-store')
          .send(await payOnPageWithWalletA(ctx, c, transaction_id, paymentToken, browser, billing));
      },
    );
  };
