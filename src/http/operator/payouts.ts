import type { Ctx } from '../../services/platform/context.ts';
import { payoutsOverview } from '../../services/payouts/overview.ts';
import { formatMinor } from '../../domain/currency.ts';
import { esc } from '../pay/render.ts';

/** The operator page's headers: nothing to load, nothing to run, nothing to frame. */
export const OPERATOR_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
};

const amount = (n: number, c: string) => `${esc(c)} ${esc(formatMinor(n, c))}`;

function table(caption: string, head: string[], rows: string[][], empty: string) {
  if (!rows.length) return `<p>${esc(empty)}</p>`;
  return `<table><caption>${esc(caption)}</caption><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n')}</tbody></table>`;
}

/**
 * GET /payouts on the operator's listener (METRICS_PORT, beside /metrics; docs/payouts.md): the
 * overview of `tender payouts overview`, read-only, across merchants. Plain HTML with no script
 * and no style of its own; every value escaped.
 */
export async function operatorPayoutsPage(ctx: Ctx): Promise<string> {
  const o = await payoutsOverview(ctx);
  const balances = table(
    'Balances per merchant, mode and currency',
    ['Merchant', 'Mode', 'Pending', 'Available', 'Reserved', 'Open disputes'],
    o.balances.map((b) => [
      `${esc(b.merchant)}<br><code>${esc(b.merchant_id)}</code>`,
      esc(b.mode),
      amount(b.pending, b.currency),
      amount(b.available, b.currency),
      amount(b.reserved, b.currency),
      String(b.open_disputes),
    ]),
    'No money has moved yet.',
  );
  const next = table(
    'The next payout of each schedule',
    ['Merchant', 'Schedule', 'Next', 'Live now', 'Test now', 'Held until'],
    o.next_payouts.map((n) => [
      `${esc(n.merchant)}<br><code>${esc(n.merchant_id)}</code>`,
      `${esc(n.every)} (${esc(n.time_zone)})${n.minimum ? `, minimum ${amount(n.minimum, 'EUR')}` : ''}`,
      esc(n.period ?? '—'),
      amount(n.live, 'EUR'),
      amount(n.test, 'EUR'),
      n.held_until ? `${esc(n.held_until)} (new IBAN)` : '—',
    ]),
    'No payout schedules.',
  );
  const returned = table(
    'Payouts returned or rejected',
    ['Merchant', 'Payout', 'Mode', 'Amount', 'State', 'Reason', 'Period'],
    o.returned.map((p) => [
      esc(p.merchant),
      `<code>${esc(p.id)}</code>`,
      esc(p.mode),
      amount(p.amount, p.currency),
      esc(p.state),
      esc(p.reason ?? ''),
      esc(p.period),
    ]),
    'None came back.',
  );
  const negative = table(
    'Negative available balances',
    ['Merchant', 'Mode', 'Available'],
    o.negative.map((b) => [`${esc(b.merchant)}<br><code>${esc(b.merchant_id)}</code>`, esc(b.mode), amount(b.available, b.currency)]),
    'No merchant owes Tender.',
  );
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex, nofollow"><title>Payouts · Tender operator</title></head>
<body><main>
<h1>Payouts across merchants</h1>
<p>Read-only, as <code>tender payouts overview</code> shows it. Amounts in the currency's units.</p>
<h2>Balances</h2>${balances}
<h2>Next payouts</h2>${next}
<h2>Returned and rejected</h2>${returned}
<h2>Negative balances</h2>${negative}
</main></body></html>`;
}
