import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { DELIVERY_STATUSES, projectDeliveryLog, resendDelivery, sendTestEvent } from '../../services/webhooks/log.ts';
import { audit } from '../../services/portal/actions.ts';
import { field, type Kit } from './kit.ts';
import { TEAM_STRINGS } from './i18n-team.ts';
import { alert, badge, csrfField, esc, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/**
 * The project's webhook log: every delivery and attempt (time, URL, status, duration, the start
 * of the answer), failed ones first, filters, one delivery sent again, and a test event.
 */
export const webhookRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function logPage(req: FastifyRequest, reply: FastifyReply, o: { status?: number; error?: string; done?: string } = {}) {
    const project = await kit.project(req);
    const { t, locale, csrf } = req.portal;
    const w = TEAM_STRINGS[locale];
    const status = field(req.query, 'status');
    const event = field(req.query, 'event');
    const { deliveries } = await projectDeliveryLog(ctx, project, { status, event, limit: 100 });
    const base = `${kit.base}/projects/${project.id}/webhooks/`;
    const dev = kit.can(req, 'developer');
    const opt = (v: string, label: string, cur: string) => `<option value="${v}"${v === cur ? ' selected' : ''}>${esc(label)}</option>`;
    const rows = deliveries.map((d) => {
      const attempts = d.attempts
        .map(
          (a) =>
            `<li>#${a.attempt} ${esc('time' in a && a.time ? when(a.time, project) : '')} ${
              'response_status' in a && a.response_status !== undefined ? `HTTP ${a.response_status}` : ''
            } ${'duration_ms' in a && a.duration_ms !== undefined ? `${a.duration_ms} ms` : ''} ${
              a.error ? `<span class="muted">${esc(a.error)}</span>` : ''
            }${'response_excerpt' in a && a.response_excerpt ? ` <code>${esc(a.response_excerpt.slice(0, 120))}</code>` : ''}</li>`,
        )
        .join('');
      return [
        esc(when(d.created, project)),
        esc(d.event === 'test' ? w.test_event : d.event),
        d.order_id
          ? `<a class="id" href="${kit.base}/projects/${project.id}/orders/${d.order_id}/">${esc(d.order_id)}</a>`
          : esc(w.no_order),
        `<code>${esc(d.url)}</code>`,
        `<span data-delivery-status="${d.status}">${badge(d.status === 'succeeded' ? 'completed' : d.status === 'failed' ? 'error' : d.status, d.status)}</span>`,
        attempts ? `<ol class="attempts">${attempts}</ol>` : '',
        dev
          ? `<form method="post" action="${base}${d.id}/resend" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">${esc(w.resend)}<span class="vh"> ${esc(d.id)}</span></button></form>`
          : '',
      ];
    });
    const body = `<h1>${esc(w.webhook_log)}</h1>
${o.error ? alert(o.error) : ''}${o.done ? notice(o.done) : ''}
<section class="panel" aria-labelledby="wh-filter"><h2 id="wh-filter" class="vh">${esc(t.search)}</h2>
<form method="get" action="${base}" class="filters">
<div class="field"><label for="wh-status">${esc(t.status)}</label><select id="wh-status" name="status">${opt('', t.any, status)}${DELIVERY_STATUSES.map((s) => opt(s, s, status)).join('')}</select></div>
<div class="field"><label for="wh-event">${esc(t.event)}</label><select id="wh-event" name="event">${opt('', t.any, event)}${opt('status_changed', 'status_changed', event)}${opt('test', w.test_event, event)}</select></div>
<div class="field"><button type="submit">${esc(t.filter)}</button></div></form>
${dev ? `<form method="post" action="${base}test">${csrfField(csrf)}<p><button type="submit">${esc(w.send_test)}</button> <span class="muted">${esc(project.webhook_url ?? w.no_url)}</span></p></form>` : ''}</section>
<section class="panel" aria-labelledby="wh-list"><h2 id="wh-list">${esc(w.deliveries)}</h2><p class="muted">${esc(w.failed_first)}</p>
${rows.length ? table(w.deliveries, [t.created, t.event, t.order, t.url, t.status, t.attempts, t.actions], rows) : `<p>${esc(t.no_deliveries)}</p>`}</section>`;
    return kit.page(req, reply, { title: w.webhook_log, body, nav: 'webhooks', project, status: o.status });
  }

  async function act(req: FastifyRequest, reply: FastifyReply, run: () => Promise<unknown>, done: string) {
    try {
      await run();
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return logPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}` });
    }
    return logPage(req, reply, { done });
  }

  app.get('/projects/:project_id/webhooks/', async (req, reply) => logPage(req, reply));

  app.post('/projects/:project_id/webhooks/test', async (req, reply) => {
    const project = await kit.project(req);
    const w = TEAM_STRINGS[req.portal.locale];
    return act(
      req,
      reply,
      async () => {
        const d = await sendTestEvent(ctx, project);
        await audit(ctx, kit.actor(req), 'webhook_test', project.id, { url: d.url, status: d.status });
      },
      w.test_sent,
    );
  });

  app.post('/projects/:project_id/webhooks/:delivery_id/resend', async (req, reply) => {
    const project = await kit.project(req);
    const w = TEAM_STRINGS[req.portal.locale];
    const id = (req.params as { delivery_id: string }).delivery_id;
    return act(
      req,
      reply,
      async () => {
        await resendDelivery(ctx, project, id);
        await audit(ctx, kit.actor(req), 'webhook_delivery_resent', project.id, { delivery_id: id });
      },
      w.resent,
    );
  });
};
