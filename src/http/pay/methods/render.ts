import {
  IDEAL_ISSUERS,
  isSandboxMethod,
  markDataUri,
  methodInfo,
  type SandboxMethod,
  CARD,
  PAY_NOW,
} from '../../../domain/payment-methods.ts';
import type { TransactionRow } from '../../../domain/entities.ts';
import { esc } from '../render.ts';
import type { Locale } from '../i18n.ts';

/**
 * The sandbox pages of the methods of domain/payment-methods.ts, EN and NL: a method's entry in
 * the hosted page's list (its mark and name), and the page of one transaction: the provider's
 * step (iDEAL: choose a bank), then the outcome a test customer picks; a bank transfer's or a
 * slip's details.
 */

const TEXT = {
  en: {
    sandbox: 'Sandbox of',
    sandbox_note: 'This page stands in for the provider. Choose what happens to the payment.',
    choose_bank: 'Choose your bank',
    outcome: 'Outcome of the payment',
    outcomes: { paid: 'Paid', cancelled: 'Cancelled', expired: 'Expired', failed: 'Failed', open: 'Still open (processing)' },
    authorize: 'Authorized',
    transfer_heading: 'Transfer the amount',
    transfer_text: 'Transfer exactly this amount with this reference. The order is paid when the money arrives.',
    slip_heading: 'Your payment slip',
    slip_text: 'Show this number at the till of a participating shop and pay the amount in cash.',
    amount: 'Amount',
    iban: 'IBAN',
    bic: 'BIC',
    holder: 'Account holder',
    reference: 'Reference',
    slip: 'Slip number',
    test_tools: 'Test mode: complete or expire it from the test tools (portal or POST /v1/test/orders/{id}/bank-transfer/).',
    live: 'This payment method is available in test projects only.',
    try_again: 'The previous attempt did not go through. You can try again with another card or another payment method.',
    pay_with: (m: string) => `Pay with ${m}`,
    copy: 'Copy',
    copied: 'Copied',
  },
  nl: {
    sandbox: 'Sandbox van',
    sandbox_note: 'Deze pagina staat voor de aanbieder. Kies wat er met de betaling gebeurt.',
    choose_bank: 'Kies je bank',
    outcome: 'Uitkomst van de betaling',
    outcomes: { paid: 'Betaald', cancelled: 'Geannuleerd', expired: 'Verlopen', failed: 'Mislukt', open: 'Nog open (in behandeling)' },
    authorize: 'Geautoriseerd',
    transfer_heading: 'Maak het bedrag over',
    transfer_text: 'Maak precies dit bedrag over met dit kenmerk. De bestelling is betaald zodra het geld binnen is.',
    slip_heading: 'Je betaalbewijs',
    slip_text: 'Laat dit nummer zien bij de kassa van een deelnemende winkel en betaal het bedrag contant.',
    amount: 'Bedrag',
    iban: 'IBAN',
    bic: 'BIC',
    holder: 'Rekeninghouder',
    reference: 'Betalingskenmerk',
    slip: 'Bonnummer',
    test_tools: 'Testmodus: voltooi of laat verlopen via de testhulpmiddelen (portaal of POST /v1/test/orders/{id}/bank-transfer/).',
    live: 'Deze betaalmethode is alleen beschikbaar in testprojecten.',
    try_again: 'De vorige poging is niet gelukt. Je kunt het opnieuw proberen met een andere kaart of een andere betaalmethode.',
    pay_with: (m: string) => `Betalen met ${m}`,
    copy: 'Kopieer',
    copied: 'Gekopieerd',
  },
} as const;

export const methodText = (locale: Locale) => TEXT[locale];
const methodName = (m: SandboxMethod, locale: Locale) => methodInfo(m).name[locale];

const mark = (m: SandboxMethod) => `<img class="mark" src="${markDataUri(m)}" alt="" width="48" height="32">`;

/** The list entry of each method on the order's page: a button of a form that starts that attempt. */
export function methodButtons(
  methods: readonly string[],
  locale: Locale,
  form: { action: string; csrf: string; transactionId?: string },
  /** the card's name, on a pay-now page: there the card too is a choice that becomes the transaction's */
  cardLabel?: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const button = (m: string, inner: string) =>
    `<form method="post" action="${esc(form.action)}"><input type="hidden" name="csrf" value="${esc(form.csrf)}">
${form.transactionId ? `<input type="hidden" name="transaction_id" value="${esc(form.transactionId)}">` : ''}<button type="submit" class="secondary method-button" name="payment_method" value="${esc(m)}">${inner}</button></form>`;
  for (const m of methods) {
    if (m === CARD && cardLabel) out[m] = button(m, esc(cardLabel));
    if (!isSandboxMethod(m) || m === PAY_NOW) continue;
    out[m] = button(
      m,
      `${mark(m)} <span>${esc(methodName(m, locale))}</span><span class="vh"> (${esc(TEXT[locale].pay_with(methodName(m, locale)))})</span>`,
    );
  }
  return out;
}

/** The page of one transaction of such a method (test projects). */
export function methodPanel(
  txn: TransactionRow,
  locale: Locale,
  /** amount: as shown; amountPlain: as a banking app takes it (19.95, 19,95) */
  p: { action: string; csrf: string; amount: string; amountPlain: string; live: boolean },
): string {
  const m = txn.payment_method as SandboxMethod;
  const x = TEXT[locale];
  const info = methodInfo(m);
  const head = `<h1 id="method-heading" class="with-mark">${mark(m)} <span>${esc(x.sandbox)} ${esc(methodName(m, locale))}</span></h1>`;
  if (p.live) return `<section class="panel" aria-labelledby="method-heading">${head}<p>${esc(x.live)}</p></section>`;
  const d = txn.details ?? {};
  // each detail selectable as text; its copy button is hidden until the page's script can make it work
  let n = 0;
  const row = (k: string, v: unknown, copied = v) => {
    const id = `detail-${++n}`;
    return `<div><dt>${esc(k)}</dt><dd><code id="${id}" data-copy-value="${esc(copied)}">${esc(v)}</code><button type="button" class="copy" data-copy="${id}" data-copied="${esc(x.copied)}" aria-label="${esc(`${x.copy} ${k}`)}" hidden>${esc(x.copy)}</button></dd></div>`;
  };
  if (info.kind === 'transfer' || info.kind === 'voucher') {
    const transfer = info.kind === 'transfer';
    return `<section class="panel" aria-labelledby="method-heading">${head}
<h2>${esc(transfer ? x.transfer_heading : x.slip_heading)}</h2>
<p>${esc(transfer ? x.transfer_text : x.slip_text)}</p>
<dl class="details" data-payment-details>${row(x.amount, p.amount, p.amountPlain)}${
      transfer
        ? row(x.iban, d.creditor_iban) +
          row(x.bic, d.creditor_bic) +
          row(x.holder, d.creditor_account_holder_name) +
          row(x.reference, d.reference)
        : row(x.slip, d.slip_reference) + row(x.reference, d.reference)
    }</dl>
<p class="note">${esc(x.test_tools)}</p></section>`;
  }
  const bank =
    info.issuer && !d.issuer_id
      ? `<div class="field"><label for="issuer">${esc(x.choose_bank)}</label><select id="issuer" name="issuer_id" required>
${IDEAL_ISSUERS.map((i) => `<option value="${esc(i.id)}">${esc(i.name)}</option>`).join('\n')}</select></div>`
      : '';
  const buttons = (['paid', 'cancelled', 'expired', 'failed', 'open'] as const)
    .map(
      (o, i) =>
        `<button type="submit" name="outcome" value="${o}"${i ? ' class="secondary"' : ''}>${esc(o === 'paid' && info.kind === 'bnpl' ? x.authorize : x.outcomes[o])}</button>`,
    )
    .join('\n');
  return `<section class="panel" aria-labelledby="method-heading">${head}
<p>${esc(x.sandbox_note)}</p>
<form method="post" action="${esc(p.action)}" data-method-form><input type="hidden" name="csrf" value="${esc(p.csrf)}">
${bank}<fieldset><legend>${esc(x.outcome)}</legend>
${buttons}
</fieldset></form></section>`;
}
