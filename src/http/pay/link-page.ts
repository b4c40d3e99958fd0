import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { isUuid } from '../../domain/ids.ts';
import type { Ctx } from '../../services/platform/context.ts';
import { nowFor } from '../../services/platform/context.ts';
import { linkPage, linkUrl, orderFromLink, type LinkPage } from '../../services/links/payment-links.ts';
import { isPaymentMethod, CARD } from '../../domain/payment-methods.ts';
import { formatAmount, pickLocale, STRINGS, type Locale } from './i18n.ts';
import { esc, layout, messagePage, STYLE_HASH, summaryBlock } from './render.ts';
import { checkCsrf, contentSecurityPolicy, csrfKey, issueCsrf, originAllowed, setPageHeaders } from './security.ts';
import { pageErrorStatus, statusOf } from '../errors.ts';
import { checkCardTesting } from '../../services/platform/throttle.ts';
import { DomainError } from '../../domain/errors.ts';

/**
 * The page behind a payment link's payment_url: the link's amount and merchant, a button per
 * method. A button press makes a new order from the link and sends the customer to pay it.
 */

/** Texts of the link page only; the shared ones (methods, reasons, test mode) come from i18n.ts. */
const TEXT = {
  en: {
    title: 'Payment link',
    paid_title: 'Already paid',
    paid_text: 'This payment link has already been paid. Thank you!',
    expired_title: 'Link expired',
    expired_text: 'This payment link has expired. No money was taken. Please ask the shop for a new link.',
    failed_title: 'Your payment did not succeed',
    failed_text: 'No money was taken. You can try again below.',
    busy_text: 'A payment for this link has already been started. If you stopped it, you can start again below.',
    pay_with: (m: string) => `Pay with ${m}`,
    missing_title: 'Payment link not found',
    missing_text: 'This payment link does not exist. Check the link you received from the shop.',
    refused_title: 'Please try again',
    refused_text: 'This form has expired or was not sent from this page. Please open the payment link again.',
    reload: 'Back to the payment link',
  },
  nl: {
    title: 'Betaallink',
    paid_title: 'Al betaald',
    paid_text: 'Deze betaallink is al betaald. Bedankt!',
    expired_title: 'Link verlopen',
    expired_text: 'Deze betaallink is verlopen. Er is geen geld afgeschreven. Vraag de winkel om een nieuwe link.',
    failed_title: 'Je betaling is niet gelukt',
    failed_text: 'Er is geen geld afgeschreven. Je kunt het hieronder opnieuw proberen.',
    busy_text: 'Er is al een betaling voor deze link gestart. Heb je die afgebroken, dan kun je hieronder opnieuw beginnen.',
    pay_with: (m: string) => `Betalen met ${m}`,
    missing_title: 'Betaallink niet gevonden',
    missing_text: 'Deze betaallink bestaat niet. Controleer de link die je van de winkel hebt gekregen.',
    refused_title: 'Probeer het opnieuw',
    refused_text: 'Dit formulier is verlopen of niet vanaf deze pagina verstuurd. Open de betaallink opnieuw.',
    reload: 'Terug naar de betaallink',
  },
} satisfies Record<Locale, unknown>;

const ACTION = 'link-pay';
const FAILED = new Set(['error', 'cancelled', 'expired']);

const statusPanel = (kind: string, icon: string, title: string, text: string) =>
  `<section class="panel status ${kind}" data-outcome="${kind}" aria-live="polite"><span class="icon" aria-hidden="true">${icon}</span>
<h1>${esc(title)}</h1><p>${esc(text)}</p></section>`;

export const linkPageRoutes =
  (ctx: Ctx): FastifyPluginAsync =>
  async (app) => {
    const key = csrfKey(ctx.masterKey);
    const csp = contentSecurityPolicy(STYLE_HASH);

    // Every answer of these routes, errors included, is a page with the hosted pages' headers.
    app.addHook('onRequest', async (_req, reply) => setPageHeaders(reply, csp));
    app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
      const lang = pickLocale(undefined, req.headers['accept-language']);
      const status = pageErrorStatus(err, reply);
      if (status === 500) req.log.error({ err }, 'payment link page failed');
      reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(messagePage(lang, STRINGS[lang], STRINGS[lang].error_title, STRINGS[lang].error_text));
    });

    const send = (reply: FastifyReply, lang: Locale, status: number, title: string, body: string) => {
      setPageHeaders(reply, csp);
      return reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(layout({ locale: lang, t: STRINGS[lang], title, body }));
    };
    const langOf = (req: FastifyRequest) => pickLocale(undefined, req.headers['accept-language']);
    const load = (id: string) => (isUuid(id) ? linkPage(ctx, id.toLowerCase()) : Promise.resolve(undefined));
    const missing = (reply: FastifyReply, lang: Locale) => {
      const t = TEXT[lang];
      return send(
        reply,
        lang,
        404,
        t.missing_title,
        `<section class="panel status"><h1>${esc(t.missing_title)}</h1><p>${esc(t.missing_text)}</p></section>`,
      );
    };

    /** The page for a link in whatever state it is in. */
    function render(req: FastifyRequest, reply: FastifyReply, page: LinkPage, lang: Locale) {
      const t = TEXT[lang];
      const s = STRINGS[lang];
      const { link, project, state } = page;
      const summary = summaryBlock(
        {
          merchantName: project.name,
          amount: formatAmount(link.amount, link.currency, lang),
          currency: link.currency,
          description: link.description,
          reference: link.merchant_order_id,
          testMode: project.mode === 'test',
        },
        s,
      );
      if (state.status === 'completed')
        return send(reply, lang, 200, t.paid_title, summary + statusPanel('paid', '✓', t.paid_title, t.paid_text));
      if (state.status === 'expired')
        return send(reply, lang, 200, t.expired_title, summary + statusPanel('expired', '–', t.expired_title, t.expired_text));

      // Back from a failed attempt (failure_url carries its order_id), or every attempt so far failed.
      const returned = page.orders.find((o) => o.id === (req.query as Record<string, unknown> | undefined)?.order_id);
      const failed =
        returned && FAILED.has(returned.status) ? returned : state.status === 'all_unsuccessful' ? page.orders.at(-1) : undefined;
      let notice = '';
      if (failed) {
        const why = failed.reason ? s.reason[failed.reason] : undefined;
        notice = `<div class="alert" role="alert" data-reason="${esc(failed.reason)}"><p><strong>${esc(t.failed_title)}</strong></p>${why ? `<p>${esc(why)}</p>` : ''}<p>${esc(t.failed_text)}</p></div>`;
      } else if (state.status === 'processing') {
        notice = `<div class="test" role="status"><p>${esc(t.busy_text)}</p></div>`;
      }
      const csrf = issueCsrf(key, { action: ACTION, orderId: link.id }, nowFor(project));
      // wallets look like wallets, not like a second and third "Pay" button
      const buttons = page.methods.map(
        (m) =>
          `<li><button type="submit" name="payment_method" value="${esc(m)}"${m === CARD ? '' : ' class="wallet"'}>${esc(t.pay_with(s.method[m] ?? m))}</button></li>`,
      );
      const choose = buttons.length
        ? `<section class="panel" aria-labelledby="choose"><h1 id="choose">${esc(s.choose_method)}</h1>
<form method="post" action="/pay/links/${esc(link.id)}/"><input type="hidden" name="csrf" value="${esc(csrf)}">
<ul class="methods">${buttons.join('')}</ul></form></section>`
        : `<section class="panel"><p>${esc(s.no_methods)}</p></section>`;
      return send(reply, lang, 200, t.title, summary + notice + choose);
    }

    app.get<{ Params: { payment_link_id: string } }>('/pay/links/:payment_link_id/', { schema: { hide: true } }, async (req, reply) => {
      const lang = langOf(req);
      const page = await load(req.params.payment_link_id);
      return page ? render(req, reply, page, lang) : missing(reply, lang);
    });

    app.post<{ Params: { payment_link_id: string } }>('/pay/links/:payment_link_id/', { schema: { hide: true } }, async (req, reply) => {
      const lang = langOf(req);
      const page = await load(req.params.payment_link_id);
      if (!page) return missing(reply, lang);
      const here = linkUrl(ctx.config, page.link.id);
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
      const fresh = checkCsrf(key, { action: ACTION, orderId: page.link.id }, body.csrf, nowFor(page.project));
      if (!fresh || !originAllowed(req.headers.origin, ctx.config.publicBaseUrl)) {
        const t = TEXT[lang];
        return send(
          reply,
          lang,
          403,
          t.refused_title,
          `<section class="panel status"><h1>${esc(t.refused_title)}</h1><p role="alert">${esc(t.refused_text)}</p>
<p><a class="button" href="${esc(here)}">${esc(t.reload)}</a></p></section>`,
        );
      }
      const method = String(body.payment_method ?? '');
      // A method the link does not offer (a tampered form) just shows the link again.
      if (!isPaymentMethod(method) || !page.methods.includes(method)) return reply.code(303).header('location', here).send();
      try {
        // card testing: too many declines through this link or from this client
        await checkCardTesting(ctx, page.project, { address: req.ip, linkId: page.link.id });
      } catch (err) {
        if (!(err instanceof DomainError) || statusOf(err) !== 429) throw err;
        reply.header('Retry-After', String(err.retryAfter ?? 60));
        const s = STRINGS[lang];
        return send(
          reply,
          lang,
          429,
          s.error_title,
          `<section class="panel status"><h1>${esc(s.error_title)}</h1><p role="alert">${esc(s.too_many_attempts)}</p></section>`,
        );
      }
      const result = await orderFromLink(ctx, page, method);
      // Paid or expired in the meantime: the link page says so, and no order was made.
      return reply
        .code(303)
        .header('location', 'redirect' in result ? result.redirect : here)
        .send();
    });
  };
