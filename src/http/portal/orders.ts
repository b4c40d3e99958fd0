import { riskPanel } from './risk-rules.ts';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { parseMajorAmount } from '../../domain/portal.ts';
import { searchBoxQuery } from '../../domain/search-box.ts';
import { formatMinor } from '../../domain/currency.ts';
import { CARD, PAYMENT_METHODS } from '../../domain/payment-methods.ts';
import { nowFor } from '../../services/platform/context.ts';
import { searchOrders } from '../../services/reporting/search.ts';
import { isOrderAction, orderAction, orderWithRelated, type OrderAction } from '../../services/portal/actions.ts';
import { deliveryLog } from '../../services/webhooks/endpoints.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { moneyActions } from '../../domain/money-state.ts';
import { moneyByOrder, type PaymentMoney } from '../../services/portal/money.ts';
import { cardText, moneyCsv, type OrderView, type TxnView, moneyFacts, moneyWords, stateBadge } from './money-view.ts';
import { clientGone } from '../gone.ts';
import { field, type Kit } from './kit.ts';
import { VIEW_STRINGS } from './i18n-views.ts';
import { alert, badge, csrfField, esc, idCode, money, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** Orders: the list (search, quick filters, paging, CSV), an order's page, and its actions. */

// the order statuses a person filters by (see-transactions is the API's, not a merchant's)
const STATUSES = ['new', 'processing', 'completed', 'cancelled', 'expired', 'error'];
const PAGE_SIZE = 25;
const CSV_MAX = 10_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** One per action form: the action runs once per token (services/portal/actions.ts orderAction). */
const newToken = () => randomBytes(18).toString('base64url');

interface Filter {
  q: string;
  status: string;
  method: string;
  from: string;
  to: string;
  /** the card's last four digits, its brand, the customer's email, an amount range (major units) */
  last4: string;
  brand: string;
  email: string;
  min: string;
  max: string;
  /** the list: payments (their money moves beneath them), or the refunds */
  kind: string;
}

const filterOf = (query: unknown): Filter => ({
  q: field(query, 'q').slice(0, 2000),
  status: field(query, 'status'),
  method: field(query, 'method'),
  from: field(query, 'from'),
  to: field(query, 'to'),
  last4: field(query, 'last4').trim(),
  brand: field(query, 'brand').trim().slice(0, 40),
  email: field(query, 'email').trim().slice(0, 254),
  min: field(query, 'min').trim(),
  max: field(query, 'max').trim(),
  kind: field(query, 'kind') === 'refund' ? 'refund' : '',
});

/** A value as one quoted term of the search language. */
const quoted = (v: string) => `"${v.replace(/["\\]/g, '\\$&')}"`;

/**
 * The quick filters joined to the typed query, in the API's search language. Payments only:
 * the orders that move a payment's money (captures, voids, refunds, chargebacks) are shown
 * beneath their payment, so that the list counts money once.
 */
function composeQuery(f: Filter, currency = 'EUR'): string {
  const parts: string[] = [f.kind === 'refund' ? 'kind:refund' : 'kind:payment'];
  if (/^\d{4}$/.test(f.last4)) parts.push(`transactions.payment_method_details.last4:${f.last4}`);
  if (/^[a-z0-9_-]{2,40}$/i.test(f.brand)) parts.push(`transactions.payment_method_brand:${f.brand.toLowerCase()}`);
  if (f.email) parts.push(`customer.email_address:${quoted(f.email)}`);
  const min = f.min ? parseMajorAmount(f.min, currency) : undefined;
  const max = f.max ? parseMajorAmount(f.max, currency) : undefined;
  if (min !== undefined || max !== undefined) parts.push(`amount:[${min ?? '*'} TO ${max ?? '*'}]`);
  const typed = searchBoxQuery(f.q, currency);
  if (typed) parts.push(`(${typed})`);
  if (STATUSES.includes(f.status)) parts.push(`status:${f.status}`);
  if ((PAYMENT_METHODS as readonly string[]).includes(f.method)) parts.push(`transactions.payment_method:${f.method}`);
  const from = DATE.test(f.from) ? f.from : '*';
  const to = DATE.test(f.to) ? f.to : '*';
  if (from !== '*' || to !== '*') parts.push(`created:[${from} TO ${to}]`);
  return parts.join(' AND ');
}

const filterQuery = (f: Filter, extra: Record<string, string> = {}) =>
  new URLSearchParams(Object.entries({ ...f, ...extra }).filter(([, v]) => v) as [string, string][]).toString();

/** The customer as the list shows them: name, else email. */
const customerOf = (o: OrderView) => {
  const c = o.customer ?? {};
  return [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email_address || '';
};

export const orderRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;
  const orderPath = (p: ProjectRow, id: string) => `${kit.base}/projects/${p.id}/orders/${id}/`;

  app.get('/projects/:project_id/orders/', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const w = moneyWords(locale);
    const f = filterOf(req.query);
    const after = field(req.query, 'after');
    let error: string | undefined;
    let result: Awaited<ReturnType<typeof searchOrders>> | undefined;
    try {
      result = await searchOrders(
        ctx,
        project,
        { query: composeQuery(f), size: PAGE_SIZE, search_after: after || '-1' },
        clientGone(reply),
      );
    } catch (err) {
      if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
      if (err.byLimit) req.refusedByLimit = true;
      error = `${err.type}: ${err.message}`;
    }
    const opt = (v: string, label: string, cur: string) =>
      `<option value="${esc(v)}"${v === cur ? ' selected' : ''}>${esc(label)}</option>`;
    const base = `${kit.base}/projects/${project.id}/orders/`;
    const v = VIEW_STRINGS[locale];
    const refunds = f.kind === 'refund';
    const tabs = `<nav class="tabs" aria-label="${esc(t.orders_title)}"><a href="${base}"${refunds ? '' : ' aria-current="page"'}>${esc(v.payments)}</a><a href="${base}?kind=refund"${refunds ? ' aria-current="page"' : ''}>${esc(v.refunds)}</a></nav>`;
    const form = `<form method="get" action="${base}" class="filters" role="search">${refunds ? '<input type="hidden" name="kind" value="refund">' : ''}
<div class="field wide"><label for="q">${esc(t.search)} <span class="hint" id="q-hint">${esc(t.search_hint)}</span></label><input type="search" id="q" name="q" value="${esc(f.q)}" aria-describedby="q-hint"></div>
<div class="field"><label for="status">${esc(t.status)}</label><select id="status" name="status">${opt('', t.any, f.status)}${STATUSES.map((s) => opt(s, s, f.status)).join('')}</select></div>
<div class="field"><label for="method">${esc(t.method)}</label><select id="method" name="method">${opt('', t.any, f.method)}${PAYMENT_METHODS.map((m) => opt(m, m, f.method)).join('')}</select></div>
<div class="field"><label for="from">${esc(t.from)}</label><input type="date" id="from" name="from" value="${esc(DATE.test(f.from) ? f.from : '')}"></div>
<div class="field"><label for="to">${esc(t.to)}</label><input type="date" id="to" name="to" value="${esc(DATE.test(f.to) ? f.to : '')}"></div>
<div class="field"><label for="last4">${esc(w.last4)}</label><input type="text" id="last4" name="last4" inputmode="numeric" maxlength="4" size="5" pattern="[0-9]{4}" value="${esc(f.last4)}"></div>
<div class="field"><label for="brand">${esc(t.brand)}</label><input type="text" id="brand" name="brand" maxlength="40" size="10" value="${esc(f.brand)}"></div>
<div class="field"><label for="email">${esc(t.email)}</label><input type="email" id="email" name="email" maxlength="254" value="${esc(f.email)}"></div>
<div class="field"><label for="min">${esc(w.amount_min)}</label><input type="text" inputmode="decimal" id="min" name="min" size="8" value="${esc(f.min)}"></div>
<div class="field"><label for="max">${esc(w.amount_max)}</label><input type="text" inputmode="decimal" id="max" name="max" size="8" value="${esc(f.max)}"></div>
<div class="field"><button type="submit">${esc(t.filter)}</button></div>
</form>`;
    let list = '';
    if (result) {
      const moneys = await moneyByOrder(
        ctx,
        project,
        (result.orders as OrderView[]).map((o) => o.id),
      );
      const rows = (result.orders as OrderView[]).map((o) => {
        const txns = o.transactions ?? [];
        const txn = txns.find((x) => x.status === 'accepted' || x.status === 'completed') ?? txns.at(-1);
        const p = moneys.get(o.id);
        if (refunds)
          return [
            esc(when(o.created, project)),
            `<a class="id" href="${orderPath(project, o.id)}">${esc(o.id)}</a>`,
            o.refund_of_order_id ? `<a class="id" href="${orderPath(project, o.refund_of_order_id)}">${esc(o.refund_of_order_id)}</a>` : '',
            esc(o.description ?? ''),
            esc(customerOf(o)),
            esc(money(o.amount, o.currency, locale)),
            badge(o.status),
          ];
        return [
          esc(when(o.created, project)),
          `<a href="${orderPath(project, o.id)}">${esc(o.merchant_order_id ?? o.id)}</a>`,
          esc(o.description ?? ''),
          esc(customerOf(o)),
          esc(money(o.amount, o.currency, locale)),
          p ? stateBadge(w, p.money) : badge(o.status),
          p ? esc(money(p.money.net, o.currency, locale)) : '',
          esc(txn ? cardText(txn) : ''),
        ];
      });
      const more = result.total_relation === 'gte';
      const count = `<p class="muted" role="status">${esc(refunds ? v.refunds_count(result.total, more) : t.results(result.total, more))}</p>`;
      const pager = [
        after ? `<a href="${base}?${filterQuery(f)}">${esc(t.first_page)}</a>` : '',
        result.search_after && result.orders.length === PAGE_SIZE
          ? `<a href="${base}?${filterQuery(f, { after: result.search_after })}" rel="next">${esc(t.next_page)}</a>`
          : '',
      ].join('');
      list = `${count}${
        !rows.length
          ? `<p>${esc(refunds ? v.no_refunds : t.no_orders)}</p>`
          : refunds
            ? table(v.refunds_title, [t.created, v.refund, v.of_payment, t.description, t.customer, t.amount, t.status], rows, {
                numeric: [5],
              })
            : table(
                t.orders_title,
                [t.created, t.reference, t.description, t.customer, t.amount, t.status, moneyWords(locale).net, t.method],
                rows,
                { numeric: [4, 6] },
              )
      }
<div class="pager">${pager}</div>`;
    }
    const title = refunds ? v.refunds_title : t.orders_title;
    // the CSV counts each payment's money once: it lists payments, so the refunds list has none
    const csv = refunds
      ? ''
      : `<p><a class="button secondary" href="${kit.base}/projects/${project.id}/orders.csv?${filterQuery(f)}" download>${esc(t.download_csv)}</a></p>`;
    const body = `<h1>${esc(title)}</h1>${tabs}
<section class="panel" aria-label="${esc(t.search)}">${form}${csv}</section>
${error ? alert(error) : ''}<section class="panel" aria-label="${esc(title)}">${list}</section>`;
    return kit.page(req, reply, { title, body, nav: 'orders', project, status: error ? 400 : 200 });
  });

  /**
   * The portal's CSV: one line per payment with its money state and net (money counted once),
   * at most CSV_MAX payments; the API's CSV report (POST /v1/reports/orders/) keeps the spec's shape.
   */
  app.get('/projects/:project_id/orders.csv', async (req, reply) => {
    const project = await kit.project(req);
    const query = composeQuery(filterOf(req.query));
    const rows: { order: OrderView; p: PaymentMoney }[] = [];
    let after: string = '-1';
    while (rows.length < CSV_MAX) {
      const page = await searchOrders(ctx, project, { query, size: 500, search_after: after });
      const moneys = await moneyByOrder(
        ctx,
        project,
        (page.orders as OrderView[]).map((o) => o.id),
      );
      for (const o of page.orders as OrderView[]) {
        const p = moneys.get(o.id);
        if (p) rows.push({ order: o, p });
      }
      if (page.orders.length < 500 || !page.search_after) break;
      after = page.search_after;
    }
    const day = nowFor(project).toISOString().slice(0, 10);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="payments-${day}.csv"`)
      .send(moneyCsv(rows));
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
    const w = moneyWords(locale);
    // the primary: the page after an action shows its result
    const pm = (await moneyByOrder(ctx, project, [order.id], true)).get(order.id);
    const m = (n: number) => esc(money(n, order.currency, locale));
    const ref = order.merchant_order_id ?? order.id;
    const c = order.customer ?? {};
    const customer = [[c.first_name, c.last_name].filter(Boolean).join(' '), c.email_address].filter(Boolean).join(', ');
    const facts: [string, string][] = [
      [t.amount, m(order.amount)],
      ...(pm ? moneyFacts(w, pm.money, order.currency, locale) : []),
      [t.status, badge(order.status)],
      [t.kind, esc(order.kind ?? (order.flags?.includes('is-refund') ? 'refund' : 'payment'))],
      [t.created, esc(when(order.created, project))],
      [t.order_id, `<code>${esc(order.id)}</code>`],
      ...(order.description ? ([[t.description, esc(order.description)]] as [string, string][]) : []),
      ...(customer ? ([[t.customer, esc(customer)]] as [string, string][]) : []),
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
      idCode(x.id),
      esc(x.payment_method ?? ''),
      esc(x.payment_method_brand ?? ''),
      esc(x.payment_method_details?.truncated_pan ?? ''),
      `${badge(x.status)}${x.reason && x.reason !== x.status ? ` <span class="muted">${esc(w.reason[x.reason] ?? x.reason)}</span>` : ''}`,
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
      for (const e of x.events ?? []) events.push({ at: e.occurred, html: `${esc(t.transaction)} ${idCode(x.id)}: ${esc(e.event)}` });
    for (const r of related)
      events.push({
        at: r.created,
        html: `${esc(kindOf(r))}: <a href="${orderPath(project, r.id)}">${m(r.amount)}</a> ${badge(r.status)}`,
      });
    events.sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
    const relatedRows = related.map((r) => [
      esc(kindOf(r)),
      `<a class="id" href="${orderPath(project, r.id)}">${esc(r.id)}</a>`,
      m(r.amount),
      badge(r.status),
      esc(when(r.created, project)),
    ]);
    const deliveries = log.deliveries.map((d) => {
      const last = d.attempts.at(-1);
      return [
        esc(d.event),
        `<code>${esc(d.url)}</code>`,
        badge(d.status),
        String(d.attempts.length),
        esc(last ? (('response_status' in last ? last.response_status : undefined) ?? last.error ?? '') : ''),
        esc(when(d.created, project)),
      ];
    });
    const actions = actionForms(req, project, order, txns, pm) + blockCardForms(req, project, order, txns);
    const body = `<h1>${esc(t.order_title(ref))}</h1>
${o.error ? alert(o.error) : ''}${o.done ? notice(t.action_done[o.done] ?? '') : ''}
<section class="panel" aria-labelledby="facts-h"><h2 id="facts-h" class="vh">${esc(t.order)}</h2><dl class="facts">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl></section>
<section class="panel" aria-labelledby="actions-h"><h2 id="actions-h">${esc(t.actions)}</h2>${o.fieldError ? alert(o.fieldError) : ''}${actions || `<p>${esc(t.no_actions)}</p>`}</section>
<section class="panel" aria-labelledby="txns-h"><h2 id="txns-h">${esc(t.transactions)}</h2>${table(t.transactions, [t.transaction, t.method, t.brand, t.card, t.status, t.three_ds, t.liability_shift, t.capture_mode, t.capturable, t.amount], txnRows, { numeric: [9] })}</section>
${riskPanel(txns, req.portal.locale)}
<section class="panel" aria-labelledby="timeline-h"><h2 id="timeline-h">${esc(t.timeline)}</h2><ol class="timeline">${events.map((e) => `<li><span class="muted">${esc(when(e.at, project))}</span> ${e.html}</li>`).join('')}</ol></section>
<section class="panel" aria-labelledby="related-h"><h2 id="related-h">${esc(pm ? w.movements : t.related)}</h2>${relatedRows.length ? table(pm ? w.movements : t.related, [t.kind, t.order_id, t.amount, t.status, t.created], relatedRows, { numeric: [2] }) : `<p>${esc(pm ? w.no_movements : t.no_related)}</p>`}</section>
<section class="panel" aria-labelledby="webhooks-h"><h2 id="webhooks-h">${esc(t.webhooks)}</h2>${deliveries.length ? table(t.webhooks, [t.event, t.url, t.status, t.attempts, t.last_response, t.created], deliveries) : `<p>${esc(t.no_deliveries)}</p>`}
${kit.can(req, 'developer') ? confirmLink(req, project, order.id, 'resend') : ''}</section>`;
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
    const idp = `${action}-${o.txn ?? 'order'}`;
    return `<form method="get" action="${kit.base}/projects/${project.id}/orders/${orderId}/confirm">
<input type="hidden" name="action" value="${action}"><input type="hidden" name="token" value="${newToken()}">${o.txn ? `<input type="hidden" name="transaction_id" value="${esc(o.txn)}">` : ''}
${o.amount ? `<div class="field"><label for="${idp}-amount">${esc(o.amount.label)}</label><input type="text" inputmode="decimal" id="${idp}-amount" name="amount" size="10" value="${esc(o.amount.value ?? '')}"></div>` : ''}
${o.description ? `<div class="field"><label for="${idp}-desc">${esc(t.refund_description)}</label><input type="text" id="${idp}-desc" name="description" maxlength="1024"></div>` : ''}
<button type="submit"${action === 'cancel' || action === 'void' ? ' class="danger"' : ''}>${esc(t.action[action])}</button></form>`;
  }

  /** Only the actions the payment's money allows (domain/money-state.ts moneyActions). */
  function actionForms(req: FastifyRequest, project: ProjectRow, order: OrderView, txns: TxnView[], pm: PaymentMoney | undefined): string {
    const t = req.portal.t;
    if (order.related_order_id || !pm || !kit.can(req, 'money')) return ''; // support and owners move money
    const allowed = moneyActions(order.status, pm.money);
    const out: string[] = [];
    if (allowed.capture || allowed.void)
      for (const x of txns.filter((y) => y.is_capturable)) {
        out.push(confirmLink(req, project, order.id, 'capture', { txn: x.id }));
        out.push(confirmLink(req, project, order.id, 'void', { txn: x.id, amount: { label: t.amount_optional } }));
      }
    if (allowed.refund)
      out.push(
        confirmLink(req, project, order.id, 'refund', {
          amount: { label: t.amount, value: formatMinor(allowed.refund, order.currency) },
          description: true,
        }),
      );
    if (allowed.cancel) out.push(confirmLink(req, project, order.id, 'cancel'));
    if (project.mode === 'test' && pm.money.net > 0) {
      out.push(confirmLink(req, project, order.id, 'chargeback', { amount: { label: t.amount_optional } }));
      out.push(confirmLink(req, project, order.id, 'settle'));
    }
    return out.length ? `<div class="actions">${out.join('')}</div>` : '';
  }

  /** "Block this card" for each card transaction with a card, for those who change the lists (docs/risk.md "Lists"). */
  function blockCardForms(req: FastifyRequest, project: ProjectRow, order: OrderView, txns: TxnView[]): string {
    if (order.related_order_id || !kit.can(req, 'risk')) return '';
    const cards = txns.filter((x) => x.payment_method === CARD && x.payment_method_details?.truncated_pan);
    return cards.length
      ? `<div class="actions">${cards.map((x) => confirmLink(req, project, order.id, 'block_card', { txn: x.id })).join('')}</div>`
      : '';
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
    // a capture moves all that is reserved, as does a void without an amount: say how much
    const open =
      amount === undefined && (action === 'capture' || action === 'void')
        ? (await moneyByOrder(ctx, project, [order.id], true)).get(order.id)?.money.open
        : undefined;
    const shownAmount = amount ?? (open ? open : undefined);
    const shown = shownAmount !== undefined ? money(shownAmount, order.currency, locale) : undefined;
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
      if (!(err instanceof DomainError) || statusOf(err) === 404 || statusOf(err) >= 500) throw err;
      return orderPage(req, reply, { status: statusOf(err), error: `${err.type}: ${err.message}` });
    }
  });
};
