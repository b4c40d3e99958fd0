import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../services/platform/context.ts';
import { loadCheckout, outcomeOf, transactionOf, type Checkout } from '../../services/payments/checkout.ts';
import {
  BILLING_INPUT,
  billingNeeded,
  checkBilling,
  payOnPage,
  sandboxToken,
  walletTransaction,
  type Billing,
  type BillingField,
  type SandboxAuthMethod,
} from '../../services/wallets/pay.ts';
import { payOnPageWithWalletA, sandboxWalletAToken } from '../../services/wallets/wallet-a.ts';
import { WALLET_FIELD } from '../../services/wallets/billing.ts';
import { testCards, type TestCard } from '../../services/payments/sandbox.ts';
import countries from 'i18n-iso-countries';
import enCountries from 'i18n-iso-countries/langs/en.json' with { type: 'json' };
import nlCountries from 'i18n-iso-countries/langs/nl.json' with { type: 'json' };
import { DomainError } from '../../domain/errors.ts';
import { formatAmount, pickLocale, STRINGS, type Locale, type Strings } from './i18n.ts';
import { esc, layout, messagePage, summaryBlock, STYLE_HASH, type WalletButton, type WalletSlot } from './render.ts';
import {
  checkCsrf,
  contentSecurityPolicy,
  csrfKey,
  flashKey,
  issueCsrf,
  originAllowed,
  originsOf,
  setFlash,
  setPageHeaders,
  takeFlash,
} from './security.ts';
import { DEVICE_CSRF_ACTION, deviceUrls, walletScriptPath } from './wallet-pay.ts';
import { TEXT } from './wallet-sheet-i18n.ts';
import { WALLET_A, WALLET_B, type WalletMethod } from '../../domain/payment-methods.ts';
import { statusOf } from '../errors.ts';

/**
 * The sandbox wallet sheets of test projects (one per wallet), the rendering both wallets'
 * buttons share (renderWallet), and the wallet-b-pay button. For {wallet} wallet-a-pay or wallet-b-pay:
 *   POST /pay/{order_id}/{wallet}/sheet/                     from the order page: starts the wallet transaction
 *   GET  /pay/{order_id}/{wallet}/sheet/                     the sheet of an order that still needs a billing address
 *   POST /pay/{order_id}/{wallet}/sheet/pay/                 its confirm: billing stored, transaction started, paid
 *   GET  /pay/{order_id}/{wallet}/{transaction_id}/sheet/    the sheet: a test card (and how the device holds it)
 *   POST /pay/{order_id}/{wallet}/{transaction_id}/sheet/    confirm: a token is sealed with the project's sandbox
 *                                                            key and paid through the same checks and pay step as a device's
 * The sheet stands in for the wallet's own payment sheet, so it needs no device support and
 * no script: a test project always shows it. Like a real wallet sheet, it hands over the
 * billing address the project requires when the order has none. Refused forms answer with
 * POST/redirect/GET (security.ts flash).
 */

const paths = {
  start: (o: string, m: WalletMethod) => `/pay/${o}/${m}/sheet/`,
  newSheet: (o: string, m: WalletMethod) => `/pay/${o}/${m}/sheet/`,
  newPay: (o: string, m: WalletMethod) => `/pay/${o}/${m}/sheet/pay/`,
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
    method: WALLET_B,
    authMethods: ['CRYPTOGRAM_3DS', 'PAN_ONLY'],
    pay: async (ctx, c, txnId, card, authMethod) => payOnPage(ctx, c, txnId, await sandboxToken(ctx, c.project, { ...card, authMethod })),
  },
  {
    method: WALLET_A,
    authMethods: ['CRYPTOGRAM_3DS'],
    pay: async (ctx, c, txnId, card) =>
      payOnPageWithWalletA(ctx, c, txnId, await sandboxWalletAToken(ctx, c.project, transactionOf(c, txnId)!, card)),
  },
];

/** The sandbox sheet's button on an order page (a form that starts the transaction) or a wallet transaction's payment_url. */
function sandboxButton({ checkout: c, transaction: txn, locale, csrf }: WalletSlot, method: WalletMethod, label: string): string {
  const button = txn
    ? `<a class="button wallet" href="${esc(paths.sheet(c.order.id, method, txn.id))}" data-wallet-sandbox="${method}">${esc(label)}</a>`
    : `<form method="post" action="${esc(paths.start(c.order.id, method))}"><input type="hidden" name="csrf" value="${esc(csrf(START(method)))}"><button type="submit" class="wallet" data-wallet-sandbox="${method}">${esc(label)}</button></form>`;
  return `${button}<p class="note">${esc(TEXT[locale].sandbox)}</p>`;
}

/**
 * A wallet's button, or '' where it cannot be offered (a transaction of another method or
 * already started). Offered whether or not the order has a billing address: the wallet's sheet
 * hands it over. Test projects get the sandbox sheet (offline, no script), which asks for it;
 * live projects the device's wallet, hidden until wallets.js finds the browser can pay with it,
 * whose payment request asks the wallet for it (the config routes). `device` gives the script
 * its URLs and CSRF token; `billing_text` its words for a refused address.
 */
export function renderWallet(slot: WalletSlot, method: WalletMethod, device: () => Record<string, unknown>): string {
  const { checkout: c, transaction: txn, t } = slot;
  if (txn && (txn.payment_method !== method || txn.status !== 'new')) return '';
  const label = t.method[method] ?? method;
  if (c.project.mode === 'test') return sandboxButton(slot, method, label);
  const x = TEXT[slot.locale];
  // the wallet's field names, in the customer's words (wallet-b-pay's one `name` holds both names)
  const labels = Object.fromEntries(
    BILLING_INPUT.map((f) => [WALLET_FIELD[method][f], WALLET_FIELD[method][f] === 'name' ? x.name : x[f]]),
  );
  const billing =
    !txn && billingNeeded(c).length ? { billing_text: { missing: x.billing_missing, invalid: x.billing_invalid, labels } } : {};
  const config = { ...device(), transaction_id: txn?.id, error_text: x.device_error, ...billing };
  return (
    `<div data-wallet="${method}" data-config="${esc(JSON.stringify(config))}" hidden>` +
    `<button type="button" class="wallet">${esc(label)}</button><p class="field-error" data-wallet-error role="alert" hidden></p></div>` +
    `<script src="${walletScriptPath}" defer></script>`
  );
}

export const walletBButton: WalletButton = {
  method: WALLET_B,
  // the device button's script, its calls to us, and the wallet's payment method manifest,
  // which the browser fetches under the page's connect-src when the script asks canMakePayment()
  csp: { 'script-src': ["'self'"], 'connect-src': ["'self'", 'https://google.com', 'https://pay.google.com'] },
  render: (slot) =>
    renderWallet(slot, WALLET_B, () => ({
      ...deviceUrls(slot.checkout.order.id, slot.transaction?.id),
      csrf: slot.csrf(DEVICE_CSRF_ACTION, slot.transaction?.id),
    })),
};

/** The sandbox cards on offer: the simulator's table (the late decline too: it shows the webhook path). */
const SHEET_CARDS = testCards().map((card) => ({ pan: card.pan, brand: card.brands.at(-1)!, card }));
const groupedPan = (pan: string) => pan.replace(/(.{4})/g, '$1 ').trim();

/** A test card's behaviour in the customer's language (the simulator's table, not its English notes). */
function cardText(card: TestCard, locale: Locale): string {
  const x = TEXT[locale].cards;
  const reasons = STRINGS[locale].reason;
  const brand = card.brands.map((b) => BRAND_NAMES[b] ?? b).join(' / ');
  const outcome = (): string => {
    if (card.result === 'late_decline') return x.late;
    if (card.result === 'error') return x.error;
    if (card.result === 'declined') return `${x.declined}: ${reasons[card.reason ?? 'declined'] ?? card.reason}`;
    return x.approved;
  };
  if (card.three_ds === 'U') return `${brand}, ${x.not_enrolled}`;
  if (card.three_ds === 'R') return `${brand}, ${x.rejected}`;
  if (card.three_ds === 'C') return `${brand}, ${x.challenge} ${outcome()}`;
  return `${brand}, ${outcome()}`;
}
const BRAND_NAMES: Record<string, string> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  amex: 'American Express',
  cartes_bancaires: 'Cartes Bancaires',
};

type Field = BillingField;
interface SheetFlash {
  alert?: 'refused' | 'form_expired';
  detail?: string;
  errors?: Partial<Record<Field, string>>;
  keep?: Billing;
}

export const walletSheetRoutes = (ctx: Ctx) => async (app: FastifyInstance) => {
  const key = csrfKey(ctx.masterKey);
  const fkey = flashKey(ctx.masterKey);
  const secure = ctx.config.publicBaseUrl.startsWith('https:');
  const localeOf = (req: FastifyRequest, c: Checkout) => pickLocale(c.order.body?.customer?.locale, req.headers['accept-language']);

  const send = (reply: FastifyReply, c: Checkout | undefined, status: number, html: string) => {
    const b = c?.order.body ?? {};
    setPageHeaders(reply, contentSecurityPolicy(STYLE_HASH, { 'form-action': originsOf(b.return_url, b.failure_url) }));
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  };
  const message = (req: FastifyRequest, reply: FastifyReply, status: number, title: keyof Strings, text: keyof Strings, c?: Checkout) => {
    const locale = c ? localeOf(req, c) : pickLocale(undefined, req.headers['accept-language']);
    const t = STRINGS[locale];
    const back = c ? `<p><a class="button" href="${esc(paths.order(c.order.id))}">${esc(TEXT[locale].cancel)}</a></p>` : '';
    return send(reply, c, status, messagePage(locale, t, String(t[title]), String(t[text]), back));
  };
  const form = (req: FastifyRequest) => (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  /** POST/redirect/GET: a refused sheet goes back to its page, which shows why. */
  const refuse = (reply: FastifyReply, page: string, flash: SheetFlash) => {
    setFlash(reply, fkey, page, flash as Record<string, unknown>, secure);
    return reply.code(303).header('Location', page).send();
  };

  for (const wallet of SHEET_WALLETS) {
    const { method } = wallet;

    /** The billing fields of a sheet whose order still needs an address. */
    function billingBlock(locale: Locale, flash: SheetFlash | undefined): string {
      const x = TEXT[locale];
      const names = countryNames(locale);
      const input = (f: Field, attrs: string, hint?: string) => {
        const err = flash?.errors?.[f];
        const described = [hint ? `${f}-hint` : '', err ? `${f}-error` : ''].filter(Boolean).join(' ');
        const common = `id="${f}" name="${f}"${described ? ` aria-describedby="${described}"` : ''}${err ? ' aria-invalid="true"' : ''}`;
        const value = flash?.keep?.[f] ?? '';
        const control =
          f === 'country'
            ? `<select ${common} autocomplete="billing country" required><option value="">${esc(x.choose_country)}</option>${names
                .map(([code, name]) => `<option value="${code}"${code === value ? ' selected' : ''}>${esc(name)}</option>`)
                .join('')}</select>`
            : `<input type="text" ${common} ${attrs} value="${esc(value)}">`;
        return `<div class="field"><label for="${f}">${esc(x[f])}${hint ? ` <span class="hint" id="${f}-hint">${esc(hint)}</span>` : ''}</label>
${control}${err ? `<p class="field-error" id="${f}-error">${esc(x.errors[err] ?? err)}</p>` : ''}</div>`;
      };
      return `<fieldset class="billing"><legend>${esc(x.billing)}</legend><p class="note">${esc(x.billing_intro)}</p>
${input('first_name', 'autocomplete="billing given-name" maxlength="120" required')}
${input('last_name', 'autocomplete="billing family-name" maxlength="120" required')}
${input('address', 'autocomplete="billing street-address" maxlength="120" required')}
<div class="row">
${input('postal_code', 'autocomplete="billing postal-code" maxlength="10" autocapitalize="characters" required')}
${input('city', 'autocomplete="billing address-level2" maxlength="120" required')}
</div>
${input('country', '')}
${input('state', 'autocomplete="billing address-level1" maxlength="2" autocapitalize="characters"', x.state_hint)}
</fieldset>
`;
    }

    /** The sheet: of a started wallet transaction (txnId), or of an order that must hand over a billing address first. */
    function sheet(req: FastifyRequest, reply: FastifyReply, c: Checkout, txnId: string | undefined, flash?: SheetFlash) {
      const locale = localeOf(req, c);
      const t = STRINGS[locale];
      const x = TEXT[locale];
      const title = `${t.method[method] ?? method} (sandbox)`;
      const amount = formatAmount(c.order.amount, c.order.currency, locale);
      const summary = summaryBlock(
        {
          merchantName: c.merchantName,
          amount,
          currency: c.order.currency,
          description: c.order.description,
          reference: c.order.merchant_order_id,
          testMode: true,
        },
        t,
        false,
      );
      const cards = SHEET_CARDS.map(
        (card, i) =>
          `<label class="choice"><input type="radio" name="card" value="${i}"${i === 0 ? ' checked' : ''}> <span>${esc(groupedPan(card.pan))} <span class="hint">${esc(cardText(card.card, locale))}</span></span></label>`,
      ).join('\n');
      const auths =
        wallet.authMethods.length < 2
          ? ''
          : `<fieldset class="field"><legend>${esc(x.auth)}</legend>\n${wallet.authMethods
              .map(
                (m, i) =>
                  `<label class="choice"><input type="radio" name="auth_method" value="${m}"${i === 0 ? ' checked' : ''}> <span>${esc(m === 'PAN_ONLY' ? x.pan_only : x.cryptogram)}</span></label>`,
              )
              .join('\n')}\n</fieldset>\n`;
      const csrf = issueCsrf(key, { action: CONFIRM(method), orderId: c.order.id, transactionId: txnId }, c.now);
      const action = txnId ? paths.sheet(c.order.id, method, txnId) : paths.newPay(c.order.id, method);
      const billing = txnId ? '' : billingBlock(locale, flash);
      const alertText = flash?.alert
        ? `${flash.alert === 'form_expired' ? t.form_expired : x.refused}${flash.detail ? ` ${flash.detail}` : ''}`
        : flash?.errors
          ? t.errors_intro
          : '';
      const body = `${summary}<section class="panel" aria-labelledby="sheet-title" data-wallet-sheet="${method}">
<h1 id="sheet-title">${esc(title)}</h1>
${alertText ? `<div class="alert" role="alert"><p>${esc(alertText)}</p></div>` : ''}<p>${esc(x.sheet_intro)}</p>
<form method="post" action="${esc(action)}" novalidate>
<input type="hidden" name="csrf" value="${esc(csrf)}">
<fieldset class="field"><legend>${esc(x.card)}</legend>
${cards}
</fieldset>
${auths}${billing}<button type="submit" class="wallet">${esc(x.confirm(amount))}</button>
</form>
<p><a class="button secondary" href="${esc(paths.order(c.order.id))}">${esc(x.cancel)}</a></p>
</section>`;
      return send(reply, c, 200, layout({ locale, t, title, body }));
    }

    /** The test order and its open wallet transaction, or the page to show instead. */
    async function load(req: FastifyRequest, reply: FastifyReply, orderId: string, txnId: string) {
      const c = await loadCheckout(ctx, orderId);
      const txn = c && transactionOf(c, txnId);
      if (!c || !txn || txn.payment_method !== method || c.project.mode !== 'test')
        return { page: message(req, reply, 404, 'not_found_title', 'not_found_text', c) };
      if (outcomeOf(c).outcome !== 'open' || txn.status !== 'new' || txn.setup_token_used)
        return { page: reply.code(303).header('Location', paths.result(c.order.id)).send() };
      return { c };
    }

    /** A test order that can still start this wallet's transaction from its sheet, or the page to show instead. */
    async function loadNew(req: FastifyRequest, reply: FastifyReply, orderId: string) {
      const c = await loadCheckout(ctx, orderId);
      if (!c || c.project.mode !== 'test') return { page: message(req, reply, 404, 'not_found_title', 'not_found_text', c) };
      if (outcomeOf(c).outcome !== 'open' || c.transactions.length || !c.methods.includes(method))
        return { page: reply.code(303).header('Location', paths.order(c.order.id)).send() };
      return { c };
    }

    /** The card and the way the device holds it, as the sheet's form sent them. */
    const chosen = (body: Record<string, unknown>) => {
      const card = /^\d+$/.test(String(body.card)) ? SHEET_CARDS[Number(body.card)] : undefined;
      const authMethod = wallet.authMethods.length < 2 ? wallet.authMethods[0] : wallet.authMethods.find((m) => m === body.auth_method);
      return card && authMethod ? { card, authMethod } : undefined;
    };

    const pay = async (
      req: FastifyRequest,
      reply: FastifyReply,
      c: Checkout,
      page: string,
      run: () => Promise<{ redirect_url: string }>,
    ) => {
      try {
        const result = await run();
        return reply.code(303).header('Location', result.redirect_url).send();
      } catch (err) {
        if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
        req.log.info({ order_id: c.order.id, type: err.type, field: err.field }, 'sandbox wallet payment refused');
        return refuse(reply, page, { alert: 'refused', detail: err.message });
      }
    };

    app.post<{ Params: { order_id: string } }>(`/pay/:order_id/${method}/sheet/`, { schema: { hide: true } }, async (req, reply) => {
      const c = await loadCheckout(ctx, req.params.order_id);
      if (!c || c.project.mode !== 'test') return message(req, reply, 404, 'not_found_title', 'not_found_text', c);
      if (
        !originAllowed(req.headers.origin, ctx.config.publicBaseUrl) ||
        !checkCsrf(key, { action: START(method), orderId: c.order.id }, form(req).csrf, c.now)
      ) {
        return message(req, reply, 403, 'forbidden_title', 'form_expired', c);
      }
      // No billing address yet: the sheet asks for it, and the transaction starts with it.
      if (billingNeeded(c).length && !c.transactions.length)
        return reply.code(303).header('Location', paths.newSheet(c.order.id, method)).send();
      try {
        const txn = await walletTransaction(ctx, c, undefined, method);
        return reply
          .code(303)
          .header('Location', paths.sheet(c.order.id, method, txn.id))
          .send();
      } catch (err) {
        if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
        return reply.code(303).header('Location', paths.order(c.order.id)).send();
      }
    });

    app.get<{ Params: { order_id: string } }>(`/pay/:order_id/${method}/sheet/`, { schema: { hide: true } }, async (req, reply) => {
      const { c, page } = await loadNew(req, reply, req.params.order_id);
      if (!c) return page;
      const flash = takeFlash<SheetFlash>(req, reply, fkey, paths.newSheet(c.order.id, method));
      return sheet(req, reply, c, undefined, flash);
    });

    app.post<{ Params: { order_id: string } }>(`/pay/:order_id/${method}/sheet/pay/`, { schema: { hide: true } }, async (req, reply) => {
      const { c, page } = await loadNew(req, reply, req.params.order_id);
      if (!c) return page;
      const here = paths.newSheet(c.order.id, method);
      const body = form(req);
      const fields = billingNeeded(c);
      const check = checkBilling(fields, body);
      if (
        !originAllowed(req.headers.origin, ctx.config.publicBaseUrl) ||
        !checkCsrf(key, { action: CONFIRM(method), orderId: c.order.id }, body.csrf, c.now)
      ) {
        return refuse(reply, here, { alert: 'form_expired', keep: check.keep });
      }
      if (!check.billing && fields.length) return refuse(reply, here, { errors: check.errors, keep: check.keep });
      const pick = chosen(body);
      if (!pick) return refuse(reply, here, { alert: 'refused', keep: check.keep });
      return pay(req, reply, c, here, async () => {
        const txn = await walletTransaction(ctx, c, undefined, method, fields.length ? check.billing : undefined);
        return wallet.pay(ctx, c, txn.id, pick.card, pick.authMethod);
      });
    });

    app.get<{ Params: { order_id: string; transaction_id: string } }>(
      `/pay/:order_id/${method}/:transaction_id/sheet/`,
      { schema: { hide: true } },
      async (req, reply) => {
        const { c, page } = await load(req, reply, req.params.order_id, req.params.transaction_id);
        if (!c) return page;
        const txnId = transactionOf(c, req.params.transaction_id)!.id;
        return sheet(req, reply, c, txnId, takeFlash<SheetFlash>(req, reply, fkey, paths.sheet(c.order.id, method, txnId)));
      },
    );

    app.post<{ Params: { order_id: string; transaction_id: string } }>(
      `/pay/:order_id/${method}/:transaction_id/sheet/`,
      { schema: { hide: true } },
      async (req, reply) => {
        const { c, page } = await load(req, reply, req.params.order_id, req.params.transaction_id);
        if (!c) return page;
        const txnId = transactionOf(c, req.params.transaction_id)!.id;
        const here = paths.sheet(c.order.id, method, txnId);
        const body = form(req);
        if (
          !originAllowed(req.headers.origin, ctx.config.publicBaseUrl) ||
          !checkCsrf(key, { action: CONFIRM(method), orderId: c.order.id, transactionId: txnId }, body.csrf, c.now)
        ) {
          return refuse(reply, here, { alert: 'form_expired' });
        }
        const pick = chosen(body);
        if (!pick) return refuse(reply, here, { alert: 'refused' });
        return pay(req, reply, c, here, () => wallet.pay(ctx, c, txnId, pick.card, pick.authMethod));
      },
    );
  }
};

/** Country names for the billing address, in the customer's language, by name. */
const COUNTRY_NAMES = new Map<Locale, [string, string][]>();
function countryNames(locale: Locale): [string, string][] {
  let list = COUNTRY_NAMES.get(locale);
  if (!list) {
    countries.registerLocale(locale === 'nl' ? nlCountries : enCountries);
    const names = countries.getNames(locale, { select: 'official' });
    list = Object.entries(names).sort((a, b) => a[1].localeCompare(b[1], locale));
    COUNTRY_NAMES.set(locale, list);
  }
  return list;
}
