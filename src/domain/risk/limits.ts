/**
 * Velocity limits against card testing (docs/risk.md): what each counts, its setting and default,
 * and what it does when a payment goes over it. Pure: the counts come from store/risk/counters.ts.
 */
import { BLOCK_RULES } from './lists.ts';

/** What a limit or rule does to a payment: refuse it, require a 3-D Secure challenge, or let it pass flagged for review. */
export const RISK_ACTIONS = ['refuse', 'challenge', 'flag'] as const;
export type RiskAction = (typeof RISK_ACTIONS)[number];
/** The decision on a payment: the strongest action of the rules that fired, else pass. */
export type RiskDecision = RiskAction | 'pass';

/** What a counter follows. Per project, except `card_platform` (one card across every merchant). */
export const SUBJECTS = ['card', 'card_platform', 'address', 'network', 'order', 'customer', 'guest', 'project'] as const;
export type Subject = (typeof SUBJECTS)[number];

/** A counter's numbers as one screening read them, this attempt included. */
export interface Count {
  /** attempts in the current window, this one included */
  attempts: number;
  /** attempts in the window before it */
  previous: number;
  /** attempts and declines over the current window and the HISTORY windows before it */
  hourAttempts: number;
  hourDeclines: number;
}

/** Windows before the current one that "an hour" covers (with RISK_WINDOW_SECONDS=600). */
export const HISTORY = 6;

type Measure = 'attempts' | 'declines' | 'order_attempts' | 'rate' | 'decline_ratio';

export interface Limit {
  rule: string;
  subject: Subject;
  measure: Measure;
  action: RiskAction;
  /** the setting, and its default (0 turns the limit off) */
  env: string;
  default: number;
  /** what the setting means, for docs/risk.md and the risk object's reason */
  what: string;
}

/**
 * Every limit. Defaults stop the attacks of issue 44 (hundreds of authorizations a minute from one
 * address, or one order from many) and no ordinary shopper: a customer who mistypes twice, a
 * family paying from one address.
 */
export const LIMITS: readonly Limit[] = [
  {
    rule: 'card_attempts',
    subject: 'card',
    measure: 'attempts',
    action: 'refuse',
    env: 'RISK_CARD_MAX_ATTEMPTS',
    default: 5,
    what: 'attempts with one card at one merchant per window',
  },
  {
    rule: 'card_declines',
    subject: 'card',
    measure: 'declines',
    action: 'refuse',
    env: 'RISK_CARD_MAX_DECLINES',
    default: 3,
    what: 'declines of one card at one merchant per hour',
  },
  {
    rule: 'card_platform_declines',
    subject: 'card_platform',
    measure: 'declines',
    action: 'refuse',
    env: 'RISK_CARD_PLATFORM_MAX_DECLINES',
    default: 5,
    what: 'declines of one card across all merchants per hour',
  },
  {
    rule: 'address_attempts',
    subject: 'address',
    measure: 'attempts',
    action: 'refuse',
    env: 'RISK_ADDRESS_MAX_ATTEMPTS',
    default: 10,
    what: "attempts from one shopper's address per window",
  },
  {
    rule: 'address_declines',
    subject: 'address',
    measure: 'declines',
    action: 'refuse',
    env: 'RISK_ADDRESS_MAX_DECLINES',
    default: 5,
    what: "declines from one shopper's address per hour",
  },
  {
    rule: 'network_attempts',
    subject: 'network',
    measure: 'attempts',
    action: 'refuse',
    env: 'RISK_NETWORK_MAX_ATTEMPTS',
    default: 30,
    what: 'attempts from one /24 (IPv4) or /64 (IPv6) per window',
  },
  {
    rule: 'order_attempts',
    subject: 'order',
    measure: 'order_attempts',
    action: 'refuse',
    env: 'RISK_ORDER_MAX_ATTEMPTS',
    default: 5,
    what: 'card attempts on one order per hour',
  },
  {
    rule: 'customer_attempts',
    subject: 'customer',
    measure: 'attempts',
    action: 'challenge',
    env: 'RISK_CUSTOMER_MAX_ATTEMPTS',
    default: 10,
    what: 'attempts of one merchant_customer_id per window',
  },
  {
    rule: 'guest_attempts',
    subject: 'guest',
    measure: 'attempts',
    action: 'challenge',
    env: 'RISK_GUEST_MAX_ATTEMPTS',
    default: 5,
    what: 'attempts of one email address without a merchant_customer_id per window',
  },
  {
    rule: 'project_rate',
    subject: 'project',
    measure: 'rate',
    action: 'flag',
    env: 'RISK_PROJECT_RATE_FACTOR',
    default: 10,
    what: "times the project's average attempts per window over the hour before (and over RISK_PROJECT_RATE_FLOOR)",
  },
  {
    rule: 'project_decline_ratio',
    subject: 'project',
    measure: 'decline_ratio',
    action: 'flag',
    env: 'RISK_PROJECT_MAX_DECLINE_PERCENT',
    default: 50,
    what: "percent of the project's attempts declined over the hour (once RISK_PROJECT_MIN_DECLINES declined)",
  },
];

/** The other numbers the limits use. */
export const RISK_SETTINGS = [
  {
    env: 'RISK_WINDOW_SECONDS',
    default: 600,
    min: 60,
    what: "a counter's window: attempts are counted over the last window (sliding), declines over the last hour",
  },
  { env: 'RISK_PROJECT_RATE_FLOOR', default: 100, min: 1, what: 'attempts per window below which project_rate never fires' },
  { env: 'RISK_PROJECT_MIN_DECLINES', default: 20, min: 1, what: 'declines per hour below which project_decline_ratio never fires' },
  {
    env: 'RISK_REFUSAL_FLOOR_MS',
    default: 300,
    min: 0,
    what: "how long a refused attempt's 3-D Secure step is held, so a refusal answers no faster than a payment",
  },
  { env: 'RISK_DRY_RUN_TIMEOUT_MS', default: 5000, min: 100, what: "how long a rule's dry run may read the replica before it stops" },
  { env: 'RISK_DRY_RUN_MAX_PAYMENTS', default: 20000, min: 10, what: 'the most recent payments of the 30 days a dry run replays' },
  { env: 'RISK_HOLD_SLICE_SECONDS', default: 60, min: 1, what: "the platform hold's slice: each is judged on its own" },
  { env: 'RISK_HOLD_SLICES', default: 5, min: 1, what: 'slices in a row whose decline ratio must be too high before a project is held' },
  {
    env: 'RISK_HOLD_MIN_AUTHORIZATIONS',
    default: 20,
    min: 0,
    what: 'authorizations a slice must send to the acquirer to count toward a hold (0: the hold is off)',
  },
  { env: 'RISK_HOLD_MIN_PERCENT', default: 60, min: 1, what: "percent of a slice's authorizations declined below which it never counts" },
  { env: 'RISK_HOLD_FACTOR', default: 3, min: 1, what: "times the project's own decline percent over the baseline a slice must exceed" },
  { env: 'RISK_HOLD_BASELINE_MINUTES', default: 60, min: 1, what: "the time before the slices whose decline ratio is the project's own" },
] as const;

/** The platform hold's settings (services/risk/hold.ts). */
export interface HoldSettings {
  sliceSeconds: number;
  slices: number;
  minAuthorizations: number;
  minPercent: number;
  factor: number;
  baselineMinutes: number;
}

export interface RiskLimits {
  /** RISK_LIMITS=off: attempts are counted, but no limit acts (an integrator's CI reusing one test card) */
  enforce: boolean;
  /** per rule, its setting's value (0: off) */
  max: Record<string, number>;
  windowSeconds: number;
  projectRateFloor: number;
  projectMinDeclines: number;
  refusalFloorMs: number;
  dryRunTimeoutMs: number;
  dryRunMax: number;
  hold: HoldSettings;
}

/** One rule that fired, as the transaction's `risk` object shows it. */
export interface RiskHit {
  rule: string;
  /** a merchant's rule: which */
  rule_id?: string;
  /** pass: an allowlist's hit, which let the payment past the limits */
  action: RiskDecision;
  reason: string;
}

/** The decision and the rules behind it. */
export interface Screening {
  action: RiskDecision;
  rules: RiskHit[];
}

const STRENGTH: Record<RiskDecision, number> = { pass: 0, flag: 1, challenge: 2, refuse: 3 };
const strongest = (a: RiskDecision, b: RiskDecision): RiskDecision => (STRENGTH[b] > STRENGTH[a] ? b : a);

/**
 * Attempts over the sliding window: this window's, plus the window before weighted by how much of
 * it the sliding window still covers (`elapsed`: the part of the current window gone, 0..1).
 */
const slidingAttempts = (c: Count, elapsed: number) => c.attempts + Math.floor(c.previous * (1 - elapsed));

/** The decision on one attempt, from its counts (per subject; a subject without a value has none). */
export function decide(limits: RiskLimits, counts: Partial<Record<Subject, Count>>, elapsed: number): Screening {
  const rules: RiskHit[] = [];
  for (const l of limits.enforce ? LIMITS : []) {
    const max = limits.max[l.rule] ?? 0;
    const c = counts[l.subject];
    if (!max || !c) continue;
    const reason = fired(l, max, c, limits, elapsed);
    if (reason) rules.push({ rule: l.rule, action: l.action, reason });
  }
  return { action: rules.reduce<RiskDecision>((a, r) => strongest(a, r.action), 'pass'), rules };
}

function fired(l: Limit, max: number, c: Count, limits: RiskLimits, elapsed: number): string | undefined {
  const minutes = Math.round(limits.windowSeconds / 60);
  switch (l.measure) {
    case 'attempts': {
      const n = slidingAttempts(c, elapsed);
      return n > max ? `${n} attempts by this ${l.subject} within ${minutes} minutes (at most ${max})` : undefined;
    }
    case 'order_attempts':
      return c.hourAttempts > max ? `${c.hourAttempts} card attempts on this order within the hour (at most ${max})` : undefined;
    case 'declines':
      // the attempts before this one were declined that often: this one is not sent
      return c.hourDeclines >= max
        ? `${c.hourDeclines} declines of this ${l.subject === 'card_platform' ? 'card across merchants' : l.subject} within the hour (at most ${max})`
        : undefined;
    case 'rate': {
      const before = Math.max(0, c.hourAttempts - c.attempts) / HISTORY;
      const bound = Math.max(limits.projectRateFloor, max * before);
      return c.attempts > bound
        ? `${c.attempts} attempts within ${minutes} minutes, over ${max} times the project's recent ${before.toFixed(1)}`
        : undefined;
    }
    case 'decline_ratio': {
      if (c.hourDeclines < limits.projectMinDeclines || !c.hourAttempts) return undefined;
      const percent = Math.round((100 * c.hourDeclines) / c.hourAttempts);
      return percent > max ? `${percent} % of the project's attempts declined within the hour (at most ${max} %)` : undefined;
    }
  }
}

/** Every rule's name: the fixed set the metric's `rule` label takes its values from (with `none`). */
export const RULES: readonly string[] = [...LIMITS.map((l) => l.rule), ...BLOCK_RULES];
/** The decisions that are no limit: a rule the merchant wrote (risk/rules.ts), the operator's hold of a project (risk/hold). */
export const OTHER_RULES = ['merchant_rule', 'platform_hold'] as const;

/**
 * The labels of one decision in tender_risk_decisions_total: the decision, and the rule that
 * decided it (the first rule that fired with the decision's action, in LIMITS order; `none` for
 * pass). Both from fixed sets, so the metric has a bounded number of series whatever is screened.
 */
export function riskDecisionLabels(s: Screening): { decision: RiskDecision; rule: string } {
  const rule = s.action === 'pass' ? undefined : s.rules.find((r) => r.action === s.action)?.rule;
  const known = rule && (RULES.includes(rule) || (OTHER_RULES as readonly string[]).includes(rule));
  return { decision: s.action, rule: known ? rule : 'none' };
}
