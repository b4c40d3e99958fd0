import type { Locale } from '../pay/i18n.ts';
import type { DayVolume } from '../../domain/insight.ts';
import { esc, money, table } from './view.ts';

/**
 * Net volume per day of one currency as an SVG bar chart drawn here (no chart script): a y axis
 * of amounts (0, half and a round top) with grid lines, an x axis of dates, and the same numbers
 * as a table beneath it for screen readers and for print. The drawing is an image (role="img")
 * named by its title and described by its totals, so its labels are not read twice.
 */

const DATE_LOCALE: Record<Locale, string> = { en: 'en-GB', nl: 'nl-NL' };

/** The smallest 1, 2, 2.5 or 5 × 10^k at or above n: a top for the y axis that reads round. */
function roundUp(n: number): number {
  const p = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 2.5, 5, 10].map((f) => f * p).find((v) => v >= n)!;
}

export function volumeChart(
  id: string,
  currency: string,
  days: DayVolume[],
  locale: Locale,
  words: { title: string; day: string; payments: string; net: string },
): string {
  // narrow enough that its 11-unit labels stay readable on a phone; capped in width on a desktop (portal.css)
  const w = 400;
  const h = 220;
  const pad = { l: 62, r: 8, t: 10, b: 26 };
  const peak = Math.max(0, ...days.map((d) => d.net));
  // a top in whole major units of the currency at least (no €0.01 steps)
  const top = roundUp(Math.max(peak, 100));
  const step = (w - pad.l - pad.r) / Math.max(1, days.length);
  const y = (n: number) => pad.t + (h - pad.t - pad.b) * (1 - Math.max(0, n) / top);
  const dayLabel = new Intl.DateTimeFormat(DATE_LOCALE[locale], { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const every = Math.ceil(days.length / 6); // at most 6 dates, so they do not overlap
  const text = (x: number, yy: number, anchor: string, s: string) =>
    `<text x="${x.toFixed(1)}" y="${yy.toFixed(1)}" font-size="11" text-anchor="${anchor}" fill="#344054">${esc(s)}</text>`;
  const ticks = [0, top / 2, top].map(
    (v) =>
      `<line x1="${pad.l}" y1="${y(v).toFixed(1)}" x2="${w - pad.r}" y2="${y(v).toFixed(1)}" stroke="${v ? '#eaecf0' : '#667085'}"/>${text(pad.l - 6, y(v) + 4, 'end', money(v, currency, locale))}`,
  );
  const bars = days
    .map((d, i) => {
      const x = pad.l + i * step + step * 0.15;
      const barTop = y(d.net);
      return `<g><title>${esc(`${d.day}: ${money(d.net, currency, locale)}`)}</title><rect x="${x.toFixed(1)}" y="${barTop.toFixed(1)}" width="${(step * 0.7).toFixed(1)}" height="${(h - pad.b - barTop).toFixed(1)}" fill="#1849a9"/></g>`;
    })
    .join('');
  const dates = days
    .map((d, i) =>
      i % every === 0 ? text(pad.l + (i + 0.5) * step, h - pad.b + 15, 'middle', dayLabel.format(new Date(`${d.day}T00:00:00Z`))) : '',
    )
    .join('');
  const total = days.reduce((n, d) => n + d.net, 0);
  const desc = `${money(total, currency, locale)}; max ${money(peak, currency, locale)}`;
  const rows = days.map((d) => [esc(d.day), String(d.payments), esc(money(d.net, currency, locale))]);
  return `<figure class="chart" data-chart="${esc(currency)}"><svg viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="${id}-title ${id}-desc" xmlns="http://www.w3.org/2000/svg"><title id="${id}-title">${esc(words.title)}</title><desc id="${id}-desc">${esc(desc)}</desc><g data-axis="y">${ticks.join('')}</g>${bars}<g data-axis="x">${dates}</g></svg>
<div class="chart-numbers">${table(words.title, [words.day, words.payments, words.net], rows, { numeric: [1, 2] })}</div></figure>`;
}
