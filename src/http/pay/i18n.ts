import { currencyExponent, formatMinor } from '../../domain/currency.ts';
import { CORE_METHODS, CORE_NAMES } from '../../domain/payment-methods.ts';

const coreNames = (lang: 'en' | 'nl'): Record<string, string> => Object.fromEntries(CORE_METHODS.map((m) => [m, CORE_NAMES[m][lang]]));

/** Languages of the hosted pages. The first is the fallback. */
export const LOCALES = ['en', 'nl'] as const;
export type Locale = (typeof LOCALES)[number];

/** BCP 47 tags used for number formatting per language. */
const REGION: Record<Locale, string> = { en: 'en-GB', nl: 'nl-NL' };

const en = {
  title: 'Payment',
  pay_to: 'Pay to',
  amount: 'Amount',
  test_mode: 'Test mode: no real money is moved.',
  test_hint: 'Test card 4111 1111 1111 1111: any name, any future date, any 3-digit code.',
  choose_method: 'How would you like to pay?',
  no_methods: 'No payment method is available for this order. Please contact the shop.',
  method: coreNames('en'),
  card_heading: 'Pay by card',
  cards_accepted: 'Cards accepted',
  cardholder_name: 'Name on card',
  card_number: 'Card number',
  expiry: 'Expiry date',
  expiry_hint: 'MM/YY',
  cvc: 'Security code',
  cvc_hint: '3 digits on the back',
  cvc_hint_amex: '4 digits on the front of the card',
  paying: 'Paying…',
  pay_button: (amount: string) => `Pay ${amount}`,
  secure_note: 'Your card details are sent encrypted and are never shown again.',
  errors_intro: 'Please correct the fields marked below.',
  field_error: {
    name_required: 'Enter the name as it is on the card.',
    name_too_long: 'The name can be at most 120 characters.',
    pan_required: 'Enter the card number.',
    pan_format: 'A card number has 12 to 19 digits.',
    pan_luhn: 'This card number is not valid. Check it for typing errors.',
    pan_brand: 'This type of card is not accepted.',
    expiry_required: 'Enter the expiry date.',
    expiry_format: 'Enter the expiry date as MM/YY, for example 08/29.',
    expiry_past: 'This card has expired. Use a card with an expiry date in the future.',
    pan_amex_only: 'This payment takes American Express cards only.',
    cvc_required: 'Enter the security code.',
    cvc_format: 'The security code is 3 digits.',
    cvc_format_amex: 'The security code of an American Express card is 4 digits.',
  } as Record<string, string>,
  form_expired: 'This form has expired or was not sent from this page. Please reload the page and try again.',
  card_refused: 'The card could not be used. Please check the details or try another card.',
  payment_started: 'A payment for this order has already been started.',
  too_many_attempts: 'Too many payment attempts failed. Please try again later.',
  status: {
    paid: { title: 'Payment received', text: 'Thank you. Your payment was successful.' },
    failed: { title: 'Payment failed', text: 'The payment did not go through. No money was taken.' },
    pending: { title: 'Payment in progress', text: 'We are waiting for the bank to confirm your payment.' },
    cancelled: { title: 'Payment cancelled', text: 'This payment was cancelled. No money was taken.' },
    expired: { title: 'Payment expired', text: 'The time to pay this order has passed. No money was taken.' },
    open: { title: 'Not paid yet', text: 'This order has not been paid yet.' },
  } as Record<string, { title: string; text: string }>,
  reason_label: 'Reason',
  reason: {
    declined: 'The bank declined the payment.',
    insufficient_funds: 'The card has insufficient funds.',
    expired_card: 'The card has expired.',
    incorrect_cvc: 'The security code was incorrect.',
    authentication_failed: 'The card holder could not be verified (3-D Secure).',
    processing_error: 'A technical error occurred while processing the payment.',
  } as Record<string, string>,
  retry_hint: 'To try again, go back to the shop and pay once more, with another card if needed. Questions? Contact the shop.',
  retry_link_hint: 'You can try again, with another card or another payment method.',
  try_again: 'Try again',
  pay_now: 'Pay this order',
  continue_auth: 'Continue verification',
  waiting_customer: 'Your bank asks you to confirm this payment. Continue the verification to finish paying.',
  waiting_bank: 'We are waiting for the bank to confirm your payment. This usually takes a few seconds.',
  check_again: 'Check again',
  back_to_shop: 'Back to the shop',
  order_ref: 'Order reference',
  not_found_title: 'Page not found',
  not_found_text: 'This payment page does not exist. Check the link you received from the shop.',
  error_title: 'Something went wrong',
  error_text: 'The payment page could not be shown. Please try again in a moment.',
  forbidden_title: 'Request refused',
  three_ds: {
    title: '3-D Secure verification',
    heading: 'Confirm your payment',
    merchant: 'Merchant',
    card: 'Card',
    test_hint: 'Simulated 3-D Secure of a test card: code 1234 passes, any other code fails.',
    code: 'Verification code',
    verify: 'Verify',
    cancel: 'Cancel',
    expired_title: 'This form has expired',
    expired_text: 'Start the verification again.',
    restart: 'Start the verification again',
  },
};

export type Strings = typeof en;

const nl: Strings = {
  title: 'Betaling',
  pay_to: 'Betalen aan',
  amount: 'Bedrag',
  test_mode: 'Testmodus: er wordt geen echt geld overgemaakt.',
  test_hint: 'Testkaart 4111 1111 1111 1111: elke naam, elke datum in de toekomst, elke code van 3 cijfers.',
  choose_method: 'Hoe wil je betalen?',
  no_methods: 'Er is geen betaalmethode beschikbaar voor deze bestelling. Neem contact op met de winkel.',
  method: coreNames('nl'),
  card_heading: 'Betalen met kaart',
  cards_accepted: 'Geaccepteerde kaarten',
  cardholder_name: 'Naam op de kaart',
  card_number: 'Kaartnummer',
  expiry: 'Vervaldatum',
  expiry_hint: 'MM/JJ',
  cvc: 'CVC-code',
  cvc_hint: '3 cijfers op de achterkant',
  cvc_hint_amex: '4 cijfers op de voorkant van de kaart',
  paying: 'Bezig met betalen…',
  pay_button: (amount: string) => `Betaal ${amount}`,
  secure_note: 'Je kaartgegevens worden versleuteld verstuurd en nooit opnieuw getoond.',
  errors_intro: 'Verbeter de velden die hieronder zijn gemarkeerd.',
  field_error: {
    name_required: 'Vul de naam in zoals die op de kaart staat.',
    name_too_long: 'De naam mag hoogstens 120 tekens lang zijn.',
    pan_required: 'Vul het kaartnummer in.',
    pan_format: 'Een kaartnummer heeft 12 tot 19 cijfers.',
    pan_luhn: 'Dit kaartnummer is niet geldig. Controleer het op typefouten.',
    pan_brand: 'Dit type kaart wordt niet geaccepteerd.',
    expiry_required: 'Vul de vervaldatum in.',
    expiry_format: 'Vul de vervaldatum in als MM/JJ, bijvoorbeeld 08/29.',
    expiry_past: 'Deze kaart is verlopen. Gebruik een kaart met een vervaldatum in de toekomst.',
    pan_amex_only: 'Deze betaling accepteert alleen American Express-kaarten.',
    cvc_required: 'Vul de CVC-code in.',
    cvc_format: 'De CVC-code bestaat uit 3 cijfers.',
    cvc_format_amex: 'De CVC-code van een American Express-kaart bestaat uit 4 cijfers.',
  },
  form_expired: 'Dit formulier is verlopen of niet vanaf deze pagina verstuurd. Laad de pagina opnieuw en probeer het nog eens.',
  card_refused: 'De kaart kon niet worden gebruikt. Controleer de gegevens of probeer een andere kaart.',
  payment_started: 'Er is al een betaling voor deze bestelling gestart.',
  too_many_attempts: 'Te veel betaalpogingen zijn mislukt. Probeer het later opnieuw.',
  status: {
    paid: { title: 'Betaling ontvangen', text: 'Bedankt. Je betaling is geslaagd.' },
    failed: { title: 'Betaling mislukt', text: 'De betaling is niet gelukt. Er is geen geld afgeschreven.' },
    pending: { title: 'Betaling wordt verwerkt', text: 'We wachten tot de bank je betaling bevestigt.' },
    cancelled: { title: 'Betaling geannuleerd', text: 'Deze betaling is geannuleerd. Er is geen geld afgeschreven.' },
    expired: { title: 'Betaling verlopen', text: 'De tijd om deze bestelling te betalen is voorbij. Er is geen geld afgeschreven.' },
    open: { title: 'Nog niet betaald', text: 'Deze bestelling is nog niet betaald.' },
  },
  reason_label: 'Reden',
  reason: {
    declined: 'De bank heeft de betaling geweigerd.',
    insufficient_funds: 'Er staat onvoldoende saldo op de kaart.',
    expired_card: 'De kaart is verlopen.',
    incorrect_cvc: 'De CVC-code was onjuist.',
    authentication_failed: 'De kaarthouder kon niet worden geverifieerd (3-D Secure).',
    processing_error: 'Er is een technische fout opgetreden bij het verwerken van de betaling.',
  },
  retry_hint:
    'Wil je het opnieuw proberen? Ga terug naar de winkel en betaal opnieuw, eventueel met een andere kaart. Vragen? Neem contact op met de winkel.',
  retry_link_hint: 'Je kunt het opnieuw proberen, met een andere kaart of een andere betaalmethode.',
  try_again: 'Opnieuw proberen',
  pay_now: 'Deze bestelling betalen',
  continue_auth: 'Verificatie voortzetten',
  waiting_customer: 'Je bank vraagt je deze betaling te bevestigen. Zet de verificatie voort om de betaling af te ronden.',
  waiting_bank: 'We wachten tot de bank je betaling bevestigt. Dit duurt meestal een paar seconden.',
  check_again: 'Opnieuw controleren',
  back_to_shop: 'Terug naar de winkel',
  order_ref: 'Bestelnummer',
  not_found_title: 'Pagina niet gevonden',
  not_found_text: 'Deze betaalpagina bestaat niet. Controleer de link die je van de winkel hebt gekregen.',
  error_title: 'Er ging iets mis',
  error_text: 'De betaalpagina kon niet worden getoond. Probeer het over een ogenblik opnieuw.',
  forbidden_title: 'Verzoek geweigerd',
  three_ds: {
    title: '3-D Secure-verificatie',
    heading: 'Bevestig je betaling',
    merchant: 'Winkel',
    card: 'Kaart',
    test_hint: 'Gesimuleerde 3-D Secure van een testkaart: code 1234 slaagt, elke andere code mislukt.',
    code: 'Verificatiecode',
    verify: 'Bevestigen',
    cancel: 'Annuleren',
    expired_title: 'Dit formulier is verlopen',
    expired_text: 'Begin opnieuw met de verificatie.',
    restart: 'Opnieuw beginnen met de verificatie',
  },
};

export const STRINGS: Record<Locale, Strings> = { en, nl };

/** `nl-NL`, `nl_BE`, `NL` -> nl; anything we do not speak -> undefined. */
function localeOf(tag: string | undefined | null): Locale | undefined {
  const lang = tag?.trim().split(/[-_]/)[0]?.toLowerCase();
  return (LOCALES as readonly string[]).includes(lang ?? '') ? (lang as Locale) : undefined;
}

/** The customer's language from `Accept-Language`, honouring q-values. */
export function fromAcceptLanguage(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
      return { tag, q: q ? Number(q[1]) : 1, i };
    })
    .filter((r) => r.tag && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranked) {
    const l = localeOf(r.tag);
    if (l) return l;
  }
  return undefined;
}

/** The order's `customer.locale` wins, then the browser's Accept-Language, then English. */
export const pickLocale = (customerLocale: string | undefined, acceptLanguage: string | undefined): Locale =>
  localeOf(customerLocale) ?? fromAcceptLanguage(acceptLanguage) ?? LOCALES[0];

/**
 * Minor units to a localised money string with the currency's own exponent:
 * (1995, EUR, nl) -> "€ 19,95"; (1995, JPY, en) -> "¥1,995". The decimal string keeps
 * amounts beyond 2^53 / 100 exact.
 */
export function formatAmount(minor: number, currency: string, locale: Locale): string {
  const digits = currencyExponent(currency) ?? 2;
  const nf = new Intl.NumberFormat(REGION[locale], {
    style: 'currency',
    currency,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  return nf.format(formatMinor(minor, currency) as unknown as number);
}
