import { isIPv4, isIPv6 } from 'node:net';
import { invalid } from '../errors.ts';
import { isCardNumber } from '../card.ts';
import { addDuration, isPositiveDuration } from '../duration.ts';

/**
 * Blocklists and allowlists (docs/risk.md "Lists"): per project and for the whole platform, of
 * card fingerprints, BIN ranges, issuing countries, addresses or networks, emails and email
 * domains. Pure: parsing what a merchant or operator enters into the stored range, the keys a
 * payment is looked up by, and what the hits do to the velocity limits' decision.
 */

export const LIST_KINDS = ['card', 'bin', 'country', 'network', 'email', 'email_domain'] as const;
export type ListKind = (typeof LIST_KINDS)[number];
export const LISTS = ['block', 'allow'] as const;
export type ListName = (typeof LISTS)[number];
export type ListScope = 'project' | 'platform';

/**
 * An entry as stored: every kind is a range [lo, hi] of fixed-width text compared byte-wise
 * (COLLATE "C"), so one index on (kind, lo) finds a payment's hits of every kind; the kinds that
 * match one value have lo = hi.
 */
export interface ParsedEntry {
  kind: ListKind;
  /** what the list shows: the network, the range, the domain; a card as its last 4 digits */
  value: string;
  lo: string;
  hi: string;
}

export const isListKind = (k: unknown): k is ListKind => typeof k === 'string' && (LIST_KINDS as readonly string[]).includes(k);
export const isListName = (l: unknown): l is ListName => typeof l === 'string' && (LISTS as readonly string[]).includes(l);

/** The first 8 digits of a card number, as BIN ranges are stored. */
const BIN_WIDTH = 8;
const EMAIL = /^[^\s@]{1,64}@([a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})+)$/;
const DOMAIN = /^[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})+$/;
const regions = new Intl.DisplayNames(['en'], { type: 'region' });

/** An ISO 3166-1 alpha-2 code that names a country or territory. */
export const isCountry = (c: string) => /^[A-Z]{2}$/.test(c) && c !== 'ZZ' && regions.of(c) !== c;

/**
 * What was entered, checked and put in its stored form. A card number (`fingerprint` makes its
 * stored value: the number itself is never kept) must pass Luhn; a network must have no host bits.
 */
export function parseEntry(kind: ListKind, raw: string, fingerprint: (pan: string) => string): ParsedEntry {
  const text = raw.trim();
  switch (kind) {
    case 'card': {
      const pan = text.replace(/[\s-]/g, '');
      if (!isCardNumber(pan)) throw invalid('value', 'value must be a card number (12 to 19 digits, Luhn-valid)');
      const fp = fingerprint(pan);
      return { kind, value: `•••• ${pan.slice(-4)}`, lo: fp, hi: fp };
    }
    case 'bin': {
      const m = /^([0-9]{6,8})(?:\s*-\s*([0-9]{6,8}))?$/.exec(text);
      if (!m || (m[2] !== undefined && m[2].length !== m[1]!.length) || (m[2] !== undefined && m[2] < m[1]!))
        throw invalid('value', 'value must be a BIN of 6 to 8 digits, or a range of two of the same length, low-high');
      const hi = m[2] ?? m[1]!;
      return { kind, value: m[2] ? `${m[1]}-${hi}` : hi, lo: m[1]!.padEnd(BIN_WIDTH, '0'), hi: hi.padEnd(BIN_WIDTH, '9') };
    }
    case 'country': {
      const c = text.toUpperCase();
      if (!isCountry(c)) throw invalid('value', 'value must be an ISO 3166 country code of two letters, such as NL');
      return { kind, value: c, lo: c, hi: c };
    }
    case 'network': {
      const n = parseNetwork(text);
      if (!n) throw invalid('value', 'value must be an IPv4 or IPv6 address or network in CIDR form, such as 203.0.113.0/24');
      return { kind, ...n };
    }
    case 'email': {
      const e = text.toLowerCase();
      if (e.length > 254 || !EMAIL.test(e)) throw invalid('value', 'value must be an email address');
      return { kind, value: e, lo: e, hi: e };
    }
    case 'email_domain': {
      const d = text.toLowerCase().replace(/^@/, '');
      if (d.length > 253 || !DOMAIN.test(d)) throw invalid('value', 'value must be a domain name such as example.com');
      return { kind, value: d, lo: d, hi: d };
    }
  }
}

/** The longest an entry may be kept before it expires: ten years. */
const MAX_EXPIRY_MS = 10 * 366 * 86_400_000;

/**
 * When an entry expires (docs/risk.md "Lists"): none for blank; an ISO 8601 duration from `now`
 * (`P30D`, `PT12H`), a date-time with its offset (`2027-01-31T18:00:00+01:00`), or a date
 * (`2027-01-31`: to the end of that day, UTC). It must lie ahead, within ten years.
 */
export function parseExpiry(raw: unknown, now: Date): Date | null {
  if (raw === undefined || raw === null || (typeof raw === 'string' && !raw.trim())) return null;
  const text = typeof raw === 'string' ? raw.trim() : '';
  let at: Date | undefined;
  if (isPositiveDuration(text)) at = addDuration(now, text);
  else if (/^\d{4}-\d{2}-\d{2}$/.test(text)) at = new Date(Date.parse(`${text}T00:00:00Z`) + 86_400_000);
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/.test(text)) at = new Date(text);
  if (!at || Number.isNaN(at.getTime()))
    throw invalid('expires_at', 'expires_at must be a duration such as P30D, a date such as 2027-01-31, or a date-time with its offset');
  if (at.getTime() <= now.getTime() || at.getTime() - now.getTime() > MAX_EXPIRY_MS)
    throw invalid('expires_at', 'expires_at must lie ahead, within ten years');
  return at;
}

/** A note on an entry: up to 200 characters of one line; blank is none. */
export function parseNote(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  // eslint-disable-next-line no-control-regex
  if (text === undefined || text.length > 200 || /[\u0000-\u001f\u007f]/.test(text))
    throw invalid('note', 'note must be at most 200 characters on one line');
  return text || null;
}

/** An address's stored form: its family and its bits as fixed-width hex, so ranges compare as text. */
const hex = (v: bigint, v6: boolean) => `${v6 ? '6' : '4'}:${v.toString(16).padStart(v6 ? 32 : 8, '0')}`;

function addressBits(a: string): { bits: bigint; v6: boolean } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) a = mapped[1]!;
  if (isIPv4(a)) return { bits: a.split('.').reduce((n, o) => (n << 8n) | BigInt(o), 0n), v6: false };
  if (!isIPv6(a)) return undefined;
  let text = a.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = v4[1]!.split('.').reduce((x, o) => (x << 8) | Number(o), 0) >>> 0;
    text = text.slice(0, -v4[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail !== undefined ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return { bits: groups.reduce((n, g) => (n << 16n) | BigInt(`0x${g}`), 0n), v6: true };
}

/** An address or a network in CIDR form, as a range; undefined when it is neither, or has host bits set. */
export function parseNetwork(text: string): Omit<ParsedEntry, 'kind'> | undefined {
  const [addr, prefix, extra] = text.split('/');
  if (extra !== undefined || !addr || addr.includes('%')) return undefined;
  const a = addressBits(addr);
  if (!a) return undefined;
  const width = a.v6 ? 128 : 32;
  if (prefix !== undefined && !/^[0-9]{1,3}$/.test(prefix)) return undefined;
  const len = prefix === undefined ? width : Number(prefix);
  // /0 would be every address: surely a typing error, never a list entry
  if (len < 1 || len > width) return undefined;
  const host = (1n << BigInt(width - len)) - 1n;
  if (a.bits & host) return undefined;
  const shown = a.v6 ? compressV6(a.bits) : [24, 16, 8, 0].map((s) => Number((a.bits >> BigInt(s)) & 255n)).join('.');
  return { value: len === width ? shown : `${shown}/${len}`, lo: hex(a.bits, a.v6), hi: hex(a.bits | host, a.v6) };
}

/** An IPv6 address in its short form (RFC 5952: the longest run of zero groups as ::). */
function compressV6(bits: bigint): string {
  const g = Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  let best = [-1, 0];
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && g[j] === '0') j++;
    if (j - i > best[1]! && j - i > 1) best = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  if (best[0]! < 0) return g.join(':');
  return `${g.slice(0, best[0]).join(':')}::${g.slice(best[0]! + best[1]!).join(':')}`;
}

/** What a payment is looked up by, kind by kind (a kind the payment has no value of is left out). */
export interface PaymentKeys {
  card: string;
  bin: string;
  country?: string;
  network?: string;
  email?: string;
  /** the email's domain and every parent domain of it (a listed example.com holds for mail.example.com) */
  domains: string[];
}

export function paymentKeys(fingerprint: string, pan: string, country: string | undefined, address: unknown, email: unknown): PaymentKeys {
  const a = typeof address === 'string' ? addressBits(address.trim()) : undefined;
  const e = typeof email === 'string' ? email.trim().toLowerCase() : '';
  const m = EMAIL.exec(e);
  const labels = m ? m[1]!.split('.') : [];
  return {
    card: fingerprint,
    bin: pan.slice(0, BIN_WIDTH).padEnd(BIN_WIDTH, '0'),
    country,
    network: a && hex(a.bits, a.v6),
    email: m ? e : undefined,
    domains: labels.slice(0, -1).map((_, i) => labels.slice(i).join('.')),
  };
}

/** A rule's hit and a decision, as domain/risk/limits.ts has them (not imported: limits.ts names the list rules). */
interface RiskHit {
  rule: string;
  action: 'refuse' | 'challenge' | 'flag' | 'pass';
  reason: string;
}
interface Screening {
  action: RiskHit['action'];
  rules: RiskHit[];
}

/** One entry a payment matched. */
export interface ListHitRow {
  scope: ListScope;
  list: ListName;
  kind: ListKind;
}

/** A list's rule as the `risk` object names it: blocklist_card, platform_allowlist_network... */
const listRule = (h: ListHitRow) => `${h.scope === 'platform' ? 'platform_' : ''}${h.list}list_${h.kind}`;

/** Every list rule's name (for the schema's enum and the metric's bounded `rule` label). */
export const LIST_RULES: readonly string[] = (['project', 'platform'] as const).flatMap((scope) =>
  LISTS.flatMap((list) => LIST_KINDS.map((kind) => listRule({ scope, list, kind }))),
);
/** The list rules that refuse: the only ones a decision's metric label can name. */
export const BLOCK_RULES: readonly string[] = LIST_RULES.filter((r) => r.includes('blocklist_'));

const WHAT: Record<ListKind, string> = {
  card: 'card',
  bin: "card's BIN",
  country: "card's issuing country",
  network: "shopper's address",
  email: 'email address',
  email_domain: "email address's domain",
};

const hitOf = (h: ListHitRow): RiskHit => ({
  rule: listRule(h),
  action: h.list === 'block' ? 'refuse' : 'pass',
  reason: `the ${WHAT[h.kind]} is on the ${h.scope === 'platform' ? "platform's" : "project's"} ${h.list}list`,
});

/**
 * The lists' say over the velocity limits' decision, strongest first: a platform block refuses;
 * else a project allow passes (past the project's own blocks and the limits); else a project block
 * refuses; else a platform allow passes the limits; else the limits decide.
 */
export function applyLists(hits: readonly ListHitRow[], limits: Screening): Screening {
  const of = (scope: ListScope, list: ListName) => hits.filter((h) => h.scope === scope && h.list === list).map(hitOf);
  const order: Array<[ListScope, ListName]> = [
    ['platform', 'block'],
    ['project', 'allow'],
    ['project', 'block'],
    ['platform', 'allow'],
  ];
  for (const [scope, list] of order) {
    const rules = of(scope, list);
    if (!rules.length) continue;
    // a refusal keeps the limits' hits beside the list's, for the merchant's review; a pass shows the allow alone
    return list === 'block' ? { action: 'refuse', rules: [...rules, ...limits.rules] } : { action: 'pass', rules };
  }
  return limits;
}

/** The labels of tender_risk_allows_total: the scope and kind of an allowlist, from fixed sets (no project, no value). */
export interface AllowLabels {
  scope: ListScope;
  kind: ListKind;
}
export const ALLOW_LABELS: readonly AllowLabels[] = (['project', 'platform'] as const).flatMap((scope) =>
  LIST_KINDS.map((kind) => ({ scope, kind })),
);

/**
 * The allowlist that let a decided attempt past the limits (the first of its allow hits), for
 * tender_risk_allows_total; undefined when no allowlist had its say (none matched, or a block won).
 */
export function allowLabels(s: { rules: ReadonlyArray<{ rule: string; action: string }> }): AllowLabels | undefined {
  for (const r of s.rules) {
    if (r.action !== 'pass') continue;
    const hit = ALLOW_LABELS.find((l) => listRule({ scope: l.scope, list: 'allow', kind: l.kind }) === r.rule);
    if (hit) return hit;
  }
  return undefined;
}
