import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Ctx } from '../../../services/platform/context.ts';
import { DomainError } from '../../../domain/errors.ts';
import { returnUrlFor } from '../../../services/payments/card.ts';
import { canRetry, loadCheckout, outcomeOf, transactionOf } from '../../../services/payments/checkout.ts';
import { startTransaction } from '../../../services/payments/orders.ts';
import { chooseForPayNow, isOutcome, settleAttempt } from '../../../services/payments/methods/sandbox.ts';
import { checkCsrf, contentSecurityPolicy, csrfKey, originAllowed, setPageHeaders } from '../security.ts';
import { STYLE_HASH } from '../render.ts';
import { requireTlsForLive } from '../../transport.ts';
import { PAY_NOW } from '../../../domain/payment-methods.ts';
import { statusOf } from '../../errors.ts';

/**
 * The forms of the method pages (render in methods/render.ts, shown by pages.ts):
 *
 *   POST /pay/:order_id/method/                                   start an attempt with the chosen method
 *   POST /pay/:order_id/transactions/:transaction_id/outcome/     the sandbox outcome a test customer picks
 *
 * Both answer 303: to the new attempt's page, to the merchant's return_url / failure_url, or back.
 */
export const methodPayRoutes = (ctx: Ctx) => async (app: FastifyInstance) => {
  const key = csrfKey(ctx.masterKey);
  app.addHook('onRequest', async (_req, reply) => setPageHeaders(reply, contentSecurityPolicy(STYLE_HASH)));
  const to = (reply: FastifyReply, url: string) => reply.code(303).header('Location', url).send();
  const bodyOf = (b: unknown) => (b && typeof b === 'object' ? b : {}) as Record<string, unknown>;

  app.post<{ Params: { order_id: string } }>('/pay/:order_id/method/', { schema: { hide: true } }, async (req, reply) => {
    const c = await loadCheckout(ctx, req.params.order_id);
    if (!c) return reply.code(404).type('text/plain').send('not found');
    requireTlsForLive(req, c.project.mode, ctx.config.liveRequiresTls);
    const page = `/pay/${c.order.id}/`;
    const body = bodyOf(req.body);
    const method = String(body.payment_method ?? '');
    const txnId = typeof body.transaction_id === 'string' ? body.transaction_id : undefined;
    const scope = { action: 'method', orderId: c.order.id, transactionId: txnId };
    if (!originAllowed(req.headers.origin, ctx.config.publicBaseUrl) || !checkCsrf(key, scope, body.csrf, c.now)) return to(reply, page);
    if (!(c.methods as string[]).includes(method)) return to(reply, page);
    try {
      const payNow = txnId ? transactionOf(c, txnId) : undefined;
      if (payNow?.payment_method === PAY_NOW) {
        const t = await chooseForPayNow(ctx, payNow, method);
        return to(reply, `/pay/${c.order.id}/transactions/${t.id}/`);
      }
      if (outcomeOf(c).outcome !== 'open' && !canRetry(c)) return to(reply, `/pay/${c.order.id}/result/`);
      const view = await startTransaction(ctx, c.project, c.order.id, { payment_method: method }, { retry: true });
      return to(reply, `/pay/${c.order.id}/transactions/${view.transactions.at(-1)!.id}/`);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      req.log.info({ order_id: c.order.id, type: err.type, field: err.field }, 'hosted method choice refused');
      return to(reply, page);
    }
  });

  app.post<{ Params: { order_id: string; transaction_id: string } }>(
    '/pay/:order_id/transactions/:transaction_id/outcome/',
    { schema: { hide: true } },
    async (req, reply) => {
      const c = await loadCheckout(ctx, req.params.order_id);
      const txn = c && transactionOf(c, req.params.transaction_id);
      if (!c || !txn) return reply.code(404).type('text/plain').send('not found');
      const page = `/pay/${c.order.id}/transactions/${txn.id}/`;
      const body = bodyOf(req.body);
      const scope = { action: 'outcome', orderId: c.order.id, transactionId: txn.id };
      if (!originAllowed(req.headers.origin, ctx.config.publicBaseUrl) || !checkCsrf(key, scope, body.csrf, c.now)) return to(reply, page);
      if (!isOutcome(body.outcome)) return to(reply, page);
      const issuer = typeof body.issuer_id === 'string' ? body.issuer_id : undefined;
      try {
        const order = await settleAttempt(ctx, c.order.id, txn.id, body.outcome, issuer);
        return to(reply, returnUrlFor(ctx.config, order));
      } catch (err) {
        if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
        return to(reply, `/pay/${c.order.id}/result/`);
      }
    },
  );
};
