import { formatMinor } from '../../domain/currency.ts';
import { browserFields } from '../../domain/browser-fields.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../../services/platform/context.ts';
import { DomainError } from '../../domain/errors.ts';
import { returnUrlFor } from '../../services/payments/card.ts';
import { linkUrl } from '../../services/links/payment-links.ts';
import {
  canRetry,
  checkCardForm,
  isOpenCardTransaction,
  leaveCheckout,
  loadCheckout,
  outcomeOf,
  payByCard,
  transactionOf,
  type CardCheck,
  type Checkout,
} from '../../services/payments/checkout.ts';
import { checkoutScriptPath } from './assets.ts';
import { STRINGS, formatAmount, fromAcceptLanguage, pickLocale, type Locale, type Strings } from './i18n.ts';
import {
  cardForm,
  cardPanel,
  esc,
  layout,
  messagePage,
  methodsBlock,
  renderWallets,
  statusBlock,
  summaryBlock,
  STYLE_HASH,
  type WalletButton,
} from './render.ts';
import { requireTlsForLive } from '../transport.ts';
import { checkCardTesting, recordCardAttempt } from '../../services/platform/throttle.ts';
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
  type CspExtras,
  type CsrfScope,
} from './security.ts';
import { pageErrorStatus, statusOf } from '../errors.ts';
import { isSandboxMethod, CARD, PAY_NOW, WALLET_B } from '../../domain/payment-methods.ts';
import { detectBrands } from '../../domain/card.ts';
import { brandRefused } from '../../services/payments/methods/rules.ts';
import { methodButtons, methodPanel, methodText } from './methods/render.ts';

/**
 * The hosted payment pages on the API host, without an API key: bound to the order and
 * transaction ids in the path and to a CSRF token in every form.
 *
 *   GET  /pay/:order_id/                                         order_url: methods, card form
 *   POST /pay/:order_id/card/                                    pay by card (starts the transaction)
 *   GET  /pay/:order_id/transactions/:transaction_id/            payment_url: the one transaction
 *   POST /pay/:order_id/transactions/:transaction_id/card/       pay that transaction by card
 *   GET  /pay/:order_id/result/                                  the service's own result page
 */

type OrderParams = { order_id: string };
type TxnParams = { order_id: string; transaction_id: string };

/** Form state carried into a re-rendered page after a failed submit. */
interface FormState {
  check?: Pick<CardCheck, 'errors' | 'keep'>;
  general?: string;
}

/** What a refused card form hands to its page through the flash cookie (messages as keys of Strings). */
interface CardFlash {
  errors?: CardCheck['errors'];
  keep?: CardCheck['keep'];
  general?: 'form_expired' | 'card_refused' | 'payment_started';
}

const paths = {
  order: (o: string) => `/pay/${o}/`,
  orderCard: (o: string) => `/pay/${o}/card/`,
  txn: (o: string, t: string) => `/pay/${o}/transactions/${t}/`,
  txnCard: (o: string, t: string) => `/pay/${o}/transactions/${t}/card/`,
  result: (o: string) => `/pay/${o}/result/`,
  method: (o: string) => `/pay/${o}/method/`,
  outcomeForm: (o: string, t: string) => `/pay/${o}/transactions/${t}/outcome/`,
  outcome: (o: string) => `/pay/${o}/outcome/`,
  leave: (o: string) => `/pay/${o}/leave/`,
  // the 3-D Secure pages of src/http/pay (payments), where a waiting challenge continues
  threeDs: (t: string) => `/pay/3ds/${t}/`,
};

/** The hosted order pages; `buttons` are the wallets they offer (listed in main.ts). */

/** A request header's one value. */
const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

export const payPages = (buttonsOfWallets: WalletButton[]) => (ctx: Ctx) => async (app: FastifyInstance) => {
  const key = csrfKey(ctx.masterKey);
  const fkey = flashKey(ctx.masterKey);
  const secure = ctx.config.publicBaseUrl.startsWith('https:');
  const baseCsp = contentSecurityPolicy(STYLE_HASH);

  // Every answer of these routes, errors included, carries the page headers.
  app.addHook('onRequest', async (_req, reply) => setPageHeaders(reply, baseCsp));

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const locale = fromAcceptLanguage(req.headers['accept-language']) ?? 'en';
    const t = STRINGS[locale];
    const status = pageErrorStatus(err, reply);
    if (status === 500) req.log.error({ err }, 'hosted page failed');
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(messagePage(locale, t, t.error_title, t.error_text));
  });

  const send = (reply: FastifyReply, status: number, html: string, extras: CspExtras = {}) => {
    setPageHeaders(reply, contentSecurityPolicy(STYLE_HASH, extras));
    return reply.code(status).type('text/html; charset=utf-8').send(html);
  };

  const notFound = (req: FastifyRequest, reply: FastifyReply) => {
    const locale = fromAcceptLanguage(req.headers['accept-language']) ?? 'en';
    const t = STRINGS[locale];
    return send(reply, 404, messagePage(locale, t, t.not_found_title, t.not_found_text));
  };

  const localeOf = (req: FastifyRequest, c: Checkout): Locale => pickLocale(c.order.body?.customer?.locale, req.headers['accept-language']);

  const summary = (c: Checkout, locale: Locale, t: Strings, hint = true) =>
    summaryBlock(
      {
        merchantName: c.merchantName,
        amount: formatAmount(c.order.amount, c.order.currency, locale),
        currency: c.order.currency,
        description: c.order.description,
        reference: c.order.merchant_order_id,
        testMode: c.project.mode === 'test',
      },
      t,
      hint,
    );

  const csrfFor = (c: Checkout) => (action: string, transactionId?: string) =>
    issueCsrf(key, { action, orderId: c.order.id, transactionId }, c.now);
  /** form-action must also allow the merchant's pages the payment ends on (see security.ts). */
  const formTargets = (c: Checkout): CspExtras => ({ 'form-action': originsOf(c.order.body?.return_url, c.order.body?.failure_url) });

  /** The status page of an order that cannot be paid (any more) from this page. */
  function statusPage(req: FastifyRequest, reply: FastifyReply, c: Checkout, code = 200, message?: string) {
    const locale = localeOf(req, c);
    const t = STRINGS[locale];
    const { outcome, reason, transaction } = outcomeOf(c);
    const failed = outcome === 'failed' || outcome === 'cancelled' || outcome === 'expired';
    // an order from a payment link is retried from the link (a new order); others on their own page while they may
    const retryUrl =
      failed && c.order.payment_link_id
        ? linkUrl(ctx.config, c.order.payment_link_id)
        : failed && canRetry(c)
          ? paths.order(c.order.id)
          : undefined;
    const waitingForCustomer =
      transaction?.status === 'pending' && (transaction.payment_method === CARD || transaction.payment_method === WALLET_B);
    // while the bank answers, the page's script asks for the outcome (no meta refresh)
    const poll =
      outcome === 'pending' && !waitingForCustomer ? { url: paths.outcome(c.order.id), again: paths.result(c.order.id) } : undefined;
    const body =
      summary(c, locale, t, outcome === 'open') +
      statusBlock(t, {
        outcome,
        // an order still open after a failed attempt tells no issuer detail (a card tester's oracle)
        reason: c.order.status === 'new' ? undefined : reason,
        message,
        shopUrl:
          outcome === 'open' || outcome === 'pending' || c.order.payment_link_id || !hasMerchantPage(c) || c.order.status === 'new'
            ? undefined
            : returnUrlFor(ctx.config, c.order),
        payUrl: outcome === 'open' ? paths.order(c.order.id) : undefined,
        retryUrl,
        continueUrl: waitingForCustomer ? paths.threeDs(transaction.id) : undefined,
        poll,
      });
    const script = poll ? checkoutScriptPath : undefined;
    return send(
      reply,
      code,
      layout({ locale, t, title: t.status[outcome].title, body, script }),
      poll ? { 'script-src': ["'self'"], 'connect-src': ["'self'"] } : {},
    );
  }

  /**
   * The page of an open order (transactionId undefined) or of one of its transactions:
   * the card form, the wallet buttons, or the status when there is nothing left to pay.
   */
  function payPage(
    req: FastifyRequest,
    reply: FastifyReply,
    c: Checkout,
    transactionId: string | undefined,
    form: FormState = {},
    code = 200,
  ) {
    const locale = localeOf(req, c);
    const t = STRINGS[locale];
    const { outcome } = outcomeOf(c);
    // after a failed or cancelled attempt the order's page offers the methods again (canRetry)
    const retry = !transactionId && canRetry(c);
    // a sandbox payment left open (processing) or waiting for a transfer still shows its own page
    const pathTxn = transactionId ? transactionOf(c, transactionId) : undefined;
    const sandboxOpen =
      !!pathTxn && (pathTxn.status === 'processing' || pathTxn.status === 'pending') && isSandboxMethod(pathTxn.payment_method);
    if (outcome !== 'open' && !retry && !sandboxOpen) return statusPage(req, reply, c, code === 200 ? 200 : code, form.general);
    const csrf = csrfFor(c);
    // The transaction this page is about: the one in the path, or the one the order already has.
    const txn = transactionId ? transactionOf(c, transactionId) : retry ? undefined : c.transactions.at(-1);
    const live = c.project.mode === 'live';
    // the methods of domain/payment-methods.ts: each a button starting its attempt (test projects: their sandbox)
    // live projects: no sandbox methods (the card of a pay-now page stays a choice)
    const buttons = (txnId?: string) =>
      live && !txnId
        ? {}
        : methodButtons(
            live ? c.methods.filter((m) => m === CARD) : c.methods,
            locale,
            { action: paths.method(c.order.id), csrf: csrf('method', txnId), transactionId: txnId },
            txnId ? (t.method[CARD] ?? 'Card') : undefined,
          );
    const amount = formatAmount(c.order.amount, c.order.currency, locale);
    const formOf = (action: string, txnId?: string) =>
      cardForm({ action, csrf: csrf('card', txnId), amount, keep: form.check?.keep, errors: form.check?.errors, general: form.general }, t);

    let body: string;
    let extras: CspExtras = formTargets(c);
    if (txn && isOpenCardTransaction(txn)) {
      body = cardPanel(t, formOf(paths.txnCard(c.order.id, txn.id), txn.id));
    } else if (txn && txn.payment_method === PAY_NOW && txn.status === 'new') {
      // pay-now: this attempt's page lists every method; the one chosen becomes this transaction's
      const wallets = renderWallets(buttonsOfWallets, { checkout: c, locale, t, csrf }, c.methods);
      extras = merge(extras, wallets.csp);
      body = methodsBlock(t, c.methods, { ...wallets.html, ...buttons(txn.id) });
    } else if (txn && isSandboxMethod(txn.payment_method)) {
      const amountPlain = formatMinor(c.order.amount, c.order.currency).replace('.', locale === 'nl' ? ',' : '.');
      body = methodPanel(txn, locale, {
        action: paths.outcomeForm(c.order.id, txn.id),
        csrf: csrf('outcome', txn.id),
        amount,
        amountPlain,
        live,
      });
    } else if (txn) {
      // a wallet transaction waiting for its wallet: only that wallet's buttons
      const method = txn.payment_method as Checkout['methods'][number];
      const wallets = renderWallets(buttonsOfWallets, { checkout: c, transaction: txn, locale, t, csrf }, [method]);
      extras = merge(extras, wallets.csp);
      body = methodsBlock(t, [method], wallets.html);
    } else {
      const wallets = renderWallets(buttonsOfWallets, { checkout: c, locale, t, csrf }, c.methods);
      extras = merge(extras, wallets.csp);
      const html = { ...wallets.html, ...buttons() };
      const shown = c.methods.filter((m) => m === CARD || html[m]);
      if (shown.length === 1 && shown[0] === CARD) {
        body = cardPanel(t, formOf(paths.orderCard(c.order.id)));
      } else {
        // several methods: the card form opens when chosen (or when it comes back with errors)
        const card = c.methods.includes(CARD)
          ? { form: formOf(paths.orderCard(c.order.id)), open: Boolean(form.general || form.check) }
          : undefined;
        body = methodsBlock(t, c.methods, html, card);
      }
      if (retry) {
        // a plain note (no issuer detail a card tester could use), every method again, and a way out
        body = `<p class="alert" role="status" data-retry>${esc(methodText(locale).try_again)}</p>` + body;
        body += `<form method="post" action="${paths.leave(c.order.id)}" data-leave><input type="hidden" name="csrf" value="${esc(csrf('leave'))}"><button class="button secondary" type="submit">${esc(t.back_to_shop)}</button></form>`;
      }
    }
    // the card form's help while typing, the copy buttons of a transfer's details (assets/checkout.js)
    const cardTyped = body.includes('data-card-form');
    const script = cardTyped || body.includes('data-copy=') ? checkoutScriptPath : undefined;
    if (script) extras = merge(extras, { 'script-src': ["'self'"] });
    return send(
      reply,
      code,
      // the test card's hint only where a card can be typed (not on iDEAL, Klarna or a transfer)
      layout({ locale, t, title: `${t.title}: ${c.merchantName}`, body: summary(c, locale, t, cardTyped) + body, script }),
      extras,
    );
  }

  /** The order's checkout; a live project's page, where card numbers are typed, is refused in clear (403 page). */
  async function load(req: FastifyRequest, orderId: string) {
    const c = await loadCheckout(ctx, orderId);
    if (c) requireTlsForLive(req, c.project.mode, ctx.config.liveRequiresTls);
    return c;
  }

  /** POST of the card form, on the order page (no transaction yet) or on a transaction's page. */
  async function submitCard(req: FastifyRequest, reply: FastifyReply, orderId: string, transactionId?: string) {
    const c = await load(req, orderId);
    if (!c || (transactionId && !transactionOf(c, transactionId))) return notFound(req, reply);
    const page = transactionId ? paths.txn(c.order.id, transactionOf(c, transactionId)!.id) : paths.order(c.order.id);
    // POST/redirect/GET: a refused form goes back to its page, which shows why (Back never resubmits).
    const refuse = (flash: CardFlash) => {
      setFlash(reply, fkey, page, flash as Record<string, unknown>, secure);
      return reply.code(303).header('Location', page).send();
    };
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const scope: CsrfScope = { action: 'card', orderId: c.order.id, transactionId };
    if (!originAllowed(req.headers.origin, ctx.config.publicBaseUrl) || !checkCsrf(key, scope, body.csrf, c.now))
      return refuse({ general: 'form_expired' });
    if (outcomeOf(c).outcome !== 'open' && !(canRetry(c) && !transactionId))
      return reply.code(303).header('Location', paths.result(c.order.id)).send();
    const check = checkCardForm(body);
    if (!check.card) return refuse({ errors: check.errors, keep: check.keep });
    const limited = brandRefused(transactionId ? transactionOf(c, transactionId) : undefined, detectBrands(check.card.pan)?.brand);
    if (limited) return refuse({ errors: { pan: limited }, keep: check.keep });
    try {
      // card testing: too many declines from this client or through this order's payment link
      await checkCardTesting(ctx, c.project, { address: req.ip, linkId: c.order.payment_link_id });
      const { redirect_url, transaction_id } = await payByCard(ctx, c, check.card, transactionId, {
        address: req.ip,
        // the AReq's browser fields: the page's script's, else the request headers' (docs/three-d-secure.md)
        browser: browserFields(
          body,
          {
            accept: header(req.headers.accept),
            user_agent: header(req.headers['user-agent']),
            accept_language: header(req.headers['accept-language']),
          },
          req.ip,
        ),
      });
      await recordCardAttempt(ctx, c.project, { transactionId: transaction_id, linkId: c.order.payment_link_id, address: req.ip });
      return reply.code(303).header('Location', redirect_url).send();
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      if (statusOf(err) === 429) {
        // throttled: answered at once (with Retry-After), not through the flash
        reply.header('Retry-After', String(err.retryAfter ?? 60));
        return payPage(
          req,
          reply,
          c,
          transactionId,
          { check: { errors: {}, keep: check.keep }, general: STRINGS[localeOf(req, c)].too_many_attempts },
          429,
        );
      }
      req.log.info({ order_id: c.order.id, type: err.type, field: err.field }, 'hosted card payment refused');
      // The page shows the order as it is now (a transaction started, a concurrent submit).
      return refuse({
        errors: {},
        keep: check.keep,
        general: err.type === 'TransactionAlreadyStarted' ? 'payment_started' : 'card_refused',
      });
    }
  }

  /** The form state a refused submit left for this page. */
  const formState = (req: FastifyRequest, reply: FastifyReply, c: Checkout, page: string): FormState => {
    const f = takeFlash<CardFlash>(req, reply, fkey, page);
    if (!f) return {};
    const t = STRINGS[localeOf(req, c)];
    return {
      check: f.errors ? { errors: f.errors, keep: f.keep ?? { name: '', expiry: '' } } : undefined,
      general: f.general ? t[f.general] : undefined,
    };
  };

  app.get<{ Params: OrderParams }>('/pay/:order_id/', { schema: { hide: true } }, async (req, reply) => {
    const c = await load(req, req.params.order_id);
    return c ? payPage(req, reply, c, undefined, formState(req, reply, c, paths.order(c.order.id))) : notFound(req, reply);
  });

  app.post<{ Params: OrderParams }>('/pay/:order_id/card/', { schema: { hide: true } }, async (req, reply) =>
    submitCard(req, reply, req.params.order_id),
  );

  app.get<{ Params: TxnParams }>('/pay/:order_id/transactions/:transaction_id/', { schema: { hide: true } }, async (req, reply) => {
    const c = await load(req, req.params.order_id);
    if (!c || !transactionOf(c, req.params.transaction_id)) return notFound(req, reply);
    return payPage(
      req,
      reply,
      c,
      req.params.transaction_id,
      formState(req, reply, c, paths.txn(c.order.id, transactionOf(c, req.params.transaction_id)!.id)),
    );
  });

  app.post<{ Params: TxnParams }>('/pay/:order_id/transactions/:transaction_id/card/', { schema: { hide: true } }, async (req, reply) =>
    submitCard(req, reply, req.params.order_id, req.params.transaction_id),
  );

  // "Back to the shop" after a failed attempt: the order ends cancelled, the customer goes to the merchant.
  app.post<{ Params: OrderParams }>('/pay/:order_id/leave/', { schema: { hide: true } }, async (req, reply) => {
    const c = await load(req, req.params.order_id);
    if (!c) return notFound(req, reply);
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    if (
      !originAllowed(req.headers.origin, ctx.config.publicBaseUrl) ||
      !checkCsrf(key, { action: 'leave', orderId: c.order.id }, body.csrf, c.now)
    )
      return reply.code(303).header('Location', paths.order(c.order.id)).send();
    const order = await leaveCheckout(ctx, c);
    return reply
      .code(303)
      .header('Location', order.status === 'new' ? paths.result(c.order.id) : returnUrlFor(ctx.config, order))
      .send();
  });

  // What the waiting page's script asks for: the outcome only, never the order's data.
  app.get<{ Params: OrderParams }>('/pay/:order_id/outcome/', { schema: { hide: true } }, async (req, reply) => {
    const c = await loadCheckout(ctx, req.params.order_id);
    if (!c)
      return reply
        .code(404)
        .type('application/json')
        .send({ error: { status: 404, type: 'NotFound', value: 'order not found' } });
    return reply.type('application/json').send({ outcome: outcomeOf(c).outcome });
  });

  app.get<{ Params: OrderParams }>('/pay/:order_id/result/', { schema: { hide: true } }, async (req, reply) => {
    const c = await load(req, req.params.order_id);
    return c ? statusPage(req, reply, c) : notFound(req, reply);
  });
};

const hasMerchantPage = (c: Checkout) => Boolean(c.order.body?.return_url || c.order.body?.failure_url);

function merge(a: CspExtras, b: CspExtras): CspExtras {
  const out: CspExtras = { ...a };
  for (const [k, v] of Object.entries(b) as [keyof CspExtras, string[]][]) out[k] = [...(out[k] ?? []), ...v];
  return out;
}
