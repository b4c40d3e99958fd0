import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.ts';
import { parseMajorAmount } from '../../domain/portal.ts';
import { formatMinor } from '../../domain/currency.ts';
import { PAYMENT_METHODS } from '../../domain/project.ts';
import { nowFor } from '../../services/platform/context.ts';
import { searchOrders } from '../../services/reporting/search.ts';
import { orderReport } from '../../services/reporting/reports.ts';
import { isOrderAction, orderAction, orderWithRelated, type OrderAction } from '../../services/portal/actions.ts';
import { deliveryLog } from '../../services/webhooks/endpoints.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { OrderView, TransactionView } from '../../domain/schemas/order.ts';
import { field, type Kit } from './kit.ts';
import { alert, badge, csrfField, esc, money, notice, table, when } from './view.ts';

/** Orders: the list (search, quick filters, paging, CSV), an order's page, and its actions. */

const STATUSES = ['new', 'processing', 'completed', 'cancelled', 'expired', 'error', 'see-transactions'];
const PAGE_SIZE = 25;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** One per action form: the action runs once per token (services/portal.ts orderAction). */
const newToken = () => randomBytes(18).toString('base64url');

interface Filter {
  q: string;
  status: string;
  method: string;
  from: string;
  to: string;
}

const filterOf = (query: unknown): Filter => ({
  q: field(query, 'q').slice(0, 2000),
  status: field(query, 'status'),
  method: field(query, 'method'),
  from: field(query, 'from'),
  to: field(query, 'to'),
});

/** The quick filters joined to the typed query, in the API's search language. */
function composeQuery(f: Filter): string {
  const parts: string[] = [];
  if (f.q.trim() && f.q.trim() !== '*') parts.push(`(${f.q.trim()})`);
  if (STATUSES.includes(f.status)) parts.push(`status:${f.status}`);
  if ((PAYMENT_METHODS as readonly string[]).includes(f.method)) parts.push(`transactions.payment_method:${f.method}`);
  const from = DATE.test(f.from) ? f.from : '*';
  const to = DATE.test(f.to) ? f.to : '*';
  if (from !== '*' || to !== '*') parts.push(`created:[${from} TO ${to}]`);
  return parts.join(' AND ') || '*';
}

const filterQuery = (f: Filter, extra: Record<string, string> = {}) =>
  new URLSearchParams(Object.entries({ ...f, ...extra }).filter(([, v]) => v) as [string, string][]).toString();

export const orderRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;
  const orderPath = (p: ProjectRow, id: string) => `${kit.base}/projects/${p.id}/orders/${id}/`;

  app.get('/projects/:project_id/orders/', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const f = filterOf(req.query);
    const after = field(req.query, 'after');
    let error: string | undefined;
    let result: Awaited<ReturnType<typeof searchOrders>> | undefined;
    try {
      result = await searchOrders(ctx, project, { query: composeQuery(f), size: PAGE_SIZE, search_after: after || '-1' });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      error = `${err.type}: ${err.message}`;
    }
    const opt = (v: string, label: string, cur: string) =>
      `<option value="${esc(v)}"${v === cur ? ' selected' : ''}>${esc(label)}</option>`;
    const base = `${kit.base}/projects/${project.id}/orders/`;
    const form = `<form method="get" action="${base}" class="filters" role="search">
<div class="field wide"><label for="q">${esc(t.search)} <span class="hint" id="q-hint">${esc(t.search_hint)}</span></label><input type="search" id="q" name="q" value="${esc(f.q)}" aria-describedby="q-hint"></div>
<div class="field"><label for="status">${esc(t.status)}</label><select id="status" name="status">${opt('', t.any, f.status)}${STATUSES.map((s) => opt(s, s, f.status)).join('')}</select></div>
<div class="field"><label for="method">${esc(t.method)}</label><select id="method" name="method">${opt('', t.any, f.method)}${PAYMENT_METHODS.map((m) => opt(m, m, f.method)).join('')}</select></div>
<div class="field"><label for="from">${esc(t.from)}</label><input type="date" id="from" name="from" value="${esc(DATE.test(f.from) ? f.from : '')}"></div>
<div class="field"><label for="to">${esc(t.to)}</label><input type="date" id="to" name="to" value="${esc(DATE.test(f.to) ? f.to : '')}"></div>
<div class="field"><button type="submit">${esc(t.filter)}</button></div>
</form>`;
    let list = '';
    if (result) {
      const rows = result.orders.map((o) => {
        const txn = o.transactions?.[0];
        return [
          esc(when(o.created)),
          `<a href="${orderPath(project, o.id)}">${esc(o.merchant_order_id ?? o.id)}${kindOf(o) === 'payment' ? '' : ` (${esc(kindOf(o))})`}</a>`,
          esc(o.description ?? ''),
          esc(money(o.amount, o.currency, locale)),
          badge(o.status),
          esc(txn?.payment_method ?? ''),
        ];
      });
      const count = `<p class="muted" role="status">${esc(t.results(result.total, result.total_relation === 'gte'))}</p>`;
      const pager = [
        after ? `<a href="${base}?${filterQuery(f)}">${esc(t.first_page)}</a>` : '',
        result.search_after && result.orders.length === PAGE_SIZE
          ? `<a href="${base}?${filterQuery(f, { after: result.search_after })}" rel="next">${esc(t.next_page)}</a>`
          : '',
      ].join('');
      list = `${count}${rows.length ? table(t.orders_title, [t.created, t.reference, t.description, t.amount, t.status, t.method], rows, { numeric: [3] }) : `<p>${esc(t.no_orders)}</p>`}
<div class="pager">${pager}</div>`;
    }
    const body = `<h1>${esc(t.orders_title)}</h1>
<section class="panel" aria-label="${esc(t.search)}">${form}<p><a class="button secondary" href="${kit.base}/projects/${project.id}/orders.csv?${filterQuery(f)}" download>${esc(t.download_csv)}</a></p></section>
${error ? alert(error) : ''}<section class="panel" aria-label="${esc(t.orders_title)}">${list}</section>`;
    return kit.page(req, reply, { title: t.orders_title, body, nav: 'orders', project, status: error ? 400 : 200 });
  });

  app.get('/projects/:project_id/orders.csv', async (req, reply) => {
    const project = await kit.project(req);
    const report = orderReport(ctx, project, { query: composeQuery(filterOf(req.query)) }, nowFor(project));
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${report.filename}"`)
      .send(report.stream);
  });

  // ---- one order -------------------------------------------------------------------------

  async function orderPage(
    req: FastifyRequest,
    reply: FastifyReply,
    o: { status?: number; error?: string; done?: string; fieldError?: string } = {},
  ) {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const id = (req.params as { order_id: string }).order_id;
    const { order, related, parent } = await orderWithRelated(ctx, project, id);
    const log = await deliveryLog(ctx, project, order.id);
    const m = (n: number) => esc(money(n, order.currency, locale));
    const ref = order.merchant_order_id ?? order.id;
    const c = order.customer ?? {};
    const customer = [[c.first_name, c.last_name].filter(Boolean).join(' '), c.email_address].filter(Boolean).join(', ');
    const facts: [string, string][] = [
      [t.amount, m(order.amount)],
      [t.status, badge(order.status)],
      [t.kind, esc(order.kind ?? (order.flags?.includes('is-refund') ? 'refund' : 'payment'))],
      [t.created, esc(when(order.created))],
      [t.order_id, `<code>${esc(order.id)}</code>`],
      ...(order.description ? ([[t.description, esc(order.description)]] as [string, string][]) : []),
      ...(customer ? ([[t.customer, esc(customer)]] as [string, string][]) : []),
      ...(order.refunded_amount ? ([[t.refunded, m(order.refunded_amount)]] as [string, string][]) : []),
      ...(parent
        ? ([[t.parent, `<a href="${orderPath(project, parent.id)}">${esc(parent.merchant_order_id ?? parent.id)}</a>`]] as [
            string,
            string,
          ][])
        : []),
    ];
    const txns = order.transactions;
    const yn = (v: unknown) => (v === undefined ? '' : v ? t.yes : t.no);
    const txnRows = txns.map((x) => [
      `<code>${esc(x.id.slice(0, 8))}</code>`,
      esc(x.payment_method ?? ''),
      esc(x.payment_method_brand ?? ''),
      esc(x.payment_method_details?.truncated_pan ?? ''),
      `${badge(x.status)}${x.reason ? ` <span class="muted">${esc(x.reason)}</span>` : ''}`,
      esc(
        x.outcomes?.three_d_secure
          ? `${x.outcomes.three_d_secure.trans_status}${x.outcomes.three_d_secure.eci ? ` (ECI ${x.outcomes.three_d_secure.eci})` : ''}`
          : '',
      ),
      esc(yn(x.payment_method_details?.liability_shift)),
      esc(x.capture_mode ?? ''),
      esc(yn(x.is_capturable)),
      m(x.amount),
    ]);
    // Timeline: the order, its transactions' events, and the orders made from it.
    const events: { at: string; html: string }[] = [{ at: order.created, html: `${esc(t.created)}: ${esc(t.order)} ${esc(ref)}` }];
    for (const x of txns)
      for (const e of x.events ?? [])
        events.push({ at: e.occurred, html: `${esc(t.transaction)} <code>${esc(x.id.slice(0, 8))}</code>: ${esc(e.event)}` });
    for (const r of related)
      events.push({
        at: r.created,
        html: `${esc(kindOf(r))}: <a href="${orderPath(project, r.id)}">${m(r.amount)}</a> ${badge(r.status)}`,
      });
    events.sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
    const relatedRows = related.map((r) => [
      esc(kindOf(r)),
      `<a href="${orderPath(project, r.id)}">${esc(r.id.slice(0, 8))}</a>`,
      m(r.amount),
      badge(r.status),
      esc(when(r.created)),
    ]);
    const deliveries = log.deliveries.map((d) => {
      const last = d.attempts.at(-1);
      return [
        esc(d.event),
        `<code>${esc(d.url)}</code>`,
        badge(d.status),
        String(d.attempts.length),
        esc(last ? (('response_status' in last ? last.response_status : undefined) ?? last.error ?? '') : ''),
        esc(when(d.created)),
      ];
    });
    const actions = actionForms(req, project, order, txns);
    const body = `<h1>${esc(t.order_title(ref))}</h1>
${o.error ? alert(o.error) : ''}${o.done ? notice(t.action_done[o.done] ?? '') : ''}
<section class="panel" aria-labelledby="facts-h"><h2 id="facts-h" class="vh">${esc(t.order)}</h2><dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl></section>
<section class="panel" aria-labelledby="actions-h"><h2 id="actions-h">${esc(t.actions)}</h2>${o.fieldError ? alert(o.fieldError) : ''}${actions || `<p>${esc(t.no_actions)}</p>`}</section>
<section class="panel" aria-labelledby="txns-h"><h2 id="txns-h">${esc(t.transactions)}</h2>${table(t.transactions, [t.transaction, t.method, t.brand, t.card, t.status, t.three_ds, t.liability_shift, t.capture_mode, t.capturable, t.amount], txnRows, { numeric: [9] })}</section>
<section class="panel" aria-labelledby="timeline-h"><h2 id="timeline-h">${esc(t.timeline)}</h2><ol class="timeline">${events.map((e) => `<li><span class="muted">${esc(when(e.at))}</span> ${e.html}</li>`).join('')}</ol></section>
<section class="panel" aria-labelledby="related-h"><h2 id="related-h">${esc(t.related)}</h2>${relatedRows.length ? table(t.related, [t.kind, t.order_id, t.amount, t.status, t.created], relatedRows, { numeric: [2] }) : `<p>${esc(t.no_related)}</p>`}</section>
<section class="panel" aria-labelledby="webhooks-h"><h2 id="webhooks-h">${esc(t.webhooks)}</h2>${deliveries.length ? table(t.webhooks, [t.event, t.url, t.status, t.attempts, t.last_response, t.created], deliveries) : `<p>${esc(t.no_deliveries)}</p>`}
${confirmLink(req, project, order.id, 'resend')}</section>`;
    return kit.page(req, reply, { title: t.order_title(ref), body, nav: 'orders', project, status: o.status });
  }

  const kindOf = (o: OrderView): string =>
    o.capture_of_order_id
      ? 'capture'
      : o.void_of_order_id
        ? 'void'
        : o.refund_of_order_id
          ? 'refund'
          : o.chargeback_of_order_id
            ? 'chargeback'
            : o.reversal_of_order_id
              ? 'reversal'
              : 'payment';

  /** A small GET form to the confirmation step of one action. */
  function confirmLink(
    req: FastifyRequest,
    project: ProjectRow,
    orderId: string,
    action: OrderAction,
    o: { txn?: string; amount?: { label: string; value?: string }; description?: boolean } = {},
  ) {
    const t = req.portal.t;
    const idp = `${action}-${o.txn?.slice(0, 8) ?? 'order'}`;
    return `<form method="get" action="${kit.base}/projects/${project.id}/orders/${orderId}/confirm">
<input type="hidden" name="action" value="${action}"><input type="hidden" name="token" value="${newToken()}">${o.txn ? `<input type="hidden" name="transaction_id" value="${esc(o.txn)}">` : ''}
${o.amount ? `<div class="field"><label for="${idp}-amount">${esc(o.amount.label)}</label><input type="text" inputmode="decimal" id="${idp}-amount" name="amount" size="10" value="${esc(o.amount.value ?? '')}"></div>` : ''}
${o.description ? `<div class="field"><label for="${idp}-desc">${esc(t.refund_description)}</label><input type="text" id="${idp}-desc" name="description" maxlength="1024"></div>` : ''}
<button type="submit"${action === 'cancel' || action === 'void' ? ' class="danger"' : ''}>${esc(t.action[action])}</button></form>`;
  }

  function actionForms(req: FastifyRequest, project: ProjectRow, order: OrderView, txns: TransactionView[]): string {
    const t = req.portal.t;
    if (order.related_order_id) return '';
    const out: string[] = [];
    const credit = txns.find((x) => x.credit_debit === 'credit');
    for (const x of txns.filter((y) => y.is_capturable)) {
      out.push(confirmLink(req, project, order.id, 'capture', { txn: x.id }));
      out.push(confirmLink(req, project, order.id, 'void', { txn: x.id, amount: { label: t.amount_optional } }));
    }
    if (order.status === 'completed' && credit) {
      const left = order.amount - (order.refunded_amount ?? 0);
      if (left > 0)
        out.push(
          confirmLink(req, project, order.id, 'refund', {
            amount: { label: t.amount, value: formatMinor(left, order.currency) },
            description: true,
          }),
        );
    }
    if (order.status === 'new' || order.status === 'processing') out.push(confirmLink(req, project, order.id, 'cancel'));
    if (project.mode === 'test' && order.status === 'completed' && credit) {
      out.push(confirmLink(req, project, order.id, 'chargeback', { amount: { label: t.amount_optional } }));
      out.push(confirmLink(req, project, order.id, 'settle'));
    }
    return out.length ? `<div class="actions">${out.join('')}</div>` : '';
  }

  app.get('/projects/:project_id/orders/:order_id/', async (req, reply) =>
    orderPage(req, reply, { done: field(req.query, 'done') || undefined }),
  );

  /** The confirmation step: what will happen, and one button that does it (once). */
  app.get('/projects/:project_id/orders/:order_id/confirm', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const action = field(req.query, 'action');
    if (!isOrderAction(action)) return orderPage(req, reply, { status: 400, fieldError: `${t.actions}?` });
    const { order } = await orderWithRelated(ctx, project, (req.params as { order_id: string }).order_id);
    const amountText = field(req.query, 'amount').trim();
    let amount: number | undefined;
    if (amountText) {
      amount = parseMajorAmount(amountText, order.currency);
      if (amount === undefined) return orderPage(req, reply, { status: 400, fieldError: t.amount_invalid });
    } else if (action === 'refund') return orderPage(req, reply, { status: 400, fieldError: t.amount_invalid });
    const txn = field(req.query, 'transaction_id');
    // the token comes from the order page's form: going back to this page and confirming again is the same action
    const given = field(req.query, 'token');
    const token = /^[A-Za-z0-9_-]{16,64}$/.test(given) ? given : newToken();
    const description = field(req.query, 'description').slice(0, 1024);
    const label = t.action[action];
    const shown = amount !== undefined ? money(amount, order.currency, locale) : undefined;
    const ref = order.merchant_order_id ?? order.id;
    const body = `<h1>${esc(t.confirm_title(label))}</h1>
<section class="panel"><p>${esc(t.confirm_text(label, shown, ref))}</p>
<form method="post" action="${kit.base}/projects/${project.id}/orders/${order.id}/actions">
${csrfField(req.portal.csrf)}<input type="hidden" name="token" value="${esc(token)}">
<input type="hidden" name="action" value="${action}">${txn ? `<input type="hidden" name="transaction_id" value="${esc(txn)}">` : ''}
${amount !== undefined ? `<input type="hidden" name="amount" value="${amount}">` : ''}${description ? `<input type="hidden" name="description" value="${esc(description)}">` : ''}
<p class="actions"><button type="submit"${action === 'cancel' || action === 'void' ? ' class="danger"' : ''}>${esc(t.confirm(label))}</button>
<a href="${orderPath(project, order.id)}">${esc(t.back)}</a></p>
</form></section>`;
    return kit.page(req, reply, { title: t.confirm_title(label), body, nav: 'orders', project });
  });

  app.post('/projects/:project_id/orders/:order_id/actions', async (req, reply) => {
    const project = await kit.project(req);
    const orderId = (req.params as { order_id: string }).order_id;
    const action = field(req.body, 'action');
    if (!isOrderAction(action)) return orderPage(req, reply, { status: 400, error: 'ValidationError: unknown action' });
    const amountText = field(req.body, 'amount');
    const amount = amountText ? Number(amountText) : undefined;
    if (amount !== undefined && (!/^\d{1,16}$/.test(amountText) || !Number.isSafeInteger(amount) || amount <= 0))
      return orderPage(req, reply, { status: 400, error: 'ValidationError: amount must be a whole number of minor units above 0' });
    try {
      const shown = await orderAction(
        ctx,
        kit.actor(req),
        project,
        orderId,
        action,
        { transactionId: field(req.body, 'transaction_id') || undefined, amount, description: field(req.body, 'description') || undefined },
        field(req.body, 'token'),
      );
      return kit.redirect(reply, `/projects/${project.id}/orders/${shown}/?done=${action}`);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 404 || err.status >= 500) throw err;
      return orderPage(req, reply, { status: err.status, error: `${err.type}: ${err.message}` });
    }
  });
};
