import { readFileSync } from 'node:fs';
import qrcode from 'qrcode-generator';
import { esc } from '../pay/render.ts';
import { formatAmount, type Locale } from '../pay/i18n.ts';
import type { PortalStrings } from './i18n.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import { timeZoneOf, type ProjectSettings } from '../../domain/project.ts';
import type { Role } from '../../domain/roles.ts';
import { DISPUTE_STRINGS } from './i18n-disputes.ts';
import { RISK_STRINGS } from './i18n-risk.ts';
import { TEAM_STRINGS } from './i18n-team.ts';
import { PAYOUT_STRINGS } from './i18n-payouts.ts';
import { isoSpan, spanParts } from '../../domain/duration.ts';
import { nowFor } from '../../services/platform/context.ts';

/**
 * HTML of the merchant portal: server-rendered pages, one stylesheet and one small script
 * served from the portal itself (CSP 'self', nothing inline, nothing third-party).
 */

export { esc };

const asset = (name: string) => readFileSync(new URL(`./assets/${name}`, import.meta.url));
export const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'portal.css': { type: 'text/css; charset=utf-8', body: asset('portal.css') },
  'portal.js': { type: 'text/javascript; charset=utf-8', body: asset('portal.js') },
};

export const PORTAL_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export type NavItem = 'home' | 'orders' | 'links' | 'payouts' | 'disputes' | 'test' | 'settings' | 'webhooks' | 'risk' | 'team' | 'audit';

export interface Chrome {
  locale: Locale;
  t: PortalStrings;
  /** path prefix of the portal ('/portal') */
  base: string;
  /** the path of this page, for the language links */
  path: string;
  csrf?: string;
  merchant?: string;
  email?: string;
  /** the signed-in user's role: the team and the audit log are the owners' */
  role?: Role;
  project?: ProjectRow;
  projects?: ProjectRow[];
  nav?: NavItem;
}

/** What the test banner says of a project clock moved ahead with the test clock: by how much, and the date new orders get. */
function clockAhead({ project, t }: Chrome): string {
  const ahead = Number(project?.clock_offset_ms ?? 0);
  if (!project || ahead < 1000) return '';
  const now = nowFor(project).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  return ` <span data-clock-ahead="${ahead}">${esc(t.clock_ahead(t.span(spanParts(ahead)), isoSpan(ahead), now))}</span>`;
}

export function layout(c: Chrome, title: string, body: string): string {
  const { t, base, project } = c;
  const signedIn = Boolean(c.projects);
  const p = project ? `${base}/projects/${project.id}` : '';
  const navItems: [NavItem, string, string][] = project
    ? [
        ['home', t.nav.home, `${p}/`],
        ['orders', t.nav.orders, `${p}/orders/`],
        ['links', t.nav.links, `${p}/links/`],
        ['payouts', PAYOUT_STRINGS[c.locale].nav, `${p}/payouts/`],
        ['disputes', DISPUTE_STRINGS[c.locale].nav, `${p}/disputes/`],
        ...(project.mode === 'test' ? ([['test', t.nav.test, `${p}/test/`]] as [NavItem, string, string][]) : []),
        ['webhooks', TEAM_STRINGS[c.locale].webhooks_nav, `${p}/webhooks/`],
        ['risk', RISK_STRINGS[c.locale].nav, `${p}/risk/`],
        ['settings', t.nav.settings, `${p}/settings/`],
        ...(c.role === 'owner'
          ? ([
              ['team', TEAM_STRINGS[c.locale].team_title, `${p}/team/`],
              ['audit', TEAM_STRINGS[c.locale].audit_title, `${p}/audit/`],
            ] as [NavItem, string, string][])
          : []),
      ]
    : [];
  const langs: [Locale, string][] = [
    ['en', 'English'],
    ['nl', 'Nederlands'],
  ];
  return `<!doctype html>
<html lang="${c.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${esc(title)} · Tender</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/assets/portal.css">
<script src="${base}/assets/portal.js" defer></script>
</head>
<body>
<a class="skip" href="#main">${esc(t.skip)}</a>
<header>
${project?.mode === 'test' ? `<div class="testbar" data-test-mode>${esc(t.test_mode)} <span class="testbar-more">— ${esc(t.test_mode_text)}</span>${clockAhead(c)}</div>\n` : ''}<div class="top">
<p class="brand">Tender${c.merchant ? ` <span>${esc(c.merchant)}</span>` : ` <span>${esc(t.portal)}</span>`}</p>
${
  signedIn && c.projects!.length
    ? `<form method="get" action="${base}/switch" class="switch"><label for="project-switch">${esc(t.project)}</label>
<select id="project-switch" name="project">${c
        .projects!.map(
          (x) =>
            `<option value="${x.id}"${x.id === project?.id ? ' selected' : ''}>${esc(x.name)} (${esc(x.mode === 'test' ? t.test_mode : t.live_mode)})</option>`,
        )
        .join('')}</select>
<button type="submit" class="secondary">${esc(t.switch)}</button></form>`
    : ''
}
${signedIn ? `<form method="post" action="${base}/sign-out"><input type="hidden" name="csrf" value="${esc(c.csrf)}"><span class="vh">${esc(c.email)}</span><button type="submit" class="secondary">${esc(t.sign_out)}</button></form>` : ''}
</div>
</header>
${
  navItems.length
    ? `<nav class="main" aria-label="${esc(t.nav.label)}"><ul>${navItems
        .map(([k, label, href]) => `<li><a href="${href}"${k === c.nav ? ' aria-current="page"' : ''}>${esc(label)}</a></li>`)
        .join('')}</ul></nav>`
    : ''
}
<main id="main"${signedIn ? '' : ' class="narrow"'}>
${body}
</main>
<footer><ul aria-label="${esc(t.language)}">${langs
    .map(
      ([l, name]) => `<li><a href="${esc(c.path)}?lang=${l}" lang="${l}"${l === c.locale ? ' aria-current="true"' : ''}>${name}</a></li>`,
    )
    .join('')}</ul></footer>
</body>
</html>`;
}

// ---- small pieces --------------------------------------------------------------------------

export const money = (minor: number, currency: string, locale: Locale) => formatAmount(minor, currency, locale);

/**
 * A moment as people read it, language-neutral, in the project's time zone (Settings) and naming
 * it: 2026-01-31 15:05 CET. Formatters are kept per zone: a list page formats hundreds of times.
 */
export function when(d: Date | string | null | undefined, project: { settings: Partial<ProjectSettings> | null }): string {
  if (!d) return '';
  const zone = timeZoneOf(project.settings);
  let f = FORMATS.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    });
    FORMATS.set(zone, f);
  }
  const part = Object.fromEntries(f.formatToParts(new Date(d)).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute} ${part.timeZoneName}`;
}
const FORMATS = new Map<string, Intl.DateTimeFormat>();

/** An id in full: short prefixes of time-ordered ids are alike (a capture and its refund made in one second). */
export const idCode = (id: string) => `<code class="id">${esc(id)}</code>`;

export const badge = (status: string, label = status) => `<span class="badge ${esc(status)}">${esc(label)}</span>`;

export const alert = (text: string) => `<div class="alert" role="alert">${esc(text)}</div>`;
export const notice = (text: string) => `<div class="notice" role="status">${esc(text)}</div>`;

export const csrfField = (token: string) => `<input type="hidden" name="csrf" value="${esc(token)}">`;

/** A secret or URL with a copy button (the button appears when the script runs). */
export function copyable(id: string, value: string, t: PortalStrings, label: string): string {
  return `<div class="secret"><code id="${id}">${esc(value)}</code><button type="button" class="secondary" data-copy="${id}" data-copied="${esc(t.copied)}" aria-label="${esc(`${t.copy}: ${label}`)}" hidden>${esc(t.copy)}</button></div>`;
}

/** A table; cells are HTML already. `stack` tables turn into cards on a phone. */
export function table(
  caption: string,
  head: string[],
  rows: string[][],
  opts: { numeric?: number[]; captionHidden?: boolean } = {},
): string {
  const num = new Set(opts.numeric ?? []);
  return `<table class="stack"><caption class="${opts.captionHidden === false ? '' : 'vh'}">${esc(caption)}</caption><thead><tr>${head
    .map((h, i) => `<th scope="col"${num.has(i) ? ' class="num"' : ''}>${esc(h)}</th>`)
    .join('')}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c, i) => `<td data-label="${esc(head[i])}"${num.has(i) ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

// ---- drawings ------------------------------------------------------------------------------

/** A QR code of `text` as SVG, drawn on the server. */
export function qrSvg(text: string, label: string): string {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  return qr.createSvgTag({ cellSize: 4, margin: 16, scalable: true, title: { text: label, id: 'qr-title' } } as never);
}
