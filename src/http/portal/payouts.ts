import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProjectRow } from '../../domain/entities.ts';
import { timeZoneOf } from '../../domain/project.ts';
import type { Locale } from '../pay/i18n.ts';
import { nowFor } from '../../services/platform/context.ts';
import { listPayouts, payoutView } from '../../services/payouts/payouts.ts';
import { monthlyStatement, payoutStatement, statementCsv, type Line } from '../../services/payouts/statements.ts';
import { balancesOfMerchant, maskedIban, savePayoutSettings, scheduleOf } from '../../services/portal/payouts.ts';
import { parseEuros } from '../../domain/payouts/sepa.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import { PAYOUT_STRINGS, type PayoutStrings } from './i18n-payouts.ts';
import { field, type Kit } from './kit.ts';
import { alert, badge, csrfField, esc, idCode, money, notice, table, when } from './view.ts';
import { statusOf } from '../errors.ts';

/** A payout's state as a badge, coloured as the money states are (scheduled and sent: on the way; booked: paid; rejected, returned: back). */
const STATE_CLASS: Record<string, string> = {
  scheduled: 'm-open',
  sent: 'm-processing',
  booked: 'm-captured',
  rejected: 'm-declined',
  returned: 'm-refunded',
};
const stateBadge = (s: string, p: PayoutStrings) =>
  `<span data-payout-state="${esc(s)}">${badge(STATE_CLASS[s] ?? '', p.states[s] ?? s)}</span>`;

/** Home: the merchant's balances per mode and currency. */
export async function balancesPanel(kit: Kit, req: FastifyRequest, locale: Locale) {
  const p = PAYOUT_STRINGS[locale];
  const rows = await balancesOfMerchant(kit.ctx, req.portal.session!.user.merchant_id);
  const body = rows.length
    ? table(
        p.balances,
        [p.mode, p.currency, p.pending, p.available, p.reserved],
        rows.map((b) => [
          esc(b.mode === 'test' ? p.test : p.live),
          esc(b.currency),
          ...[b.pending, b.available, b.reserved].map(
            (n) => `<span data-balance="${b.mode}-${b.currency}">${esc(money(n, b.currency, locale))}</span>`,
          ),
        ]),
        { numeric: [2, 3, 4] },
      )
    : `<p>${esc(p.no_balances)}</p>`;
  return `<section class="panel" aria-labelledby="balances-h"><h2 id="balances-h">${esc(p.balances)}</h2><p class="muted">${esc(p.balances_intro)}</p>${body}</section>`;
}

/** Home, for owners: a new payout account, while the next payout is held for it. */
export async function payoutAccountNotice(kit: Kit, req: FastifyRequest, project: ProjectRow, locale: Locale) {
  if (!kit.can(req, 'payouts')) return '';
  const s = await scheduleOf(kit.ctx, req.portal.session!.user.merchant_id);
  if (!s?.held_until || s.held_until.getTime() <= Date.now()) return '';
  return `<div data-iban-notice>${notice(PAYOUT_STRINGS[locale].held(maskedIban(s.iban), when(s.held_until, project)))}</div>`;
}

const EVERY = ['daily', 'weekly:mon', 'monthly:1'] as const;
const everyText = (e: string, p: PayoutStrings) =>
  e === 'daily' ? p.every_daily : e === 'weekly:mon' ? p.every_weekly : e === 'monthly:1' ? p.every_monthly : e;

/** Settings > Payouts: the schedule and account; a form for owners, read-only for the others. */
export async function payoutSettingsPanel(kit: Kit, req: FastifyRequest, project: ProjectRow, error?: string) {
  const { locale, csrf } = req.portal;
  const p = PAYOUT_STRINGS[locale];
  const s = await scheduleOf(kit.ctx, req.portal.session!.user.merchant_id);
  const now = s
    ? `<p data-payout-schedule>${esc(p.schedule_now(everyText(s.every, p), maskedIban(s.iban)))}</p>`
    : `<p>${esc(p.no_schedule)}</p>`;
  const options = [...EVERY, ...(s && !(EVERY as readonly string[]).includes(s.every) ? [s.every] : [])];
  const form = kit.can(req, 'payouts')
    ? `${error ? alert(error) : ''}<form method="post" action="${kit.base}/projects/${project.id}/settings/payouts">${csrfField(csrf)}
<div class="field"><label for="payout-iban">${esc(p.iban)}</label><input type="text" id="payout-iban" name="iban" maxlength="42" autocomplete="off" spellcheck="false" required value="${esc(s?.iban ?? '')}"></div>
<div class="field"><label for="payout-name">${esc(p.holder)}</label><input type="text" id="payout-name" name="name" maxlength="70" required value="${esc(s?.name ?? '')}"></div>
<div class="field"><label for="payout-every">${esc(p.every)}</label><select id="payout-every" name="every">${options
        .map((e) => `<option value="${esc(e)}"${e === (s?.every ?? 'daily') ? ' selected' : ''}>${esc(everyText(e, p))}</option>`)
        .join('')}</select></div>
<div class="field"><label for="payout-minimum">${esc(p.minimum)} <span class="hint" id="payout-minimum-hint">${esc(p.minimum_hint)}</span></label>
<input type="text" id="payout-minimum" name="minimum" inputmode="decimal" maxlength="15" value="${s ? (Number(s.minimum) / 100).toFixed(2) : '0.00'}" aria-describedby="payout-minimum-hint"></div>
<button type="submit">${esc(p.save)}</button></form>`
    : `<p>${esc(p.owners_only)}</p>`;
  return `<section class="panel" aria-labelledby="payouts-settings"><h2 id="payouts-settings">${esc(p.settings)}</h2><p>${esc(p.settings_intro)}</p>${now}${form}</section>`;
}

const csv = (reply: FastifyReply, name: string, body: string) =>
  reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}"`).send(body);

/** Payouts: the list with the monthly statements, a payout's page with its lines, and their CSV. */
export const payoutRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  const ctx = kit.ctx;
  const who = (req: FastifyRequest, project: ProjectRow) => ({ merchant_id: req.portal.session!.user.merchant_id, mode: project.mode });

  app.get('/projects/:project_id/payouts/', async (req, reply) => {
    const project = await kit.project(req);
    const { locale } = req.portal;
    const p = PAYOUT_STRINGS[locale];
    const { payouts } = await listPayouts(ctx, { merchant_id: project.merchant_id, mode: project.mode }, 100);
    const base = `${kit.base}/projects/${project.id}/payouts`;
    const rows = payouts.map((o) => [
      `<a href="${base}/${o.id}/">${esc(o.period)}</a>`,
      esc(money(o.amount, o.currency, locale)),
      stateBadge(o.state, p),
      `<code>${esc(maskedIban(o.iban))}</code>`,
    ]);
    const zone = timeZoneOf(project.settings);
    const month = nowFor(project).toISOString().slice(0, 7);
    const body = `<h1>${esc(p.title)}</h1>
${await balancesPanel(kit, req, locale)}
<section class="panel" aria-labelledby="payouts-h"><h2 id="payouts-h">${esc(p.title)}</h2><p class="muted">${esc(p.intro(project.mode === 'test' ? p.test.toLowerCase() : p.live.toLowerCase()))}</p>
${rows.length ? table(p.title, [p.date, p.amount, p.state, p.account], rows, { numeric: [1] }) : `<p>${esc(p.none)}</p>`}</section>
<section class="panel" aria-labelledby="statements-h"><h2 id="statements-h">${esc(p.statements)}</h2><p>${esc(p.statements_intro(zone))}</p>
<form method="get" action="${base}/statement.csv" class="filters"><div class="field"><label for="month">${esc(p.month)}</label><input type="month" id="month" name="month" required value="${month}"></div>
<div class="field"><button type="submit">${esc(p.download_statement)}</button></div></form></section>`;
    return kit.page(req, reply, { title: p.title, body, nav: 'payouts', project });
  });

  app.get('/projects/:project_id/payouts/statement.csv', async (req, reply) => {
    const project = await kit.project(req);
    const zone = timeZoneOf(project.settings);
    const s = await monthlyStatement(ctx, who(req, project), field(req.query, 'month'), zone);
    return csv(reply, `statement-${project.mode}-${s.month}.csv`, statementCsv(s.lines, zone, true));
  });

  app.get('/projects/:project_id/payouts/:payout_id/', async (req, reply) => {
    const project = await kit.project(req);
    const { locale } = req.portal;
    const p = PAYOUT_STRINGS[locale];
    const { payout, lines } = await payoutStatement(ctx, who(req, project), (req.params as { payout_id: string }).payout_id);
    const v = payoutView(payout);
    const orders = `${kit.base}/projects/`;
    const rows = lines.map((l: Line) => [
      esc(when(l.created, project)),
      `<span data-line-type="${l.type}">${esc(p.types[l.type] ?? l.type)}</span>`,
      l.order_id
        ? `<a href="${orders}${l.project_id}/orders/${l.order_id}/">${esc(l.reference ?? l.order_id.slice(0, 8))}</a>`
        : esc(l.reference ?? ''),
      esc(l.project_name),
      `<span data-line-amount="${l.amount}">${esc(money(l.amount, l.currency, locale))}</span>`,
    ]);
    const total = lines.reduce((n, l) => n + l.amount, 0);
    const facts = `<dl class="facts"><dt>${esc(p.amount)}</dt><dd data-payout-amount="${v.amount}">${esc(money(v.amount, v.currency, locale))}</dd>
<dt>${esc(p.state)}</dt><dd>${stateBadge(v.state, p)}</dd>
<dt>${esc(p.account)}</dt><dd><code>${esc(v.iban)}</code> ${esc(v.name)}</dd>
<dt>${esc(p.end_to_end)}</dt><dd>${idCode(v.end_to_end_id)}</dd>
${v.return_reason ? `<dt>${esc(p.reason)}</dt><dd><code>${esc(v.return_reason)}</code></dd>` : ''}</dl>`;
    const body = `<h1>${esc(p.payout_title(v.period))}</h1>
<section class="panel" aria-labelledby="payout-h"><h2 id="payout-h">${esc(p.payout)}</h2>${facts}</section>
<section class="panel" aria-labelledby="lines-h"><h2 id="lines-h">${esc(p.lines)}</h2>
${rows.length ? table(p.lines, [p.date, p.type, p.reference, p.project, p.amount], rows, { numeric: [4] }) : `<p>${esc(p.no_lines)}</p>`}
<p>${esc(p.lines_total)}: <strong data-lines-total="${total}">${esc(money(total, v.currency, locale))}</strong></p>
<p><a class="button secondary" href="${kit.base}/projects/${project.id}/payouts/${v.id}/lines.csv" download>${esc(p.download_lines)}</a></p></section>`;
    return kit.page(req, reply, { title: p.payout_title(v.period), body, nav: 'payouts', project });
  });

  app.get('/projects/:project_id/payouts/:payout_id/lines.csv', async (req, reply) => {
    const project = await kit.project(req);
    const { payout, lines } = await payoutStatement(ctx, who(req, project), (req.params as { payout_id: string }).payout_id);
    return csv(reply, `payout-${payout.period}-${payout.id}.csv`, statementCsv(lines, timeZoneOf(project.settings)));
  });
};

/** POST Settings > Payouts: checked, saved and audited; a refusal shows the settings with the reason and changes nothing. */
export async function savePayouts(kit: Kit, req: FastifyRequest, project: ProjectRow): Promise<string | undefined> {
  const minimumText = field(req.body, 'minimum').trim() || '0';
  try {
    const minimum = parseEuros(minimumText);
    if (minimum === undefined) throw invalid('minimum', 'minimum must be an amount in euros such as 25 or 25.50');
    await savePayoutSettings(kit.ctx, kit.actor(req), project.id, {
      iban: field(req.body, 'iban'),
      name: field(req.body, 'name'),
      every: field(req.body, 'every'),
      minimum,
      time_zone: timeZoneOf(project.settings),
    });
    return undefined;
  } catch (err) {
    if (!(err instanceof DomainError) || statusOf(err) >= 500) throw err;
    return `${err.type}: ${err.message}`;
  }
}
