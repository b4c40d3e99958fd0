import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { nowFor } from '../../services/platform/context.ts';
import {
  completeAuthentication,
  loadThreeDs,
  returnUrlFor,
  threeDsUrl,
  visitThreeDs,
  type ThreeDsView,
} from '../../services/payments/card.ts';
import { STRINGS, formatAmount, pickLocale, type Locale } from './i18n.ts';
import { Enum, Uuid } from '../../domain/schemas/common.ts';
import { checkCsrf, csrfKey, issueCsrf, originAllowed, originsOf, setPageHeaders } from './security.ts';
import type { OrderRow } from '../../domain/entities.ts';
import { createHash } from 'node:crypto';
import { creqOf } from '../../services/payments/three-ds-emv.ts';
import { METHOD_WAIT_MS, pendingMethod } from '../../services/threeds/method.ts';
import type { FastifyRequest } from 'fastify';

/**
 * The simulated 3-D Secure pages (the issuer's ACS of test cards), on the API host:
 *   GET  /pay/3ds/{transaction_id}/  frictionless: authorize and redirect; challenge: the form
 *   POST /pay/3ds/{transaction_id}/  the challenge answer (or cancel), then the redirect
 * Bound to the transaction id; no API key (spec "Authentication" 6).
 */

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** form-action must also allow where the POST redirects to: browsers check it on redirects. */
function csp(config: Ctx['config'], view: ThreeDsView) {
  const b = view.order.body ?? {};
  const targets = [...new Set(["'self'", ...originsOf(config.publicBaseUrl, b.return_url, b.failure_url)])].join(' ');
  return `default-src 'none'; style-src '${STYLE_HASH}'; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1b1f24}
main{max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin:0 0 1rem}label{display:block;font-weight:600;margin:1rem 0 .3rem}
input{font:inherit;width:100%;box-sizing:border-box;padding:.7rem;border:1px solid #6b7280;border-radius:8px}
input:focus,button:focus{outline:3px solid #2563eb;outline-offset:2px}
.actions{display:flex;gap:.75rem;margin-top:1.25rem}button{font:inherit;padding:.7rem 1.2rem;border-radius:8px;border:1px solid #1d4ed8;cursor:pointer}
.primary{background:#1d4ed8;color:#fff;flex:1}.secondary{background:#fff;color:#1d4ed8}
.hint{background:#fff7d6;border-radius:8px;padding:.6rem .8rem;font-size:.9rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.2rem 1rem}dt{color:#4b5563}dd{margin:0}`;

/** The CSP source of exactly this stylesheet (no 'unsafe-inline'). */
const STYLE_HASH = `sha256-${createHash('sha256').update(STYLE).digest('base64')}`;

function page(title: string, body: string, locale: Locale = 'en') {
  return (
    `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${esc(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
  );
}

function challengePage(config: Ctx['config'], view: ThreeDsView, csrf: string, locale: Locale) {
  const { txn, order, project } = view;
  const t = STRINGS[locale].three_ds;
  const merchant = String(order.body?.merchant_name ?? project.name);
  const card = String(txn.details?.truncated_pan ?? '');
  return page(
    t.title,
    `<h1>${esc(t.heading)}</h1>` +
      `<dl><dt>${esc(t.merchant)}</dt><dd>${esc(merchant)}</dd><dt>${esc(STRINGS[locale].amount)}</dt><dd>${esc(formatAmount(txn.amount, txn.currency, locale))}</dd>` +
      `<dt>${esc(t.card)}</dt><dd>${esc(card)}</dd></dl>` +
      (project.mode === 'test' ? `<p class="hint">${esc(t.test_hint)}</p>` : '') +
      `<form method="post" action="${esc(threeDsUrl(config, txn.id))}">` +
      `<input type="hidden" name="csrf" value="${esc(csrf)}">` +
      `<label for="code">${esc(t.code)}</label>` +
      `<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="12" autofocus>` +
      `<div class="actions"><button class="primary" type="submit" name="action" value="verify">${esc(t.verify)}</button>` +
      `<button class="secondary" type="submit" name="action" value="cancel">${esc(t.cancel)}</button></div></form>`,
    locale,
  );
}

/** Posts the CReq to the issuer's ACS (a live challenge): at once with script, by a button without. */
function acsPage(acs: { acs_url: string; creq: string; session: string }, locale: Locale) {
  const t = STRINGS[locale].three_ds;
  return page(
    t.title,
    `<h1>${esc(t.heading)}</h1><form id="acs" method="post" action="${esc(acs.acs_url)}">` +
      `<input type="hidden" name="creq" value="${esc(acs.creq)}"><input type="hidden" name="threeDSSessionData" value="${esc(acs.session)}">` +
      `<div class="actions"><button class="primary" type="submit">${esc(t.verify)}</button></div></form>`,
    locale,
  ).replace('</body>', `<script>${ACS_SCRIPT}</script></body>`);
}

const ACS_SCRIPT = "document.getElementById('acs').submit();";
const ACS_SCRIPT_HASH = `sha256-${createHash('sha256').update(ACS_SCRIPT).digest('base64')}`;
const acsCsp = (config: Ctx['config'], acsUrl: string) =>
  `default-src 'none'; style-src '${STYLE_HASH}'; script-src '${ACS_SCRIPT_HASH}'; form-action ${new URL(acsUrl).origin} ${new URL(config.publicBaseUrl).origin}; frame-ancestors 'none'; base-uri 'none'`;

/**
 * The 3DS Method (a live card whose range has a method URL): the method data posted to the ACS in
 * a hidden iframe, then the go-ahead posted to Tender when the ACS's notification reaches the
 * iframe (its page tells this one) or after METHOD_WAIT_MS. Without script, a button goes ahead
 * (the method did not run: N).
 */
function methodPage(m: { method_url: string; method_data: string; continue_url: string }, csrf: string, locale: Locale) {
  const t = STRINGS[locale].three_ds;
  return page(
    t.title,
    `<h1>${esc(t.heading)}</h1><iframe name="tdsm" title="3-D Secure" hidden></iframe>` +
      `<form id="m" method="post" action="${esc(m.method_url)}" target="tdsm"><input type="hidden" name="threeDSMethodData" value="${esc(m.method_data)}"></form>` +
      `<form id="go" method="post" action="${esc(m.continue_url)}"><input type="hidden" name="csrf" value="${esc(csrf)}">` +
      `<noscript><div class="actions"><button class="primary" type="submit">${esc(t.verify)}</button></div></noscript></form>`,
    locale,
  ).replace('</body>', `<script>${METHOD_SCRIPT}</script></body>`);
}

export const METHOD_MESSAGE = 'tender-3ds-method';
const METHOD_SCRIPT =
  "var go=document.getElementById('go'),done=false;function ahead(){if(!done){done=true;go.submit();}}" +
  `addEventListener('message',function(e){if(e.origin===location.origin&&e.data==='${METHOD_MESSAGE}')ahead();});` +
  `setTimeout(ahead,${METHOD_WAIT_MS});document.getElementById('m').submit();`;
const METHOD_SCRIPT_HASH = `sha256-${createHash('sha256').update(METHOD_SCRIPT).digest('base64')}`;
const methodCsp = (config: Ctx['config'], view: ThreeDsView, methodUrl: string) =>
  csp(config, view)
    .replace("form-action 'self'", `form-action 'self' ${new URL(methodUrl).origin}`)
    .replace('; frame-ancestors', `; script-src '${METHOD_SCRIPT_HASH}'; frame-src 'self' ${new URL(methodUrl).origin}; frame-ancestors`);
export const methodScope = (transactionId: string) => ({ action: '3ds-method', orderId: '', transactionId });

const scope = (view: ThreeDsView) => ({ action: '3ds', orderId: view.txn.order_id, transactionId: view.txn.id });

function sendPage(reply: FastifyReply, status: number, csp: string, html: string) {
  setPageHeaders(reply, csp);
  return reply.code(status).type('text/html; charset=utf-8').send(html);
}

const notFoundPage = (req: FastifyRequest, reply: FastifyReply) => {
  const locale = pickLocale(undefined, req.headers['accept-language']);
  const t = STRINGS[locale];
  return sendPage(
    reply,
    404,
    `default-src 'none'; style-src '${STYLE_HASH}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    page(t.not_found_title, `<h1>${esc(t.not_found_title)}</h1><p>${esc(t.not_found_text)}</p>`, locale),
  );
};

export const threeDsRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const key = csrfKey(ctx.masterKey);
    const params = Type.Object({ transaction_id: Uuid() });

    /** After the payment: to the merchant (or our result page). */
    const finish = async (reply: FastifyReply, view: ThreeDsView, order: OrderRow | undefined, code: 302 | 303) => {
      setPageHeaders(reply, csp(ctx.config, view));
      return reply.redirect(returnUrlFor(ctx.config, order ?? view.order), code);
    };

    app.get('/pay/3ds/:transaction_id/', { schema: { hide: true, params } }, async (req, reply) => {
      const visit = await visitThreeDs(ctx, req.params.transaction_id);
      if (!visit) {
        // no 3-D Secure yet: a live card's 3DS Method runs first, else there is nothing here (asked
        // only then, so the page of a transaction under way costs no extra round trip)
        const method = await pendingMethod(ctx, req.params.transaction_id);
        const pending = method && (await loadThreeDs(ctx, req.params.transaction_id));
        if (!method || !pending) return notFoundPage(req, reply);
        const token = issueCsrf(key, methodScope(pending.txn.id), new Date());
        const locale = pickLocale(pending.order.body?.customer?.locale, req.headers['accept-language']);
        return sendPage(reply, 200, methodCsp(ctx.config, pending, method.method_url), methodPage(method, token, locale));
      }
      const { view } = visit;
      const acs = visit.challenge ? creqOf(view) : undefined;
      if (acs)
        return sendPage(
          reply,
          200,
          acsCsp(ctx.config, acs.acs_url),
          acsPage(acs, pickLocale(view.order.body?.customer?.locale, req.headers['accept-language'])),
        );
      if (visit.challenge) {
        const token = issueCsrf(key, scope(view), nowFor(view.project));
        return sendPage(
          reply,
          200,
          csp(ctx.config, view),
          challengePage(ctx.config, view, token, pickLocale(view.order.body?.customer?.locale, req.headers['accept-language'])),
        );
      }
      return finish(reply, view, visit.order, 302);
    });

    app.post(
      '/pay/3ds/:transaction_id/',
      {
        schema: {
          hide: true,
          params,
          body: Type.Object({
            csrf: Type.String({ maxLength: 200 }),
            code: Type.Optional(Type.String({ maxLength: 64 })),
            action: Type.Optional(Enum(['verify', 'cancel'])),
          }),
        },
      },
      async (req, reply) => {
        const view = await loadThreeDs(ctx, req.params.transaction_id);
        if (!view || !view.auth) return notFoundPage(req, reply);
        const origin = req.headers.origin;
        if (
          !originAllowed(typeof origin === 'string' ? origin : undefined, ctx.config.publicBaseUrl) ||
          !checkCsrf(key, scope(view), req.body.csrf, nowFor(view.project))
        ) {
          const locale = pickLocale(view.order.body?.customer?.locale, req.headers['accept-language']);
          const t = STRINGS[locale].three_ds;
          return sendPage(
            reply,
            403,
            csp(ctx.config, view),
            page(
              t.expired_title,
              `<h1>${esc(t.expired_title)}</h1><p>${esc(t.expired_text)}</p><p><a href="${esc(threeDsUrl(ctx.config, view.txn.id))}">${esc(t.restart)}</a></p>`,
              locale,
            ),
          );
        }
        const step =
          req.body.action === 'cancel' ? ({ kind: 'cancel' } as const) : ({ kind: 'challenge', answer: req.body.code ?? '' } as const);
        const order = view.txn.status === 'pending' ? await completeAuthentication(ctx, view, step) : view.order;
        return finish(reply, view, order, 303);
      },
    );
  };
