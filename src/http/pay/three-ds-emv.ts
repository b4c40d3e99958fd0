import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Ctx } from '../../services/platform/context.ts';
import { returnUrlFor } from '../../services/payments/card.ts';
import { acceptCres, answerRreq } from '../../services/payments/three-ds-emv.ts';
import { Uuid } from '../../domain/schemas/common.ts';
import { setPageHeaders } from './security.ts';

/**
 * A live project's EMV 3-D Secure on the API host (docs/three-d-secure.md):
 *   POST /pay/3ds/rreq                    the DS's RReq (JSON), answered RRes or Erro, always 200
 *   POST /pay/3ds/{transaction_id}/cres   the CRes the ACS hands back through the browser (a form)
 * The RReq's body is read as text: a body that is not JSON is an Erro, never a 400 or 500.
 */
export const threeDsEmvRoutes =
  (ctx: Ctx): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(async (raw) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => done(null, body));
      raw.post('/pay/3ds/rreq', { schema: { hide: true } }, async (req, reply) => {
        const answer = await answerRreq(ctx, typeof req.body === 'string' ? req.body : '');
        return reply.code(200).type('application/json').send(JSON.stringify(answer));
      });
    });

    app.post(
      '/pay/3ds/:transaction_id/cres',
      {
        schema: {
          hide: true,
          params: Type.Object({ transaction_id: Uuid() }),
          body: Type.Object({
            cres: Type.Optional(Type.String({ maxLength: 16384 })),
            threeDSSessionData: Type.Optional(Type.String({ maxLength: 1024 })),
          }),
        },
      },
      async (req, reply) => {
        const order = await acceptCres(ctx, req.params.transaction_id, req.body.cres);
        setPageHeaders(reply, "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
        if (!order) return reply.code(404).type('text/plain; charset=utf-8').send('unknown transaction');
        return reply.redirect(returnUrlFor(ctx.config, order), 303);
      },
    );
  };
