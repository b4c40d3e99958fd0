import type { Locale } from '../pay/i18n.ts';

/** Texts of the portal's time zone setting, refunds list, payment methods list and chart axes, EN and NL. */
const en = {
  time_zone: 'Time zone',
  time_zone_intro: 'The portal shows every time in this zone, with its name (CET, GMT-5).',
  time_zone_hint: 'An IANA name, for example Europe/Amsterdam or America/New_York',
  time_zone_save: 'Save time zone',
  payments: 'Payments',
  refunds: 'Refunds',
  refunds_title: 'Refunds',
  refund: 'Refund',
  of_payment: 'Of payment',
  no_refunds: 'No refunds match.',
  refunds_count: (n: number, more: boolean) => `${more ? 'More than ' : ''}${n} refund${n === 1 ? '' : 's'}`,
  any_currency: 'any currency',
  on: 'On',
  off: 'Off',
  axis_amount: 'Net volume',
  axis_day: 'Day',
};

export type ViewStrings = typeof en;

const nl: ViewStrings = {
  time_zone: 'Tijdzone',
  time_zone_intro: 'Het portaal toont elke tijd in deze zone, met de naam ervan (CET, GMT-5).',
  time_zone_hint: 'Een IANA-naam, bijvoorbeeld Europe/Amsterdam of America/New_York',
  time_zone_save: 'Tijdzone opslaan',
  payments: 'Betalingen',
  refunds: 'Terugbetalingen',
  refunds_title: 'Terugbetalingen',
  refund: 'Terugbetaling',
  of_payment: 'Van betaling',
  no_refunds: 'Geen terugbetalingen gevonden.',
  refunds_count: (n, more) => `${more ? 'Meer dan ' : ''}${n} terugbetaling${n === 1 ? '' : 'en'}`,
  any_currency: 'elke valuta',
  on: 'Aan',
  off: 'Uit',
  axis_amount: 'Nettovolume',
  axis_day: 'Dag',
};

export const VIEW_STRINGS: Record<Locale, ViewStrings> = { en, nl };
