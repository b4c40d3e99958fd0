import type { FastifyInstance } from 'fastify';
import { CHART_DAYS, homeStats } from '../../services/portal/actions.ts';
import type { Kit } from './kit.ts';
import { barChart, esc, money } from './view.ts';

/** Home: today's and this week's volume and count, the success rate, payments per day. */
export const homeRoutes = (kit: Kit) => async (app: FastifyInstance) => {
  app.get('/projects/:project_id/', async (req, reply) => {
    const project = await kit.project(req);
    const { t, locale } = req.portal;
    const s = await homeStats(kit.ctx, project);
    const volume = (rows: typeof s.today) =>
      rows.filter((r) => r.completed).length
        ? rows
            .filter((r) => r.completed)
            .map((r) => `<p class="stat">${esc(money(r.amount, r.currency, locale))}</p>`)
            .join('')
        : `<p class="stat">${esc(money(0, 'EUR', locale))}</p>`;
    const count = (rows: typeof s.today) => rows.reduce((n, r) => n + r.completed, 0);
    const total = s.days.reduce((n, d) => n + d.n, 0);
    const max = Math.max(0, ...s.days.map((d) => d.n));
    const rate = s.successRate === undefined ? '—' : `${(s.successRate * 100).toFixed(1)} %`;
    const body = `<h1>${esc(t.home_title)}: ${esc(project.name)}</h1>
<div class="grid">
<section class="panel" aria-labelledby="today"><h2 id="today">${esc(t.today)}</h2>
<p class="muted">${esc(t.volume)}</p>${volume(s.today)}<p class="muted">${esc(t.payments)}: <strong data-today-count>${count(s.today)}</strong></p></section>
<section class="panel" aria-labelledby="week"><h2 id="week">${esc(t.this_week)}</h2>
<p class="muted">${esc(t.volume)}</p>${volume(s.week)}<p class="muted">${esc(t.payments)}: <strong data-week-count>${count(s.week)}</strong></p></section>
<section class="panel" aria-labelledby="rate"><h2 id="rate">${esc(t.success_rate)}</h2>
<p class="stat" data-success-rate>${esc(rate)}</p><p class="muted">${esc(t.success_hint)}</p></section>
</div>
<section class="panel chart" aria-labelledby="chart-heading"><h2 id="chart-heading">${esc(t.chart_title(CHART_DAYS))}</h2>
${barChart(s.days, t.chart_title(CHART_DAYS), t.chart_desc(total, max))}
</section>`;
    return kit.page(req, reply, { title: t.home_title, body, nav: 'home', project });
  });
};
