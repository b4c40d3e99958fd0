import { createHash } from 'node:crypto';
import { type PaymentMethod, CARD } from '../../domain/payment-methods.ts';
import type { CardField, Checkout, Outcome } from '../../services/payments/checkout.ts';
import type { Locale, Strings } from './i18n.ts';
import type { CspExtras } from './security.ts';
import type { TransactionRow } from '../../domain/entities.ts';

/**
 * HTML of the hosted pages. Server-rendered, one inline stylesheet allowed by its hash in the
 * CSP, system fonts only; the card form and the waiting page add one first-party script
 * (assets/checkout.js) that they do not need to work. Every value from outside goes through esc().
 */

export const esc = (v: unknown) =>
  String(v ?? '').replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

const CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f2f4f7;color:#101828;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:30rem;margin:0 auto;padding:.5rem .75rem}
.panel{background:#fff;border-radius:14px;box-shadow:0 1px 3px rgba(16,24,40,.12);padding:1rem;margin-bottom:.75rem}
.merchant{margin:0;font-size:.95rem;color:#475467}
.merchant strong{color:#101828}
.amount{margin:.1rem 0 0;font-size:clamp(1.35rem,7vw,2rem);font-weight:700;letter-spacing:-.01em;overflow-wrap:anywhere}
.amount .code{font-size:.9rem;font-weight:600;color:#475467;margin-left:.35rem}
.description{margin:0;color:#344054}
.ref{margin:0;font-size:.85rem;color:#475467}
.test{background:#fef0c7;color:#7a2e0e;border-radius:10px;padding:.5rem .8rem;margin-bottom:.75rem;font-size:.85rem;line-height:1.4}
.test p{margin:0}
h1{font-size:1.25rem;margin:0 0 .75rem}
.card-head{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;margin-bottom:.75rem}
.card-head h1{margin:0}
.brands{display:flex;gap:.3rem;list-style:none;margin:0;padding:0}
.brands>*{line-height:0}
.brands svg{display:block;width:2.6rem;height:1.65rem}
.brands[data-typed]>:not([data-current]){opacity:.35}
details>summary .brands{display:inline-flex;float:right;margin-top:-.1rem}
.with-mark{display:flex;align-items:center;gap:.6rem}
.with-mark .mark{flex:none}
h2{font-size:1.05rem;margin:0 0 .75rem}
.methods{list-style:none;margin:0;padding:0}
.methods>li+li{margin-top:.75rem}
details>summary{cursor:pointer;font-weight:600;padding:.85rem 1rem;border:1px solid #667085;border-radius:10px;list-style-position:inside}
details[open]>summary{margin-bottom:1rem}
.field{margin-bottom:.85rem}
.row{display:grid;grid-template-columns:1fr 1fr;column-gap:.75rem}
.row>.field{min-width:0;display:grid;grid-row:span 4;grid-template-rows:subgrid;align-content:start;row-gap:0}
label{display:block;font-weight:600;margin-bottom:.3rem}
.hint{display:block;font-weight:400;font-size:.85rem;color:#475467}
.field>.hint{margin:.25rem 0 0}
input[type=text],select{display:block;width:100%;font:inherit;font-size:1.05rem;padding:.6rem .8rem;border:1px solid #667085;border-radius:10px;background:#fff;color:#101828}
input[aria-invalid=true]{border-color:#b42318;border-width:2px}
:focus-visible,summary:focus-visible,a:focus-visible{outline:3px solid #1849a9;outline-offset:2px}
input:focus{outline:3px solid #1849a9;outline-offset:1px}
.field-error{color:#b42318;font-size:.9rem;margin:.3rem 0 0}
.alert{border:2px solid #b42318;background:#fef3f2;color:#7a271a;border-radius:10px;padding:.75rem 1rem;margin-bottom:1rem}
.alert p{margin:0}
.alert ul{margin:.4rem 0 0;padding-left:1.2rem}
.alert a{color:#7a271a}
button,.button{display:block;width:100%;font:inherit;font-size:1.1rem;font-weight:700;text-align:center;text-decoration:none;padding:.85rem 1rem;border:0;border-radius:10px;background:#1849a9;color:#fff;cursor:pointer}
button:hover,.button:hover{background:#133a87}
.secondary{background:#fff;color:#1849a9;border:2px solid #1849a9;margin-top:.75rem}
.secondary:hover{background:#eff4ff}
.wallet{background:#000;color:#fff;border-radius:999px}
.wallet:hover{background:#344054}
button[disabled]{background:#475467;cursor:progress}
fieldset{border:0;margin:0 0 1rem;padding:0;min-width:0}
legend{font-weight:600;margin-bottom:.3rem;padding:0}
.choice{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.35rem 0}
.choice input{margin-top:.3rem}
.note{font-size:.85rem;color:#475467;margin:.75rem 0 0;text-align:center}
.status{text-align:center}
.status .icon{display:inline-flex;align-items:center;justify-content:center;width:3.5rem;height:3.5rem;border-radius:50%;font-size:1.8rem;font-weight:700;color:#fff;margin-bottom:.5rem}
.paid .icon{background:#067647}.failed .icon{background:#b42318}.pending .icon,.open .icon{background:#1849a9}.cancelled .icon,.expired .icon{background:#475467}
.status p{margin:.25rem 0}
.reason{font-weight:600}
.vh{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.details{margin:0 0 .75rem}
.details>div{display:flex;flex-wrap:wrap;align-items:center;gap:.15rem .75rem;padding:.5rem 0;border-bottom:1px solid #eaecf0}
.details dt{flex:0 0 100%;font-size:.85rem;color:#475467}
.details dd{margin:0;flex:1 1 auto;min-width:0;display:flex;align-items:center;justify-content:space-between;gap:.5rem}
.details code{font-size:1.05rem;overflow-wrap:anywhere;user-select:all}
.copy{display:inline-block;width:auto;flex:none;font-size:.85rem;padding:.3rem .7rem;margin:0;background:#fff;color:#1849a9;border:1px solid #1849a9;border-radius:8px}
.copy:hover{background:#eff4ff}
.copy[hidden]{display:none}
footer{text-align:center;font-size:.8rem;color:#475467;padding:.5rem 0 1.5rem}
@media (min-width:40rem){main{padding:3rem 1rem 1rem}.panel{padding:1.25rem;margin-bottom:1rem}}
`.trim();

/** The CSP source that allows exactly our stylesheet. */
export const STYLE_HASH = `sha256-${createHash('sha256').update(CSS).digest('base64')}`;

/** What every page of an order shows at the top. */
export interface Summary {
  merchantName: string;
  amount: string;
  currency: string;
  description?: string | null;
  reference?: string | null;
  testMode: boolean;
}

export interface Page {
  locale: Locale;
  t: Strings;
  title: string;
  body: string;
  /** the first-party script of the page (assets/checkout.js), if it has one */
  script?: string;
}

export function layout(p: Page): string {
  return `<!doctype html>
<html lang="${p.locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${esc(p.title)}</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<main>
${p.body}
</main>
<footer>Tender</footer>
${p.script ? `<script src="${esc(p.script)}" defer></script>\n` : ''}</body>
</html>`;
}

/** `hint`: the test-card hint, on pages where the customer can still pay. */
export function summaryBlock(s: Summary, t: Strings, hint = true): string {
  return `<section class="panel" aria-labelledby="pay-to">
<p class="merchant" id="pay-to">${esc(t.pay_to)} <strong>${esc(s.merchantName)}</strong></p>
<p class="amount" data-amount><span class="vh">${esc(t.amount)}: </span>${esc(s.amount)}<span class="code">${esc(s.currency)}</span></p>
${s.description ? `<p class="description">${esc(s.description)}</p>` : ''}
${s.reference ? `<p class="ref">${esc(t.order_ref)}: ${esc(s.reference)}</p>` : ''}
</section>
${s.testMode ? `<div class="test" role="note"><p><strong>${esc(t.test_mode)}</strong></p>${hint ? `<p>${esc(t.test_hint)}</p>` : ''}</div>` : ''}`;
}

// ---- card form ----------------------------------------------------------------------

export interface CardFormModel {
  action: string;
  csrf: string;
  /** formatted amount for the button */
  amount: string;
  keep?: { name: string; expiry: string };
  errors?: Partial<Record<CardField, string>>;
  /** a problem that is not about one field (vault refused the card, expired form) */
  general?: string;
}

const FIELD_ORDER: CardField[] = ['pan', 'expiry', 'cvc', 'name'];

function field(f: CardField, label: string, t: Strings, m: CardFormModel, input: string, hint?: string): string {
  const err = m.errors?.[f];
  const first = err && FIELD_ORDER.find((x) => m.errors?.[x]) === f;
  const describedBy = [hint ? `${f}-hint` : '', err ? `${f}-error` : ''].filter(Boolean).join(' ');
  const attrs = `id="${f}" name="${f}"${describedBy ? ` aria-describedby="${describedBy}"` : ''}${err ? ' aria-invalid="true"' : ''}${first ? ' autofocus' : ''}`;
  return `<div class="field">
<label for="${f}">${esc(label)}</label>
${input.replace('<input ', `<input ${attrs} `)}
${hint ? `<span class="hint" id="${f}-hint">${esc(hint)}</span>\n` : ''}${err ? `<p class="field-error" id="${f}-error">${esc(t.field_error[err] ?? err)}</p>` : ''}
</div>`;
}

export function cardForm(m: CardFormModel, t: Strings): string {
  const errs = FIELD_ORDER.filter((f) => m.errors?.[f]);
  const labels: Record<CardField, string> = { pan: t.card_number, expiry: t.expiry, cvc: t.cvc, name: t.cardholder_name };
  const alert = errs.length
    ? `<div class="alert" role="alert"><p>${esc(t.errors_intro)}</p><ul>${errs
        .map((f) => `<li><a href="#${f}">${esc(labels[f])}: ${esc(t.field_error[m.errors![f]!] ?? '')}</a></li>`)
        .join('')}</ul></div>`
    : m.general
      ? `<div class="alert" role="alert"><p>${esc(m.general)}</p></div>`
      : '';
  // PAN and CVC are never written back into the page; name and expiry are.
  // what the script says while the customer types: the same messages as the server's
  const messages = { ...t.field_error, busy: t.paying, cvc_hint: t.cvc_hint, cvc_hint_amex: t.cvc_hint_amex };
  return `${alert}<form method="post" action="${esc(m.action)}" novalidate class="card-form" data-card-form data-messages="${esc(JSON.stringify(messages))}">
<input type="hidden" name="csrf" value="${esc(m.csrf)}">
${field('pan', t.card_number, t, m, `<input type="text" inputmode="numeric" autocomplete="cc-number" maxlength="23" spellcheck="false" autocorrect="off" required>`).replace(/\n<\/div>$/, `\n<p class="vh" id="pan-brand" aria-live="polite"></p>\n</div>`)}
<div class="row">
${field('expiry', t.expiry, t, m, `<input type="text" inputmode="numeric" autocomplete="cc-exp" maxlength="9" placeholder="${esc(t.expiry_hint)}" value="${esc(m.keep?.expiry)}" required>`, t.expiry_hint)}
${field('cvc', t.cvc, t, m, `<input type="text" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required>`, t.cvc_hint)}
</div>
${field('name', t.cardholder_name, t, m, `<input type="text" autocomplete="cc-name" autocapitalize="words" spellcheck="false" maxlength="120" value="${esc(m.keep?.name)}" required>`)}
<button type="submit" data-label="${esc(t.pay_button(m.amount))}">${esc(t.pay_button(m.amount))}</button>
<p class="note">${esc(t.secure_note)}</p>
</form>`;
}

// ---- card brand marks ---------------------------------------------------------------

/**
 * Our own marks of the brands the form takes: a coloured card with the brand's name, no logo of
 * the schemes. The page's script marks the brand of the number being typed (data-current).
 */
const MARKS: [brand: string, name: string, bg: string, fg: string, text: string, size: number][] = [
  ['visa', 'Visa', '#1a1f71', '#fff', 'VISA', 13],
  ['mastercard', 'Mastercard', '#fff', '#101828', 'mastercard', 7.5],
  ['amex', 'American Express', '#016fd0', '#fff', 'AMEX', 12],
  ['maestro', 'Maestro', '#fff', '#101828', 'maestro', 10],
];

function brandMarks(t: Strings, inSummary = false): string {
  // a <summary> holds phrasing content only: there the marks are spans, not a list
  const [list, item] = inSummary ? ['span', 'span'] : ['ul', 'li'];
  return `<${list} class="brands"${inSummary ? '' : ` aria-label="${esc(t.cards_accepted)}"`}>${MARKS.map(
    ([brand, name, bg, fg, text, size]) =>
      `<${item} data-brand="${brand}"><svg viewBox="0 0 52 33" role="img" aria-label="${esc(name)}" xmlns="http://www.w3.org/2000/svg"><rect x=".5" y=".5" width="51" height="32" rx="4" fill="${bg}" stroke="#98a2b3"/><text x="26" y="21" text-anchor="middle" font-family="system-ui,sans-serif" font-weight="700" font-size="${size}" fill="${fg}">${text}</text></svg></${item}>`,
  ).join('')}</${list}>`;
}

// ---- wallet buttons: the hook for the wallet engineer ---------------------------------

/** What a wallet button renderer gets for one order page or transaction page. */
export interface WalletSlot {
  checkout: Checkout;
  method: PaymentMethod;
  /** the wallet transaction, on its own payment_url page */
  transaction?: TransactionRow;
  locale: Locale;
  t: Strings;
  /** a CSRF token for a form of this page that acts on `action` (and the transaction) */
  csrf(action: string, transactionId?: string): string;
}

export interface WalletButton {
  method: PaymentMethod;
  /** HTML of the button(s); '' when the wallet cannot be offered for this order */
  render(slot: WalletSlot): string;
  /** CSP sources the device button needs (its script, the wallet's API); not the sandbox sheet's */
  csp?: CspExtras;
}

/** The rendered wallet buttons of a page, with the CSP sources they need; the pages render no wallet themselves. */
export function renderWallets(
  walletButtons: WalletButton[],
  slot: Omit<WalletSlot, 'method'>,
  methods: PaymentMethod[],
): { html: Partial<Record<PaymentMethod, string>>; csp: CspExtras } {
  const html: Partial<Record<PaymentMethod, string>> = {};
  const csp: CspExtras = {};
  for (const w of walletButtons) {
    if (!methods.includes(w.method)) continue;
    const out = w.render({ ...slot, method: w.method });
    if (!out) continue;
    html[w.method] = (html[w.method] ?? '') + out;
    // Test projects show the sandbox sheet's plain form: no script, so none of the device wallet's sources.
    if (slot.checkout.project.mode === 'test') continue;
    for (const [k, v] of Object.entries(w.csp ?? {}) as [keyof CspExtras, string[]][]) csp[k] = [...(csp[k] ?? []), ...v];
  }
  return { html, csp };
}

// ---- pages ----------------------------------------------------------------------------

/** The order page: the methods on offer, wallets as buttons and the card as a form to open. */
export function methodsBlock(
  t: Strings,
  methods: PaymentMethod[],
  wallets: Partial<Record<PaymentMethod, string>>,
  card?: { form: string; open: boolean },
): string {
  const items: string[] = [];
  for (const m of methods) {
    if (m === CARD && card) {
      items.push(`<li class="method" data-method="${CARD}"><details${card.open ? ' open' : ''}><summary><span>${esc(t.method[m] ?? m)}</span>${brandMarks(t, true)}</summary>
${card.form}
</details></li>`);
    } else if (wallets[m]) {
      items.push(`<li class="method" data-method="${esc(m)}">${wallets[m]}</li>`);
    }
  }
  if (!items.length) return `<section class="panel"><p>${esc(t.no_methods)}</p></section>`;
  return `<section class="panel" aria-labelledby="choose"><h1 id="choose">${esc(t.choose_method)}</h1>
<ul class="methods">
${items.join('\n')}
</ul></section>`;
}

export function cardPanel(t: Strings, form: string): string {
  return `<section class="panel" aria-labelledby="card-heading"><div class="card-head"><h1 id="card-heading">${esc(t.card_heading)}</h1>${brandMarks(t)}</div>
${form}
</section>`;
}

export interface StatusModel {
  outcome: Outcome;
  reason?: string;
  /** the merchant's page for this outcome */
  shopUrl?: string;
  /** where to pay, while the order is still open */
  payUrl?: string;
  /** where to try again after a failure (the payment link the order came from) */
  retryUrl?: string;
  /** where to continue 3-D Secure, while it waits for the customer */
  continueUrl?: string;
  /** while the bank answers: where the page's script asks for the outcome, and where to look again without it */
  poll?: { url: string; again: string };
  message?: string;
}

const ICON: Record<Outcome, string> = { paid: '✓', failed: '✕', pending: '…', open: '€', cancelled: '–', expired: '–' };

export function statusBlock(t: Strings, m: StatusModel): string {
  const s = t.status[m.outcome];
  const reason = m.reason ? (t.reason[m.reason] ?? m.reason) : undefined;
  // pending: the wait is on the customer (3-D Secure open) or on the bank, and the page says which
  const text = m.outcome === 'pending' ? (m.continueUrl ? t.waiting_customer : t.waiting_bank) : s.text;
  const poll = m.poll ? ` data-poll="${esc(m.poll.url)}"` : '';
  return `<section class="panel status ${m.outcome}" data-outcome="${m.outcome}"${poll} aria-live="polite">
<span class="icon" aria-hidden="true">${ICON[m.outcome]}</span>
<h1>${esc(s.title)}</h1>
${m.message ? `<p class="alert" role="alert">${esc(m.message)}</p>` : ''}
<p>${esc(text)}</p>
${m.outcome === 'failed' && reason ? `<p class="reason" data-reason="${esc(m.reason)}">${esc(t.reason_label)}: ${esc(reason)}</p>` : ''}
${m.outcome === 'failed' || m.outcome === 'cancelled' || m.outcome === 'expired' ? `<p class="retry">${esc(m.retryUrl ? t.retry_link_hint : t.retry_hint)}</p>` : ''}
${m.continueUrl ? `<p><a class="button" href="${esc(m.continueUrl)}">${esc(t.continue_auth)}</a></p>` : ''}
${m.poll ? `<p><a class="button secondary" href="${esc(m.poll.again)}">${esc(t.check_again)}</a></p>` : ''}
${m.payUrl ? `<p><a class="button" href="${esc(m.payUrl)}">${esc(t.pay_now)}</a></p>` : ''}
${m.retryUrl ? `<p><a class="button" href="${esc(m.retryUrl)}">${esc(t.try_again)}</a></p>` : ''}
${m.shopUrl ? `<p><a class="button secondary" href="${esc(m.shopUrl)}">${esc(t.back_to_shop)}</a></p>` : ''}
</section>`;
}

/** A page with one message; `more` is trusted HTML after it (a way forward or back). */
export function messagePage(locale: Locale, t: Strings, title: string, text: string, more = ''): string {
  return layout({ locale, t, title, body: `<section class="panel status"><h1>${esc(title)}</h1><p>${esc(text)}</p>${more}</section>` });
}
