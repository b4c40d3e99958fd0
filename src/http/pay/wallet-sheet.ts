import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../services/context.ts';
import { loadCheckout, outcomeOf, transactionOf, type Checkout } from '../../services/checkout.ts';
import { payOnPage, sandboxToken, walletTransaction, type SandboxAuthMethod, type WalletMethod } from '../../services/wallet-pay.ts';
import { payOnPageWithWalletA, sandboxWalletAToken } from '../../services/wallet-a-pay.ts';
import { testCards } from '../../services/sandbox.ts';
import { missingBilling } from '../../domain/customer.ts';
import { settingsOf } from '../../domain/project.ts';
import { ApiError } from '../../domain/errors.ts';
import { formatAmount, pickLocale, STRINGS, type Locale, type Strings } from './i18n.ts';
import { esc, layout, messagePage, summaryBlock, STYLE_HASH, type WalletButton, type WalletSlot } from './render.ts';
import { checkCsrf, contentSecurityPolicy, csrfKey, issueCsrf, originAllowed, originsOf, setPageHeaders } from './security.ts';
import { DEVICE_CSRF_ACTION, deviceUrls, walletScriptPath } from './wallet-pay.ts';

/**
 * The sandbox wallet sheets of test projects (one per wallet), the rendering both wallets'
 * buttons share (renderWallet), and the wallet-b-pay button. For {wallet} wallet-a-pay or wallet-b-pay:
 *   POST /pay/{order_id}/{wallet}/sheet/                     from the order page: starts the wallet transaction
 *   GET  /pay/{order_id}/{wallet}/{transaction_id}/sheet/    the sheet: a test card (and how the device holds it)
 *   POST /pay/{order_id}/{wallet}/{transaction_id}/sheet/    confirm: a token is sealed with the project's sandbox
 *                                                            key and paid through the same checks and pay step as a device's
 * The sheet stands in for the wallet's own payment sheet, so it needs no device support and
 * no script: a test project always shows it.
 */

const TEXT = {
  en: {
    sandbox: 'Sandbox wallet: pick a test card in the next step. No device needed.',
    sheet_intro: 'This sheet stands in for the wallet on a phone. Choose a test card and confirm to pay.',
    card: 'Card in the wallet',
    auth: 'How the wallet holds it',
    cryptogram: 'On the device (CRYPTOGRAM_3DS): paid at once, no 3-D Secure',
    pan_only: 'Card only (PAN_ONLY): 3-D Secure as for a card',
    confirm: (amount: string) => `Pay ${amount}`,
    cancel: 'Back to the payment methods',
    refused: 'The wallet payment could not be started.',
    device_error: 'The wallet payment did not go through. Please try again or choose another method.',
  },
  nl: {
    sandbox: 'Sandbox-wallet: kies in de volgende stap een testkaart. Geen toestel nodig.',
    sheet_intro: 'Dit scherm vervangt de wallet op een telefoon. Kies een testkaart en bevestig om te betalen.',
    card: 'Kaart in de wallet',
    auth: 'Hoe de wallet de kaart bewaart',
    cryptogram: 'Op het toestel (CRYPTOGRAM_3DS): direct betaald, zonder 3-D Secure',
    pan_only: 'Alleen de kaart (PAN_ONLY): 3-D Secure zoals bij een kaart',
    confirm: (amount: string) => `Betaal ${amount}`,
    cancel: 'Terug naar de betaalmethoden',
    refused: 'De walletbetaling kon niet worden gestart.',
    device_error: 'De walletbetaling is niet gelukt. Probeer het opnieuw of kies een andere betaalmethode.',
  },
} satisfies Record<Locale, unknown>;

const paths = {
  start: (o: string, m: WalletMethod) => `/pay/${o}/${m}/sheet/`,
  sheet: (o: string, m: WalletMethod, t: string) => `/pay/${o}/${m}/${t}/sheet/`,
  order: (o: string) => `/pay/${o}/`,
  result: (o: string) => `/pay/${o}/result/`,
};
const START = (m: WalletMethod) => `${m}-sheet`;
const CONFIRM = (m: WalletMethod) => `${m}-sheet-confirm`;

type SheetCard = { pan: string; brand: string };

/** How each wallet's sheet pays: the token its device would make, through the same path. */
interface SheetWallet {
  method: WalletMethod;
  /** the ways the device may hold the card; none to choose when it is always on the device */
  authMethods: SandboxAuthMethod[];
  pay(ctx: Ctx, c: Checkout, transactionId: string, card: SheetCard, authMethod: SandboxAuthMethod): Promise<{ redirect_url: string }>;
}

const SHEET_WALLETS: SheetWallet[] = [
  {
    method: 'wallet-b-pay',
    authMethods: ['CRYPTOGRAM_3DS', 'PAN_ONLY'],
    pay: async (ctx, c, txnId, card, authMethod) => payOnPage(ctx, c, txnId, await sandboxToken(ctx, c.project, { ...card, authMethod })),
  },
  {
    method: 'wallet-a-pay',
    authMethods: ['CRYPTOGRAM_3DS'],
    pay: async (ctx, c, txnId, card) => payOnPageWithWalletA(ctx, c, txnId, await sandboxWalletAToken(ctx, c.project, transactionOf(c, txnId)!, card)),
  },
];


/** A wallet order needs the billing address the project requires (checked again when the transaction starts). */
const billingComplete = (c: Checkout) => !settingsOf(c.project.settings).wallet_billing_required || missingBilling(c.order.body?.customer).length === 0;

/** The sandbox sheet's button on an order page (a form that starts the transaction) or a wallet transaction's payment_url. */
export function sandboxButton({ checkout: c, transaction: txn, locale, csrf }: WalletSlot, method: WalletMethod, label: string): string {
  const button = txn
    ? `<a class="button" href="${esc(paths.sheet(c.order.id, method, txn.id))}" data-wallet-sandbox="${method}">${esc(label)}</a>`
    : `<form method="post" action="${esc(paths.start(c.order.id, method))}"><input type="hidden" name="csrf" value="${esc(csrf(START(method)))}"><button type="submit" data-wallet-sandbox="${method}">${esc(label)}</button></form>`;
  return `${button}<p class="note">${esc(TEXT[locale].sandbox)}</p>`;
}

/**
 * A wallet's button, or '' where it cannot be offered (a transaction of another method or
 * already started; a billing address the project requires is missing). Test projects get the
 * sandbox sheet (offline, no script); live projects the device's wallet, hidden until
 * wallets.js finds the browser can pay with it. `device` gives the script its URLs and CSRF token.
 */
export function renderWallet(slot: WalletSlot, method: WalletMethod, device: () => Record<string, unknown>): string {
  const { checkout: c, transaction: txn, t } = slot;
  if (txn && (txn.payment_method !== method || txn.status !== 'new')) return '';
  if (!txn && !billingComplete(c)) return '';
  const label = t.method[method] ?? method;
  if (c.project.mode === 'test') return sandboxButton(slot, method, label);
  const config = { ...device(), transaction_id: txn?.id, error_text: TEXT[slot.locale].device_error };
  return (
    `<div data-wallet="${method}" data-config="${esc(JSON.stringify(config))}" hidden>` +
    `<button type="button">${esc(label)}</button><p class="field-error" data-wallet-error role="alert" hidden></p></div>` +
    `<script src="${walletScriptPath}" defer></script>`
  );
}

export const walletBButton: WalletButton = {
  method: 'wallet-b-pay',
  // the device button's script, its calls to us, and the wallet's payment method manifest,
  // which the browser fetches under the page's connect-src when the script asks canMakePayment()
  csp: { 'script-src': ["'self'"], 'connect-src': ["'self'", 'https://google.com', 'https://pay.google.com'] },
  render: (slot) => renderWallet(slot, 'wallet-b-pay', () => ({ ...deviceUrls(slot.checkout.order.id, slot.transaction?.id), csrf: slot.csrf(DEVICE_CSRF_ACTION, slot.transaction?.id) })),
};

/** The sandbox cards on offer: the simulator's table (the late decline too: it shows the webhook path). */
const SHEET_CARDS = testCards().map((card) => ({ pan: card.pan, brand: card.brands.at(-1)!, description: card.description }));
const groupedPan = (pan: string) => pan.replace(/(.{4})/g, '$1 ').trim();

export const walletSheetRoutes = (ctx: Ctx) => async (app: FastifyInstance) => {
  const key = csrfKey(ctx.masterKey);
  const localeOf = (req: FastifyRequest, c: Checkout) => pickLocale(c.order.body?.customer?.locale, req.headers['accept-language']);

  const send = (reply: FastifyReply, c: Checkout | undefined, status: number, html: string) => {
    const b = c?.order.body ?? {};
    setPageHeaders(reply, contentSecurityPolicy(STYLE_HASH, { 'form-action': originsOf(b.return_url, b.failure_url) }));
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  };
  const message = (req: FastifyRequest, reply: FastifyReply, status: number, title: keyof Strings, text: keyof Strings, c?: Checkout) => {
    const locale = c ? localeOf(req, c) : pickLocale(undefined, req.headers['accept-language']);
    const t = STRINGS[locale];
    return send(reply, c, status, messagePage(locale, t, String(t[title]), String(t[text])));
  };
  const form = (req: FastifyRequest) => (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;

  for (const wallet of SHEET_WALLETS) {
    const { method } = wallet;

    function sheet(req: FastifyRequest, reply: FastifyReply, c: Checkout, txnId: string, status = 200, alert?: string) {
      const locale = localeOf(req, c);
      const t = STRINGS[locale];
      const x = TEXT[locale];
      const title = `${t.method[method] ?? method} (sandbox)`;
      const amount = formatAmount(c.order.amount, c.order.currency, locale);
      const summary = summaryBlock(
        { merchantName: c.merchantName, amount, currency: c.order.currency, description: c.order.description, reference: c.order.merchant_order_id, testMode: true },
        t,
      );
      const cards = SHEET_CARDS.map(
        (card, i) =>
          `<label><input type="radio" name="card" value="${i}"${i === 0 ? ' checked' : ''}> ${esc(groupedPan(card.pan))} <span class="hint">${esc(card.description)}</span></label>`,
      ).join('\n');
      const auths =
        wallet.authMethods.length < 2
          ? ''
          : `<fieldset class="field"><legend>${esc(x.auth)}</legend>\n${wallet.authMethods
              .map((m, i) => `<label><input type="radio" name="auth_method" value="${m}"${i === 0 ? ' checked' : ''}> ${esc(m === 'PAN_ONLY' ? x.pan_only : x.cryptogram)}</label>`)
              .join('\n')}\n</fieldset>\n`;
      const csrf = issueCsrf(key, { action: CONFIRM(method), orderId: c.order.id, transactionId: txnId }, c.now);
      const body = `${summary}<section class="panel" aria-labelledby="sheet-title" data-wallet-sheet="${method}">
<h1 id="sheet-title">${esc(title)}</h1>
${alert ? `<div class="alert" role="alert"><p>${esc(alert)}</p></div>` : ''}<p>${esc(x.sheet_intro)}</p>
<form method="post" action="${esc(paths.sheet(c.order.id, method, txnId))}">
<input type="hidden" name="csrf" value="${esc(csrf)}">
<fieldset class="field"><legend>${esc(x.card)}</legend>
${cards}
</fieldset>
${auths}<button type="submit">${esc(x.confirm(amount))}</button>
</form>
<p><a class="button secondary" href="${esc(paths.order(c.order.id))}">${esc(x.cancel)}</a></p>
</section>`;
      return send(reply, c, status, layout({ locale, t, title, body }));
    }

    /** The test order and its open wallet transaction, or the page to show instead. */
    async function load(req: FastifyRequest, reply: FastifyReply, orderId: string, txnId: string) {
      const c = await loadCheckout(ctx, orderId);
      const txn = c && transactionOf(c, txnId);
      if (!c || !txn || txn.payment_method !== method || c.project.mode !== 'test') return { page: message(req, reply, 404, 'not_found_title', 'not_found_text', c) };
      if (outcomeOf(c).outcome !== 'open' || txn.status !== 'new' || txn.setup_token_used) return { page: reply.code(303).header('Location', paths.result(c.order.id)).send() };
      return { c };
    }

    app.post<{ Params: { order_id: string } }>(`/pay/:order_id/${method}/sheet/`, { schema: { hide: true } }, async (req, reply) => {
      const c = await loadCheckout(ctx, req.params.order_id);
      if (!c || c.project.mode !== 'test') return message(req, reply, 404, 'not_found_title', 'not_found_text', c);
      if (!originAllowed(req.headers.origin, ctx.config.publicBaseUrl) || !checkCsrf(key, { action: START(method), orderId: c.order.id }, form(req).csrf, c.now)) {
        return message(req, reply, 403, 'forbidden_title', 'form_expired', c);
      }
      try {
        const txn = await walletTransaction(ctx, c, undefined, method);
        return reply.code(303).header('Location', paths.sheet(c.order.id, method, txn.id)).send();
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        return reply.code(303).header('Location', paths.order(c.order.id)).send();
      }
    });

    app.get<{ Params: { order_id: string; transaction_id: string } }>(`/pay/:order_id/${method}/:transaction_id/sheet/`, { schema: { hide: true } }, async (req, reply) => {
      const { c, page } = await load(req, reply, req.params.order_id, req.params.transaction_id);
      return c ? sheet(req, reply, c, req.params.transaction_id) : page;
    });

    app.post<{ Params: { order_id: string; transaction_id: string } }>(`/pay/:order_id/${method}/:transaction_id/sheet/`, { schema: { hide: true } }, async (req, reply) => {
      const { c, page } = await load(req, reply, req.params.order_id, req.params.transaction_id);
      if (!c) return page;
      const txnId = req.params.transaction_id;
      const body = form(req);
      const x = TEXT[localeOf(req, c)];
      if (!originAllowed(req.headers.origin, ctx.config.publicBaseUrl) || !checkCsrf(key, { action: CONFIRM(method), orderId: c.order.id, transactionId: txnId }, body.csrf, c.now)) {
        return sheet(req, reply, c, txnId, 403, STRINGS[localeOf(req, c)].form_expired);
      }
      const card = SHEET_CARDS[Number(body.card)];
      const authMethod = wallet.authMethods.length < 2 ? wallet.authMethods[0] : wallet.authMethods.find((m) => m === body.auth_method);
      if (!card || !authMethod || !/^\d+$/.test(String(body.card))) return sheet(req, reply, c, txnId, 422, x.refused);
      try {
        const result = await wallet.pay(ctx, c, txnId, card, authMethod);
        return reply.code(303).header('Location', result.redirect_url).send();
      } catch (err) {
        if (!(err instanceof ApiError) || err.status >= 500) throw err;
        req.log.info({ order_id: c.order.id, type: err.type, field: err.field }, 'sandbox wallet payment refused');
        return sheet(req, reply, c, txnId, 422, `${x.refused} ${err.message}`);
      }
    });
  }
};
