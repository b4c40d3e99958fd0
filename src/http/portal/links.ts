import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { addDuration } from '../../domain/duration.ts';
import { nowFor } from '../../services/platform/context.ts';
import { parseMajorAmount } from '../../domain/portal.ts';
import { settingsOf } from '../../domain/project.ts';
import { audit, linkOf, linksOf } from '../../services/portal/actions.ts';
import { createLink } from '../../services/links/payment-links.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { field, type Kit } from './kit.ts';
import { alert, badge, copyable, csrfField, esc, money, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** Payment links: the list with status, a form to create one, a link's page with its orders. */

const EXPIRIES = ['P1D', 'P7D', 'P30D'];
/** "30 days (until 2026-12-26)": a choice a person reads, not an ISO 8601 duration. */
const expiryLabel = (period: string, now: Date) => {
  const days = Number(/^P(\d+)D$/.exec(period)?.[1]);
  return `${days} day${days === 1 ? '' : 's'} (${addDuration(now, period).toISOString().slice(0, 10)})`;
};

function currenciesOf(project: ProjectRow): string[] {
  const s = settingsOf(project.settings);
  return [...new Set(Object.values(s.payment_methods).flatMap((m) => m?.currencies ?? []))].sort((a, b) =>
    a === 'EUR' ? -1 : b === 'EUR' ? 1 : a.localeCompare(b),
  );
}

export const linkRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;

  async function listPage(
    req: FastifyRequest,
    reply: FastifyReply,
    o: { status?: number; error?: string; keep?: Record<string, string> } = {},
  ) {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const links = await linksOf(ctx, project);
    const k = o.keep ?? {};
    const currency = k.currency || 'EUR';
    const rows = links.map((l) => [
      `<a href="${kit.base}/projects/${project.id}/links/${l.id}/">${esc(l.merchant_order_id)}</a>`,
      esc(l.description ?? ''),
      esc(money(l.amount, l.currency, locale)),
      badge(l.state.status, t.link_status[l.state.status] ?? l.state.status),
      esc(when(l.created, project)),
      copyable(`link-${l.id}`, l.url, t, l.merchant_order_id),
    ]);
    // payment links ask for money: support and owners make them (domain/roles.ts)
    const newLinkForm = () => `<section class="panel" aria-labelledby="new-link"><h2 id="new-link">${esc(t.new_link)}</h2>
<form method="post" action="${kit.base}/projects/${project.id}/links/" class="filters">
${csrfField(req.portal.csrf)}${kit.onceField()}
<div class="field"><label for="link-ref">${esc(t.reference)}</label><input type="text" id="link-ref" name="merchant_order_id" maxlength="255" required value="${esc(k.merchant_order_id)}"></div>
<div class="field"><label for="link-amount">${esc(t.amount)}</label><input type="text" inputmode="decimal" id="link-amount" name="amount" required value="${esc(k.amount)}"></div>
<div class="field"><label for="link-currency">${esc(t.currency)}</label><select id="link-currency" name="currency">${currenciesOf(project)
      .map((c) => `<option${c === currency ? ' selected' : ''}>${esc(c)}</option>`)
      .join('')}</select></div>
<div class="field"><label for="link-expires">${esc(t.expires)}</label><select id="link-expires" name="expiration_period">${EXPIRIES.map((e) => `<option value="${e}"${e === (k.expiration_period || 'P30D') ? ' selected' : ''}>${esc(expiryLabel(e, nowFor(project)))}</option>`).join('')}</select></div>
<div class="field wide"><label for="link-desc">${esc(t.description)}</label><input type="text" id="link-desc" name="description" maxlength="1024" value="${esc(k.description)}"></div>
<div class="field"><button type="submit">${esc(t.create_link)}</button></div>
</form></section>`;
    const body = `<h1>${esc(t.links_title)}</h1>
${o.error ? alert(o.error) : ''}${kit.can(req, 'money') ? newLinkForm() : ''}
<section class="panel" aria-labelledby="links-h"><h2 id="links-h">${esc(t.links_title)}</h2>
${rows.length ? table(t.links_title, [t.reference, t.description, t.amount, t.status, t.created, t.link], rows, { numeric: [2] }) : `<p>${esc(t.no_links)}</p>`}</section>`;
    return kit.page(req, reply, { title: t.links_title, body, nav: 'links', project, status: o.status });
  }

  app.get('/projects/:project_id/links/', async (req, reply) => listPage(req, reply));

  app.post('/projects/:project_id/links/', async (req, reply) => {
    const project = await kit.project(req);
    const t = req.portal.t;
    const keep = Object.fromEntries(
      ['merchant_order_id', 'amount', 'currency', 'description', 'expiration_period'].map((n) => [n, field(req.body, n)]),
    );
    const ref = keep.merchant_order_id.trim();
    if (!ref || ref.length > 255) return listPage(req, reply, { status: 400, error: `ValidationError: ${t.reference}`, keep });
    const amount = parseMajorAmount(keep.amount, keep.currency);
    if (amount === undefined) return listPage(req, reply, { status: 400, error: t.amount_invalid, keep });
    try {
      const made = await kit.once(req, 'create-link', async () => {
        const link = await createLink(ctx, project, {
          merchant_order_id: ref,
          amount,
          currency: keep.currency,
          ...(keep.description.trim() ? { description: keep.description.trim() } : {}),
          expiration_period: EXPIRIES.includes(keep.expiration_period) ? keep.expiration_period : 'P30D',
        });
        await audit(ctx, kit.actor(req), 'link_created', project.id, { link_id: link.id, amount, currency: keep.currency });
        return { value: link, shown: `/projects/${project.id}/links/${link.id}/?created=1` };
      });
      // a resent form: the link the first one made
      return kit.redirect(reply, 'again' in made ? made.again : `/projects/${project.id}/links/${made.done.id}/?created=1`);
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      return listPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}`, keep });
    }
  });

  app.get('/projects/:project_id/links/:link_id/', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const link = await linkOf(ctx, project, (req.params as { link_id: string }).link_id);
    const orders = Object.entries((link.orders ?? {}) as Record<string, string[]>).flatMap(([status, ids]) =>
      ids.map((id) => ({ id, status })),
    );
    const rows = orders.map((o) => [`<a href="${kit.base}/projects/${project.id}/orders/${o.id}/">${esc(o.id)}</a>`, badge(o.status)]);
    const body = `<h1>${esc(t.link_title(link.merchant_order_id))}</h1>
${field(req.query, 'created') ? notice(t.link_created) : ''}
<section class="panel" aria-labelledby="link-facts"><h2 id="link-facts" class="vh">${esc(t.link)}</h2><dl class="facts">
<dt>${esc(t.status)}</dt><dd data-link-status="${esc(link.status)}">${badge(link.status, t.link_status[link.status] ?? link.status)}</dd>
<dt>${esc(t.amount)}</dt><dd>${esc(money(link.amount, link.currency, locale))}</dd>
${link.description ? `<dt>${esc(t.description)}</dt><dd>${esc(link.description)}</dd>` : ''}
<dt>${esc(t.created)}</dt><dd>${esc(when(link.created, project))}</dd>
<dt>${esc(t.expires)}</dt><dd data-expires>${esc(when(addDuration(new Date(link.created), link.expiration_period), project))}</dd>
<dt>${esc(t.link)}</dt><dd>${copyable('link-url', link.payment_url, t, t.link)}</dd>
</dl></section>
<section class="panel" aria-labelledby="link-orders"><h2 id="link-orders">${esc(t.link_orders)}</h2>
${rows.length ? table(t.link_orders, [t.order_id, t.status], rows) : `<p>${esc(t.no_orders)}</p>`}</section>`;
    return kit.page(req, reply, { title: t.link_title(link.merchant_order_id), body, nav: 'links', project });
  });
};
