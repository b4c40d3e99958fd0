import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { createHash } from 'node:crypto';
import type { Ctx } from '../../services/platform/context.ts';
import { startCardPayment } from '../../services/payments/card.ts';
import { methodFinished, methodNotified } from '../../services/threeds/method.ts';
import { Uuid } from '../../domain/schemas/common.ts';
import { DomainError } from '../../domain/errors.ts';
import { checkCsrf, csrfKey, originAllowed, setPageHeaders } from './security.ts';
import { METHOD_MESSAGE, methodScope } from './three-ds.ts';

/**
 * The 3DS Method's two routes beside the 3-D Secure page (docs/three-d-secure.md "The 3DS Method"):
 *   POST /pay/3ds/{transaction_id}/method-notification   the ACS's notification, in the hidden iframe
 *   POST /pay/3ds/{transaction_id}/method                the page's go-ahead: the lookup, then the 3-D Secure page
 * Whatever an ACS or a browser sends answers a page or a redirect, never a 500.
 */

const NOTIFIED_SCRIPT = `parent.postMessage('${METHOD_MESSAGE}',location.origin);`;
const NOTIFIED_HASH = `sha256-${createHash('sha256').update(NOTIFIED_SCRIPT).digest('base64')}`;

export const threeDsMethodRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    const key = csrfKey(ctx.masterKey);
    const params = Type.Object({ transaction_id: Uuid() });

    app.post(
      '/pay/3ds/:transaction_id/method-notification',
      { schema: { hide: true, params, body: Type.Object({ threeDSMethodData: Type.Optional(Type.String({ maxLength: 8192 })) }) } },
      async (req, reply) => {
        const taken = await methodNotified(ctx, req.params.transaction_id, req.body.threeDSMethodData);
        if (!taken)
          ctx.log.warn({ transaction: req.params.transaction_id }, '3-D Secure: a 3DS Method notification that names no method of ours');
        // shown in Tender's own hidden iframe only: it tells the 3-D Secure page to go ahead
        reply.header(
          'Content-Security-Policy',
          `default-src 'none'; script-src '${NOTIFIED_HASH}'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'`,
        );
        reply.header('X-Frame-Options', 'SAMEORIGIN');
        reply.header('Cache-Control', 'no-store');
        reply.header('X-Content-Type-Options', 'nosniff');
        reply.header('Referrer-Policy', 'no-referrer');
        return reply
          .code(taken ? 200 : 400)
          .type('text/html; charset=utf-8')
          .send(
            `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>3-D Secure</title></head><body>${taken ? `<script>${NOTIFIED_SCRIPT}</script>` : ''}</body></html>`,
          );
      },
    );

    app.post(
      '/pay/3ds/:transaction_id/method',
      { schema: { hide: true, params, body: Type.Object({ csrf: Type.String({ maxLength: 200 }) }, { additionalProperties: true }) } },
      async (req, reply) => {
        const id = req.params.transaction_id;
        const origin = req.headers.origin;
        setPageHeaders(reply, "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
        const page = `${ctx.config.publicBaseUrl}/pay/3ds/${id}/`;
        if (
          !originAllowed(typeof origin === 'string' ? origin : undefined, ctx.config.publicBaseUrl) ||
          !checkCsrf(key, methodScope(id), req.body.csrf, new Date())
        )
          return reply.redirect(page, 303);
        const m = await methodFinished(ctx, id);
        // a second go-ahead: the first one's lookup decides; the page shows where it stands
        if (!m) return reply.redirect(page, 303);
        try {
          const { redirect_url } = await startCardPayment(ctx, id, { vault_token: m.vault_token, cvc: m.cvc }, m.shopper);
          return reply.redirect(redirect_url, 303);
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          ctx.log.info({ transaction: id, err: err.message }, '3-D Secure: the lookup after the 3DS Method was refused');
          return reply.redirect(`${ctx.config.publicBaseUrl}/pay/${m.order_id}/`, 303);
        }
      },
    );
  };
