import type { FastifyInstance } from 'fastify';
import { nowFor } from '../../services/platform/context.ts';
import { insightBetween, MAX_PERIOD_DAYS } from '../../services/portal/money.ts';
import type { Insight } from '../../domain/insight.ts';
import { field, type Kit } from './kit.ts';
import { esc, money, table } from './view.ts';
import { volumeChart } from './charts.ts';
import { moneyWords } from './money-view.ts';
import { balancesPanel, payoutAccountNotice } from './payouts.ts';

/**
 * Home: today's and this week's money, and a chosen period's net volume by day per currency,
 * payments by method and brand, and the share that succeeded. Each payment's money is counted
 * once, on the payment (domain/money-state.ts), from the payments created in the period.
 */

const DAY = 24 * 3600 * 1000;
const PERIODS = [7, 14, 30, 90];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export const homeRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  app.get('/projects/:project_id/', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const w = moneyWords(locale);
    const now = nowFor(project);
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const week = new Date(today.getTime() - ((today.getUTCDay() + 6) % 7) * DAY);
    const asked = Number(field(req.query, 'days'));
    const days = PERIODS.includes(asked) ? asked : 14;
    const untilText = field(req.query, 'until');
    const until = DATE.test(untilText) && !Number.isNaN(Date.parse(untilText)) ? new Date(`${untilText}T00:00:00Z`) : today;
    const from = new Date(until.getTime() - (days - 1) * DAY);
    const [d, wk, period] = await Promise.all([
      insightBetween(kit.ctx, project, today, 1),
      insightBetween(kit.ctx, project, week, Math.round((today.getTime() - week.getTime()) / DAY) + 1),
      insightBetween(kit.ctx, project, from, Math.min(days, MAX_PERIOD_DAYS)),
    ]);
    const volume = (s: Insight) =>
      s.totals.some((r) => r.payments)
        ? s.totals
            .filter((r) => r.payments)
            .map((r) => `<p class="stat">${esc(money(r.net, r.currency, locale))}</p>`)
            .join('')
        : `<p class="stat">${esc(money(0, 'EUR', locale))}</p>`;
    const count = (s: Insight) => s.totals.reduce((n, r) => n + r.payments, 0);
    const share = (s: Insight) => (s.ended ? `${((s.succeeded / s.ended) * 100).toFixed(1)} %` : '—');
    const periodForm = `<form method="get" action="${kit.base}/projects/${project.id}/" class="filters">
<div class="field"><label for="days">${esc(w.period)}</label><select id="days" name="days">${PERIODS.map((n) => `<option value="${n}"${n === days ? ' selected' : ''}>${esc(w.last_days(n))}</option>`).join('')}</select></div>
<div class="field"><label for="until">${esc(w.until)}</label><input type="date" id="until" name="until" value="${until.toISOString().slice(0, 10)}"></div>
<div class="field"><button type="submit">${esc(w.show)}</button></div></form>`;
    const charts = period.byDay.length
      ? period.byDay
          .map((c, i) =>
            volumeChart(`chart-${i}`, c.currency, c.days, locale, {
              title: w.chart_title(c.currency, c.days[0].day, c.days.at(-1)!.day),
              day: w.day,
              payments: t.payments,
              net: w.net,
            }),
          )
          .join('')
      : `<p>${esc(t.no_payments)}</p>`;
    const totals = table(
      w.totals,
      [t.currency, t.payments, w.captured, w.refunded, w.charged_back, w.net],
      period.totals.map((r) => [
        esc(r.currency),
        String(r.payments),
        ...[r.captured, r.refunded, r.charged_back, r.net].map((n) => esc(money(n, r.currency, locale))),
      ]),
      { numeric: [1, 2, 3, 4, 5] },
    );
    const methods = table(
      w.by_method,
      [t.method, t.brand, t.payments, w.succeeded_n, t.success_rate],
      period.byMethod.map((r) => [
        esc(r.method),
        esc(r.brand),
        String(r.payments),
        String(r.succeeded),
        `${((r.succeeded / r.payments) * 100).toFixed(1)} %`,
      ]),
      { numeric: [2, 3, 4] },
    );
    const body = `<h1>${esc(t.home_title)}: ${esc(project.name)}</h1>
${await payoutAccountNotice(kit, req, project, locale)}
<div class="grid">
<section class="panel" aria-labelledby="today"><h2 id="today">${esc(t.today)}</h2>
<p class="muted">${esc(w.net)}</p>${volume(d)}<p class="muted">${esc(t.payments)}: <strong data-today-count>${count(d)}</strong></p></section>
<section class="panel" aria-labelledby="week"><h2 id="week">${esc(t.this_week)}</h2>
<p class="muted">${esc(w.net)}</p>${volume(wk)}<p class="muted">${esc(t.payments)}: <strong data-week-count>${count(wk)}</strong></p></section>
<section class="panel" aria-labelledby="rate"><h2 id="rate">${esc(t.success_rate)}</h2>
<p class="stat" data-success-rate>${esc(share(wk))}</p><p class="muted">${esc(w.success_hint)}</p></section>
</div>
<section class="panel" aria-labelledby="period-h"><h2 id="period-h">${esc(w.insight)}</h2>${periodForm}
<p class="muted">${esc(w.totals_hint)}</p>${totals}
<p>${esc(t.success_rate)}: <strong data-period-success-rate>${esc(share(period))}</strong></p>
${charts}
<h3>${esc(w.by_method)}</h3>${period.byMethod.length ? methods : `<p>${esc(t.no_payments)}</p>`}</section>
${await balancesPanel(kit, req, locale)}`;
    return kit.page(req, reply, { title: t.home_title, body, nav: 'home', project });
  });
};
