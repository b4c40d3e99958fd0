import type { Locale } from '../pay/i18n.ts';
import type { MoneyState } from '../../domain/money-state.ts';

/** The portal's words for money states, decline reasons and the money view, in English and Dutch. */

const en = {
  state: {
    open: 'Open',
    processing: 'Processing',
    authorized: 'Authorized',
    partially_captured: 'Partially captured',
    captured: 'Captured',
    partially_refunded: 'Partially refunded',
    refunded: 'Refunded',
    charged_back: 'Charged back',
    voided: 'Voided',
    declined: 'Declined',
    expired: 'Expired',
    cancelled: 'Cancelled',
    failed: 'Failed',
  } satisfies Record<MoneyState, string>,
  reason: {
    declined: 'the bank said no',
    insufficient_funds: 'not enough money on the card',
    expired_card: 'the card has expired',
    incorrect_cvc: 'wrong security code (CVC)',
    authentication_failed: '3-D Secure authentication failed',
    processing_error: 'an error at the bank',
    voided: 'voided',
  } as Record<string, string>,
  money: 'Money',
  net: 'Net',
  authorized: 'Authorized',
  captured: 'Captured',
  voided: 'Voided',
  refunded: 'Refunded',
  charged_back: 'Charged back',
  reserved: 'Still reserved',
  card: 'Card',
  movements: 'Captures, voids, refunds and chargebacks',
  no_movements: 'No capture, void, refund or chargeback.',
  totals_hint: 'Payments made in this period: captured less refunded and charged back, each payment counted once.',
  capture_all: (amount: string) => `Capture ${amount}`,
  void_upto: (amount: string) => `Void (up to ${amount})`,
  refund_upto: (amount: string) => `Refund (up to ${amount})`,
  insight: 'Insight',
  period: 'Period',
  last_days: (n: number) => `${n} days`,
  until: 'Up to and including',
  show: 'Show',
  totals: 'Totals per currency',
  day: 'Day',
  chart_title: (currency: string, from: string, to: string) => `Net volume per day in ${currency}, ${from} to ${to}`,
  by_method: 'Payments by method and brand',
  succeeded_n: 'Succeeded',
  success_hint: 'Payments whose money was authorized, of all that ended this week.',
};

export type MoneyStrings = typeof en;

const nl: MoneyStrings = {
  state: {
    open: 'Open',
    processing: 'In behandeling',
    authorized: 'Geautoriseerd',
    partially_captured: 'Deels afgeschreven',
    captured: 'Afgeschreven',
    partially_refunded: 'Deels terugbetaald',
    refunded: 'Terugbetaald',
    charged_back: 'Teruggeboekt',
    voided: 'Vrijgegeven',
    declined: 'Geweigerd',
    expired: 'Verlopen',
    cancelled: 'Geannuleerd',
    failed: 'Mislukt',
  },
  reason: {
    declined: 'de bank weigerde',
    insufficient_funds: 'onvoldoende saldo op de kaart',
    expired_card: 'de kaart is verlopen',
    incorrect_cvc: 'verkeerde beveiligingscode (CVC)',
    authentication_failed: '3-D Secure-verificatie mislukt',
    processing_error: 'een fout bij de bank',
    voided: 'vrijgegeven',
  },
  money: 'Geld',
  net: 'Netto',
  authorized: 'Geautoriseerd',
  captured: 'Afgeschreven',
  voided: 'Vrijgegeven',
  refunded: 'Terugbetaald',
  charged_back: 'Teruggeboekt',
  reserved: 'Nog gereserveerd',
  card: 'Kaart',
  movements: 'Afschrijvingen, vrijgaven, terugbetalingen en terugboekingen',
  no_movements: 'Geen afschrijving, vrijgave, terugbetaling of terugboeking.',
  totals_hint: 'Betalingen uit deze periode: afgeschreven min terugbetaald en teruggeboekt, elke betaling één keer geteld.',
  capture_all: (amount: string) => `${amount} afschrijven`,
  void_upto: (amount: string) => `Vrijgeven (tot ${amount})`,
  refund_upto: (amount: string) => `Terugbetalen (tot ${amount})`,
  insight: 'Inzicht',
  period: 'Periode',
  last_days: (n: number) => `${n} dagen`,
  until: 'Tot en met',
  show: 'Toon',
  totals: 'Totalen per valuta',
  day: 'Dag',
  chart_title: (currency: string, from: string, to: string) => `Netto volume per dag in ${currency}, ${from} tot ${to}`,
  by_method: 'Betalingen per methode en merk',
  succeeded_n: 'Gelukt',
  success_hint: 'Betalingen waarvan het geld is geautoriseerd, van alle die deze week afliepen.',
};

export const MONEY_STRINGS: Record<Locale, MoneyStrings> = { en, nl };

/** "Declined: not enough money on the card"; a reason we have no words for is shown as its code. */
export function stateText(w: MoneyStrings, state: MoneyState, reason?: string): string {
  const label = w.state[state];
  return reason && (state === 'declined' || state === 'failed') ? `${label}: ${w.reason[reason] ?? reason.replace(/_/g, ' ')}` : label;
}
