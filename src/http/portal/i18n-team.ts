import type { Locale } from '../pay/i18n.ts';
import type { Role } from '../../domain/roles.ts';
import { describeListChange } from './i18n-risk.ts';

/** The portal's words for the team, roles, invitations and the audit log, in English and Dutch. */

type Detail = Record<string, unknown>;
const s = (v: unknown) => (v === undefined || v === null ? '' : String(v));

const en = {
  team_title: 'Team',
  audit_title: 'Audit log',
  webhooks_nav: 'Webhooks',
  webhook_log: 'Webhook log',
  deliveries: 'Deliveries',
  failed_first: 'Failed deliveries first, then the newest.',
  test_event: 'test event',
  no_order: '—',
  no_url: 'No webhook URL set (Settings).',
  send_test: 'Send a test event',
  test_sent: 'Test event sent: see its delivery below.',
  resend: 'Resend',
  resent: 'Queued again: the new delivery is listed.',
  role: 'Role',
  roles: {
    owner: 'Owner: everything, including the team',
    developer: 'Developer: API keys, webhooks, test clock',
    support: 'Support: captures, voids, refunds, payment links',
    viewer: 'Viewer: reads only',
  } satisfies Record<Role, string>,
  role_short: { owner: 'Owner', developer: 'Developer', support: 'Support', viewer: 'Viewer' } satisfies Record<Role, string>,
  two_factor: 'Two-step sign-in',
  on: 'On',
  off: 'Off',
  invite: 'Invite',
  invite_title: 'Invite a user',
  invite_intro: 'The link works once, for 7 days. Pass it on yourself: no email is sent.',
  invite_link: 'Invitation link',
  invite_shown_once: 'Copy this link now: it is shown only once.',
  pending: 'Open invitations',
  expires: 'Expires',
  change_role: 'Change role',
  remove: 'Remove',
  require_totp: 'Require two-step sign-in for everyone',
  require_totp_on: 'Everyone must use two-step sign-in. Users without it are asked to set it up first.',
  require_totp_off: 'Two-step sign-in is up to each user.',
  require: 'Require',
  make_optional: 'Make optional',
  totp_required_notice: 'The owners of this account require two-step sign-in. Set it up below to continue.',
  accept_title: 'Join the team',
  accept_intro: (email: string, role: string) => `You are invited as ${email} (${role}). Choose a password of 12 to 256 characters.`,
  accept: 'Create my account',
  invite_gone: 'This invitation was used already, has expired, or does not exist.',
  no_permission: 'Your role does not allow this.',
  entry: (action: string, d: Detail): string => {
    switch (action) {
      case 'sign_in':
        return d.second_factor ? 'Signed in with a second factor' : 'Signed in';
      case 'sign_out':
        return 'Signed out';
      case 'key_created':
        return `Created API key ${s(d.hint)}`;
      case 'key_revoked':
        return 'Revoked an API key';
      case 'capture':
      case 'void':
      case 'refund':
      case 'cancel':
      case 'chargeback':
      case 'settle':
      case 'resend':
        return `${{ capture: 'Captured', void: 'Voided', refund: 'Refunded', cancel: 'Cancelled', chargeback: 'Simulated a chargeback on', settle: 'Simulated settlement of', resend: 'Resent webhooks of' }[action]} order ${s(d.order_id)}${d.amount !== undefined ? ` (${s(d.amount)} minor units)` : ''}`;
      case 'webhook_url_changed':
        return d.webhook_url ? `Set the webhook URL to ${s(d.webhook_url)}` : 'Cleared the webhook URL';
      case 'webhook_secret_rotated':
        return 'Rotated the webhook secret';
      case 'webhook_test':
        return `Sent a test event to ${s(d.url)}`;
      case 'webhook_delivery_resent':
        return `Resent webhook delivery ${s(d.delivery_id)}`;
      case 'link_created':
        return 'Created a payment link';
      case 'totp_enabled':
        return 'Turned two-step sign-in on';
      case 'totp_disabled':
        return 'Turned two-step sign-in off';
      case 'test_clock':
        return d.advance ? `Advanced the test clock by ${s(d.advance)}` : 'Ran due jobs';
      case 'user_invited':
        return `Invited ${s(d.email)} as ${s(d.role)}`;
      case 'invitation_accepted':
        return `Accepted the invitation as ${s(d.role)}`;
      case 'role_changed':
        return `Changed the role of ${s(d.user)} from ${s(d.from)} to ${s(d.to)}`;
      case 'user_removed':
        return `Removed ${s(d.user)} (${s(d.role)})`;
      case 'two_factor_required':
        return 'Required two-step sign-in for everyone';
      case 'two_factor_optional':
        return 'Made two-step sign-in optional';
      case 'risk_list_added':
      case 'risk_list_removed':
        return describeListChange('en', action, d);
      default:
        return action.replace(/_/g, ' ');
    }
  },
};

export type TeamStrings = typeof en;

const nl: TeamStrings = {
  ...en,
  team_title: 'Team',
  audit_title: 'Auditlog',
  webhooks_nav: 'Webhooks',
  webhook_log: 'Webhooklog',
  deliveries: 'Afleveringen',
  failed_first: 'Mislukte afleveringen eerst, dan de nieuwste.',
  test_event: 'testbericht',
  no_url: 'Geen webhook-URL ingesteld (Instellingen).',
  send_test: 'Stuur een testbericht',
  test_sent: 'Testbericht verstuurd: zie de aflevering hieronder.',
  resend: 'Opnieuw sturen',
  resent: 'Opnieuw in de wachtrij: de nieuwe aflevering staat in de lijst.',
  role: 'Rol',
  roles: {
    owner: 'Eigenaar: alles, ook het team',
    developer: 'Ontwikkelaar: API-sleutels, webhooks, testklok',
    support: 'Support: afschrijven, vrijgeven, terugbetalen, betaallinks',
    viewer: 'Kijker: alleen lezen',
  },
  role_short: { owner: 'Eigenaar', developer: 'Ontwikkelaar', support: 'Support', viewer: 'Kijker' },
  two_factor: 'Inloggen in twee stappen',
  on: 'Aan',
  off: 'Uit',
  invite: 'Uitnodigen',
  invite_title: 'Een gebruiker uitnodigen',
  invite_intro: 'De link werkt één keer, 7 dagen lang. Geef hem zelf door: er wordt geen e-mail verstuurd.',
  invite_link: 'Uitnodigingslink',
  invite_shown_once: 'Kopieer deze link nu: hij wordt maar één keer getoond.',
  pending: 'Open uitnodigingen',
  expires: 'Verloopt',
  change_role: 'Rol wijzigen',
  remove: 'Verwijderen',
  require_totp: 'Inloggen in twee stappen verplicht voor iedereen',
  require_totp_on: 'Iedereen moet in twee stappen inloggen. Wie dat nog niet doet, stelt het eerst in.',
  require_totp_off: 'Inloggen in twee stappen is aan elke gebruiker.',
  require: 'Verplichten',
  make_optional: 'Vrijlaten',
  totp_required_notice: 'De eigenaren van dit account verplichten inloggen in twee stappen. Stel het hieronder in om verder te gaan.',
  accept_title: 'Word lid van het team',
  accept_intro: (email: string, role: string) => `Je bent uitgenodigd als ${email} (${role}). Kies een wachtwoord van 12 tot 256 tekens.`,
  accept: 'Mijn account aanmaken',
  invite_gone: 'Deze uitnodiging is al gebruikt, verlopen of bestaat niet.',
  no_permission: 'Je rol staat dit niet toe.',
  entry: (action, d) => (action.startsWith('risk_list_') ? describeListChange('nl', action, d) : en.entry(action, d)),
};

export const TEAM_STRINGS: Record<Locale, TeamStrings> = { en, nl };
