import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, notFound } from '../../domain/errors.ts';
import { nowFor } from '../../services/platform/context.ts';
import { runTestClock } from '../../services/portal/actions.ts';
import { testCardViews } from '../../services/payments/sandbox.ts';
import { field, type Kit } from './kit.ts';
import { transferMessage, transferTool } from './methods.ts';
import { alert, csrfField, esc, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** Test projects: the test card table and the test clock. Chargebacks and settlement are on an order's page. */
export const testToolRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function testPage(
    req: FastifyRequest,
    reply: FastifyReply,
    o: { status?: number; error?: string; message?: string; advance?: string } = {},
  ) {
    const project = await kit.project(req);
    if (project.mode !== 'test') throw notFound('page');
    const { t, csrf } = req.portal;
    const rows = testCardViews().map((c) => [
      `<code>${esc(c.pan)}</code>`,
      esc(c.brand),
      esc(c.three_ds + (c.challenge_code ? ` (${c.challenge_code})` : '')),
      esc(c.result + (c.reason ? ` (${c.reason})` : '')),
      esc(c.liability_shift ? t.yes : t.no),
      esc(c.description),
    ]);
    const body = `<h1>${esc(t.test_title)}</h1>
${o.error ? alert(o.error) : ''}${o.message ? notice(o.message) : ''}
<section class="panel" aria-labelledby="clock"><h2 id="clock">${esc(t.clock)}</h2>
<p data-clock>${esc(t.clock_now(when(nowFor(project), project)))}</p>
${
  kit.can(req, 'developer')
    ? `<form method="post" action="${kit.base}/projects/${project.id}/test/clock">${csrfField(csrf)}${kit.onceField()}
<div class="field"><label for="advance">${esc(t.advance)} <span class="hint" id="advance-hint">${esc(t.advance_hint)}</span></label>
<input type="text" id="advance" name="advance" maxlength="40" value="${esc(o.advance ?? '')}" aria-describedby="advance-hint"></div>
<button type="submit">${esc(t.run_jobs)}</button></form>`
    : ''
}
<p class="muted">${esc(t.test_order_hint)}</p></section>
${transferTool({
  locale: req.portal.locale,
  csrf,
  action: `${kit.base}/projects/${project.id}/test/bank-transfer`,
  error: field(req.query, 'transfer_error') || undefined,
  message: field(req.query, 'transfer') ? transferMessage(req.portal.locale, field(req.query, 'transfer')) : undefined,
})}
<section class="panel" aria-labelledby="cards"><h2 id="cards">${esc(t.test_cards)}</h2>
${table(t.test_cards, [t.card_number, t.brand, t.three_ds, t.result, t.liability_shift, t.description], rows)}</section>`;
    return kit.page(req, reply, { title: t.test_title, body, nav: 'test', project, status: o.status });
  }

  app.get('/projects/:project_id/test/', async (req, reply) =>
    testPage(req, reply, { message: field(req.query, 'jobs') ? req.portal.t.jobs_ran(Number(field(req.query, 'jobs')) || 0) : undefined }),
  );

  app.post('/projects/:project_id/test/clock', async (req, reply) => {
    const project = await kit.project(req);
    if (project.mode !== 'test') throw notFound('page');
    const advance = field(req.body, 'advance').trim();
    try {
      // advancing the clock twice for one double click would run a day's jobs twice: once per token
      const r = await kit.once(req, 'test-clock', async () => {
        const ran = await runTestClock(ctx, kit.actor(req), project, advance || undefined);
        return { value: ran, shown: `/projects/${project.id}/test/?jobs=${ran.jobs}` };
      });
      return kit.redirect(reply, 'again' in r ? r.again : `/projects/${project.id}/test/?jobs=${r.done.jobs}`);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return testPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}`, advance });
    }
  });
};
