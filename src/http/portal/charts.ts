import type { Locale } from '../pay/i18n.ts';
import type { DayVolume } from '../../domain/insight.ts';
import { esc, money, table } from './view.ts';

/**
 * Net volume per day of one currency as an SVG bar chart drawn here (no chart script), with
 * the same numbers as a table beneath it for screen readers and for print.
 */
export function volumeChart(
  id: string,
  currency: string,
  days: DayVolume[],
  locale: Locale,
  words: { title: string; day: string; payments: string; net: string },
): string {
  const w = 700;
  const h = 220;
  const pad = { l: 8, r: 8, t: 12, b: 34 };
  const max = Math.max(1, ...days.map((d) => d.net));
  const step = (w - pad.l - pad.r) / Math.max(1, days.length);
  const y = (n: number) => pad.t + (h - pad.t - pad.b) * (1 - Math.max(0, n) / max);
  const every = Math.ceil(days.length / 16); // at most 16 day labels, so they stay readable
  const bars = days
    .map((d, i) => {
      const x = pad.l + i * step + step * 0.15;
      const top = y(d.net);
      const label =
        i % every === 0
          ? `<text x="${(x + step * 0.35).toFixed(1)}" y="${h - pad.b + 14}" font-size="11" text-anchor="middle" fill="#344054">${esc(d.day.slice(8))}</text>`
          : '';
      return `<g><title>${esc(`${d.day}: ${money(d.net, currency, locale)}`)}</title><rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${(h - pad.b - top).toFixed(1)}" fill="#1849a9"/>${label}</g>`;
    })
    .join('');
  const axis = `<line x1="${pad.l}" y1="${h - pad.b}" x2="${w - pad.r}" y2="${h - pad.b}" stroke="#667085"/>`;
  const total = days.reduce((n, d) => n + d.net, 0);
  const desc = `${money(total, currency, locale)}; max ${money(max === 1 && !days.some((d) => d.net) ? 0 : max, currency, locale)}`;
  const rows = days.map((d) => [esc(d.day), String(d.payments), esc(money(d.net, currency, locale))]);
  return `<figure class="chart" data-chart="${esc(currency)}"><svg viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="${id}-title ${id}-desc" xmlns="http://www.w3.org/2000/svg"><title id="${id}-title">${esc(words.title)}</title><desc id="${id}-desc">${esc(desc)}</desc>${axis}${bars}</svg>
<div class="chart-numbers">${table(words.title, [words.day, words.payments, words.net], rows, { numeric: [1, 2] })}</div></figure>`;
}
