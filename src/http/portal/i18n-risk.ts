import type { Locale } from '../pay/i18n.ts';
import type { ListKind, ListName } from '../../domain/risk/lists.ts';

/** The portal's words for the Risk page (blocklists and allowlists), in English and Dutch. */

const en = {
  nav: 'Risk',
  title: 'Risk',
  to_rules: 'Rules you write: refuse, challenge or flag payments that match',
  intro:
    'A payment on a blocklist is refused before it reaches the card network. One on an allowlist passes the velocity limits and this project’s blocklists. The platform’s own lists, kept by the operator, hold for every merchant.',
  add_title: 'Add to a list',
  list: 'List',
  lists: { block: 'Blocklist', allow: 'Allowlist' } satisfies Record<ListName, string>,
  kind: 'Kind',
  kinds: {
    card: 'Card',
    bin: 'BIN range',
    country: 'Issuing country',
    network: 'Address or network',
    email: 'Email address',
    email_domain: 'Email domain',
  } satisfies Record<ListKind, string>,
  value: 'Value',
  value_hint:
    'A card number (kept only as a fingerprint), a BIN such as 411111 or 411100-411199, a country code such as NL, an address or network such as 203.0.113.0/24, an email, or a domain such as example.com.',
  add: 'Add',
  added: 'Added to the list.',
  already: 'That entry was already on the list.',
  removed: 'Removed from the list.',
  remove: 'Remove',
  entries: 'Entries',
  none: 'No entries yet: only the velocity limits screen this project’s payments.',
  created: 'Added',
  by: 'By',
  actions: 'Actions',
  read_only: 'Only the owners of this account change the lists.',
  country_note: 'The issuing country comes from the BIN table of this Tender; by default it knows only the test cards (docs/risk.md).',
  expires: 'Expires',
  expiry_choices: {
    '': 'Never',
    P1D: 'After a day',
    P7D: 'After a week',
    P30D: 'After 30 days',
    P90D: 'After 90 days',
    P1Y: 'After a year',
  },
  never: 'Never',
  expired: 'Expired',
  note: 'Note',
  note_hint: 'Optional: why it is listed, for your team (at most 200 characters).',
};

export type RiskStrings = typeof en;

const nl: RiskStrings = {
  nav: 'Risico',
  title: 'Risico',
  to_rules: 'Regels die u schrijft: betalingen die passen weigeren, laten bevestigen of markeren',
  intro:
    'Een betaling op een blokkeerlijst wordt geweigerd voordat ze het kaartnetwerk bereikt. Een betaling op een toestaanlijst passeert de snelheidslimieten en de blokkeerlijsten van dit project. De eigen lijsten van het platform, beheerd door de beheerder, gelden voor elke handelaar.',
  add_title: 'Aan een lijst toevoegen',
  list: 'Lijst',
  lists: { block: 'Blokkeerlijst', allow: 'Toestaanlijst' },
  kind: 'Soort',
  kinds: {
    card: 'Kaart',
    bin: 'BIN-reeks',
    country: 'Land van uitgifte',
    network: 'Adres of netwerk',
    email: 'E-mailadres',
    email_domain: 'E-maildomein',
  },
  value: 'Waarde',
  value_hint:
    'Een kaartnummer (alleen als vingerafdruk bewaard), een BIN zoals 411111 of 411100-411199, een landcode zoals NL, een adres of netwerk zoals 203.0.113.0/24, een e-mailadres, of een domein zoals example.com.',
  add: 'Toevoegen',
  added: 'Aan de lijst toegevoegd.',
  already: 'Dat stond al op de lijst.',
  removed: 'Van de lijst verwijderd.',
  remove: 'Verwijderen',
  entries: 'Vermeldingen',
  none: 'Nog niets op de lijsten: alleen de snelheidslimieten beoordelen de betalingen van dit project.',
  created: 'Toegevoegd',
  by: 'Door',
  actions: 'Acties',
  read_only: 'Alleen de eigenaren van dit account wijzigen de lijsten.',
  country_note: 'Het land van uitgifte komt uit de BIN-tabel van deze Tender; standaard kent die alleen de testkaarten (docs/risk.md).',
  expires: 'Verloopt',
  expiry_choices: { '': 'Nooit', P1D: 'Na een dag', P7D: 'Na een week', P30D: 'Na 30 dagen', P90D: 'Na 90 dagen', P1Y: 'Na een jaar' },
  never: 'Nooit',
  expired: 'Verlopen',
  note: 'Notitie',
  note_hint: 'Optioneel: waarom het op de lijst staat, voor uw team (hoogstens 200 tekens).',
};

export const RISK_STRINGS: Record<Locale, RiskStrings> = { en, nl };

/** An audit row of a list change, as the audit log says it. */
export function describeListChange(locale: Locale, action: string, d: Record<string, unknown>): string {
  const s = RISK_STRINGS[locale];
  const list = s.lists[d.list as ListName] ?? String(d.list ?? '');
  const kind = s.kinds[d.kind as ListKind] ?? String(d.kind ?? '');
  const what = `${kind} ${String(d.value ?? '')}`;
  // an entry's expiry (UTC) and note, as it was added
  const at = typeof d.expires_at === 'string' ? `${d.expires_at.slice(0, 16).replace('T', ' ')} UTC` : undefined;
  const note = typeof d.note === 'string' ? `: ${d.note}` : '';
  if (locale === 'nl') {
    const tail = `${at && action === 'risk_list_added' ? ` (tot ${at})` : ''}${note}`;
    return action === 'risk_list_added'
      ? `${what} op de ${list.toLowerCase()} gezet${tail}`
      : `${what} van de ${list.toLowerCase()} gehaald${tail}`;
  }
  const said = `${kind.toLowerCase()} ${String(d.value ?? '')}`;
  const tail = `${at && action === 'risk_list_added' ? ` (until ${at})` : ''}${note}`;
  return action === 'risk_list_added'
    ? `Added ${said} to the ${list.toLowerCase()}${tail}`
    : `Removed ${said} from the ${list.toLowerCase()}${tail}`;
}
