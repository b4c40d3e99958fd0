import type { Locale } from '../pay/i18n.ts';
import { formatMinor } from '../../domain/currency.ts';
import type { MoneySummary } from '../../domain/money-state.ts';
import type { PaymentMoney } from '../../services/portal/money.ts';
import { MONEY_STRINGS, stateText, type MoneyStrings } from './i18n-money.ts';
import { esc, money } from './view.ts';

/** The portal's money view of a payment: its state in words, its net amount and its figures. */

export const moneyWords = (locale: Locale): MoneyStrings => MONEY_STRINGS[locale];

/** The state as a badge a person reads ("Declined: not enough money on the card"). */
export const stateBadge = (w: MoneyStrings, m: MoneySummary) =>
  `<span class="badge m-${m.state}" data-money-state="${m.state}">${esc(stateText(w, m.state, m.reason))}</span>`;

/** The payment's figures for its facts list: state, net, and each amount that is not zero. */
export function moneyFacts(w: MoneyStrings, m: MoneySummary, currency: string, locale: Locale): [string, string][] {
  const amt = (n: number) => esc(money(n, currency, locale));
  const out: [string, string][] = [
    [w.money, stateBadge(w, m)],
    [w.net, `<strong data-net="${m.net}">${amt(m.net)}</strong>`],
  ];
  const parts: [string, number][] = [
    [w.authorized, m.authorized],
    [w.reserved, m.open],
    [w.captured, m.captured],
    [w.voided, m.voided],
    [w.refunded, m.refunded],
    [w.charged_back, m.charged_back],
  ];
  for (const [label, n] of parts) if (n) out.push([label, amt(n)]);
  return out;
}

/** "visa •••• 4242" from a transaction as the API shows it. */
export function cardText(x: {
  payment_method?: string;
  payment_method_brand?: string;
  payment_method_details?: { truncated_pan?: string };
}) {
  const pan = x.payment_method_details?.truncated_pan;
  const brand = x.payment_method_brand ?? '';
  return pan ? `${brand} •••• ${pan.slice(-4)}`.trim() : brand || (x.payment_method ?? '');
}

const CSV_HEAD = [
  'created',
  'order_id',
  'merchant_order_id',
  'description',
  'currency',
  'amount',
  'money_state',
  'reason',
  'authorized',
  'captured',
  'voided',
  'refunded',
  'charged_back',
  'net',
  'payment_method',
  'brand',
];

const cell = (v: string) => {
  // A cell a spreadsheet would run as a formula starts with a quote (OWASP CSV injection).
  const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** The portal's CSV: one line per payment, its money counted once (amounts in major units). */
export function moneyCsv(
  rows: { order: { id: string; merchant_order_id?: string; description?: string; amount: number }; p: PaymentMoney }[],
) {
  const lines = [CSV_HEAD.join(',')];
  for (const { order, p } of rows) {
    const m = p.money;
    const f = (n: number) => formatMinor(n, p.currency);
    lines.push(
      [
        new Date(p.created).toISOString(),
        order.id,
        order.merchant_order_id ?? '',
        order.description ?? '',
        p.currency,
        f(order.amount),
        m.state,
        m.reason ?? '',
        f(m.authorized),
        f(m.captured),
        f(m.voided),
        f(m.refunded),
        f(m.charged_back),
        f(m.net),
        p.payment_method ?? '',
        p.brand ?? '',
      ]
        .map(cell)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** What the portal reads of an order as the API shows it. */
export interface OrderView {
  id: string;
  status: string;
  currency: string;
  amount: number;
  created: string;
  merchant_order_id?: string;
  description?: string;
  related_order_id?: string;
  capture_of_order_id?: string;
  void_of_order_id?: string;
  refund_of_order_id?: string;
  chargeback_of_order_id?: string;
  reversal_of_order_id?: string;
  customer?: { first_name?: string; last_name?: string; email_address?: string };
  transactions?: TxnView[];
}
export interface TxnView {
  id: string;
  status: string;
  is_capturable?: boolean;
  payment_method?: string;
  payment_method_brand?: string;
  payment_method_details?: { truncated_pan?: string };
}
