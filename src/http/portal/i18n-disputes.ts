import type { Locale } from '../pay/i18n.ts';
import type { DisputeState, Stage } from '../../domain/disputes.ts';
import { EVIDENCE } from '../../domain/disputes.ts';

/** The portal's words for disputes, in English and Dutch. */

const MB = EVIDENCE.maxBytes / 1024 / 1024;

const en = {
  nav: 'Disputes',
  title: 'Disputes',
  one: 'Dispute',
  intro:
    "Chargebacks the cardholders' banks made on your payments. Answer each before its deadline: accept it, or defend it with a text and evidence that we send on to the acquirer.",
  none: 'No disputes.',
  created: 'Received',
  order: 'Order',
  reason: 'Reason code',
  amount: 'Amount',
  state: 'State',
  deadline: 'Answer by',
  open_it: 'Open',
  source: 'Source',
  source_acquirer: "From the acquirer's settlement file",
  source_test: 'Test chargeback',
  host_id: "Acquirer's dispute id",
  stages: 'Stages',
  stage: 'Stage',
  date: 'Date',
  states: { open: 'Open', accepted: 'Accepted', defended: 'Defended', won: 'Won', lost: 'Lost' } satisfies Record<DisputeState, string>,
  stage_names: {
    chargeback: 'Chargeback: the money was taken back',
    second_presentment: 'Second presentment: won back, credited again',
    pre_arbitration: 'Pre-arbitration: taken again',
  } satisfies Record<Stage, string>,
  accept_title: 'Accept the chargeback',
  accept_text: 'The money stays with the cardholder; nothing is sent to the acquirer.',
  accept: 'Accept',
  defend_title: 'Defend it',
  defend_label: 'Why the chargeback is wrong',
  defend_hint: 'For example the delivery, the customer’s messages, the terms they agreed to.',
  files_label: 'Evidence',
  files_hint: `PDF, PNG, JPEG or plain text; up to ${EVIDENCE.maxFiles} files of ${MB} MB each.`,
  defend: 'Send the defence',
  accepted_done: 'Accepted. The operator is told.',
  defended_done: 'Defence recorded. The operator sends it on to the acquirer.',
  owners_only: 'Only the owners answer disputes.',
  deadline_passed: 'The deadline to answer has passed: the acquirer decides without an answer.',
  defence: 'Your defence',
  evidence: 'Evidence',
  no_evidence: 'No files.',
  bytes: (n: number) => `${Math.max(1, Math.round(n / 1024))} KB`,
  too_large: `The files are too large: at most ${EVIDENCE.maxFiles} files of ${MB} MB each.`,
};

type DisputeStrings = typeof en;

const nl: DisputeStrings = {
  nav: 'Geschillen',
  title: 'Geschillen',
  one: 'Geschil',
  intro:
    'Terugboekingen die banken van kaarthouders op uw betalingen deden. Beantwoord elk vóór de termijn: accepteer hem, of voer verweer met een toelichting en bewijs dat wij naar de acquirer sturen.',
  none: 'Geen geschillen.',
  created: 'Ontvangen',
  order: 'Order',
  reason: 'Redencode',
  amount: 'Bedrag',
  state: 'Stand',
  deadline: 'Antwoorden vóór',
  open_it: 'Openen',
  source: 'Bron',
  source_acquirer: 'Uit het afrekenbestand van de acquirer',
  source_test: 'Testterugboeking',
  host_id: 'Id bij de acquirer',
  stages: 'Verloop',
  stage: 'Stap',
  date: 'Datum',
  states: { open: 'Open', accepted: 'Geaccepteerd', defended: 'Verweer gevoerd', won: 'Gewonnen', lost: 'Verloren' },
  stage_names: {
    chargeback: 'Terugboeking: het geld is teruggenomen',
    second_presentment: 'Tweede presentatie: teruggewonnen, weer bijgeschreven',
    pre_arbitration: 'Pre-arbitrage: opnieuw teruggenomen',
  },
  accept_title: 'Terugboeking accepteren',
  accept_text: 'Het geld blijft bij de kaarthouder; er gaat niets naar de acquirer.',
  accept: 'Accepteren',
  defend_title: 'Verweer voeren',
  defend_label: 'Waarom de terugboeking onterecht is',
  defend_hint: 'Bijvoorbeeld de levering, berichten van de klant, de voorwaarden die hij aanvaardde.',
  files_label: 'Bewijs',
  files_hint: `PDF, PNG, JPEG of platte tekst; tot ${EVIDENCE.maxFiles} bestanden van elk ${MB} MB.`,
  defend: 'Verweer versturen',
  accepted_done: 'Geaccepteerd. De beheerder is op de hoogte.',
  defended_done: 'Verweer vastgelegd. De beheerder stuurt het door naar de acquirer.',
  owners_only: 'Alleen eigenaren beantwoorden geschillen.',
  deadline_passed: 'De termijn om te antwoorden is verstreken: de acquirer beslist zonder antwoord.',
  defence: 'Uw verweer',
  evidence: 'Bewijs',
  no_evidence: 'Geen bestanden.',
  bytes: (n: number) => `${Math.max(1, Math.round(n / 1024))} kB`,
  too_large: `De bestanden zijn te groot: hooguit ${EVIDENCE.maxFiles} bestanden van elk ${MB} MB.`,
};

export const DISPUTE_STRINGS: Record<Locale, DisputeStrings> = { en, nl };
