import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { RISK_ACTIONS, type Count, type RiskAction, type RiskHit, type Subject } from './limits.ts';

/**
 * Rules a merchant writes (docs/risk.md "Rules a merchant writes"): an AND of conditions on the
 * payment (field, operator, value) and an action. Pure: the facts come from the screening.
 * A project's enabled rules are tried in their order; the first whose conditions all hold fires.
 */

/** What a condition can look at, and the kind of value it compares. */
export const RULE_FIELDS = {
  amount: 'number',
  currency: 'code',
  card_country: 'code',
  address_country: 'code',
  method: 'code',
  brand: 'code',
  card_attempts: 'number',
  card_declines: 'number',
  card_platform_declines: 'number',
  address_attempts: 'number',
  address_declines: 'number',
  network_attempts: 'number',
  order_attempts: 'number',
  customer_attempts: 'number',
  guest_attempts: 'number',
  project_attempts: 'number',
  project_decline_percent: 'number',
  three_ds: 'code',
} as const;
export type RuleField = keyof typeof RULE_FIELDS;
export const FIELD_NAMES = Object.keys(RULE_FIELDS) as RuleField[];

export const NUMBER_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte'] as const;
export const CODE_OPS = ['eq', 'ne', 'in', 'not_in'] as const;
export const RULE_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in'] as const;
export type RuleOp = (typeof RULE_OPS)[number];

const OP_TEXT: Record<RuleOp, string> = { eq: '=', ne: '≠', gt: '>', gte: '≥', lt: '<', lte: '≤', in: 'in', not_in: 'not in' };

export const MAX_RULES = 50;

/**
 * What 3-D Secure answered, as the `three_ds` field reads it: passed (Y, authenticated), attempted
 * (A, an attempt with the liability shift), none (U, not available), failed (N, R, or no answer).
 * Not known at the screening (before 3-D Secure): a rule with it is judged again after it.
 */
const THREE_DS_VALUES = ['passed', 'attempted', 'none', 'failed'] as const;
export const threeDsFact = (transStatus: string): (typeof THREE_DS_VALUES)[number] =>
  transStatus === 'Y' ? 'passed' : transStatus === 'A' ? 'attempted' : transStatus === 'U' ? 'none' : 'failed';

/** One of the values: a union of literals, which TypeBox's own checker reads (its Value.Errors names the path). */
const OneOf = <const T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

export const RuleCondition = Type.Object(
  {
    field: OneOf(FIELD_NAMES),
    op: OneOf(RULE_OPS),
    value: Type.Union([
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z0-9_-]+$' }),
      Type.Array(Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z0-9_-]+$' }), { minItems: 1, maxItems: 50 }),
    ]),
  },
  { additionalProperties: false },
);
export type RuleCondition = Static<typeof RuleCondition>;

/** A rule as the merchant writes it. */
export const RuleInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 80, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }),
    action: OneOf(RISK_ACTIONS),
    conditions: Type.Array(RuleCondition, { minItems: 1, maxItems: 10 }),
  },
  {
    $id: 'RiskRuleInput',
    additionalProperties: false,
    examples: [
      {
        name: 'Large payments from abroad',
        action: 'challenge',
        conditions: [
          { field: 'amount', op: 'gt', value: 50000 },
          { field: 'card_country', op: 'not_in', value: ['NL', 'BE'] },
        ],
      },
    ],
  },
);
export type RuleInput = Static<typeof RuleInput>;

/** A rule's fault: which part (`conditions.1.value`) and what is wrong. */
export interface RuleFault {
  field: string;
  message: string;
}

/** Every fault of a rule as written (TypeBox schema, then what the schema cannot say); none: it is good. */
export function ruleFaults(input: unknown): RuleFault[] {
  if (!Value.Check(RuleInput, input)) {
    const seen = new Set<string>();
    const out: RuleFault[] = [];
    for (const e of Value.Errors(RuleInput, input)) {
      const field = e.path.replace(/^\//, '').replaceAll('/', '.') || 'rule';
      // a union's value reports each branch: say it once
      if (seen.has(field)) continue;
      seen.add(field);
      out.push({ field, message: faultText(field, e.message) });
    }
    return out;
  }
  const out: RuleFault[] = [];
  input.conditions.forEach((c, i) => {
    const kind = RULE_FIELDS[c.field];
    const at = `conditions.${i}`;
    if (kind === 'number') {
      if (!(NUMBER_OPS as readonly string[]).includes(c.op))
        out.push({ field: `${at}.op`, message: `${c.field} is a number: use one of ${NUMBER_OPS.join(', ')}` });
      else if (typeof c.value !== 'number') out.push({ field: `${at}.value`, message: `${c.field} compares with a whole number` });
    } else {
      const list = c.op === 'in' || c.op === 'not_in';
      if (!(CODE_OPS as readonly string[]).includes(c.op))
        out.push({ field: `${at}.op`, message: `${c.field} is a code: use one of ${CODE_OPS.join(', ')}` });
      else if (list !== Array.isArray(c.value) || typeof c.value === 'number')
        out.push({ field: `${at}.value`, message: list ? `${c.op} takes a list of codes` : `${c.op} takes one code` });
      else if (c.field === 'three_ds' && [c.value].flat().some((v) => !(THREE_DS_VALUES as readonly string[]).includes(String(v))))
        out.push({ field: `${at}.value`, message: `three_ds is one of ${THREE_DS_VALUES.join(', ')}` });
    }
  });
  if (input.action === 'challenge' && input.conditions.some((c) => c.field === 'three_ds'))
    out.push({ field: 'action', message: 'a rule on three_ds is judged after 3-D Secure: it may refuse or flag, not challenge' });
  return out;
}

function faultText(field: string, message: string): string {
  if (field === 'name') return 'name must be 1 to 80 characters';
  if (field === 'action') return `action must be one of ${RISK_ACTIONS.join(', ')}`;
  if (field === 'conditions') return 'a rule has 1 to 10 conditions';
  if (field.endsWith('.field')) return `field must be one of ${FIELD_NAMES.join(', ')}`;
  if (field.endsWith('.op')) return `op must be one of ${RULE_OPS.join(', ')}`;
  if (/\.value(\.\d+)?$/.test(field)) return 'value must be a whole number, a code (letters, digits, _ or -) or a list of codes';
  return `${field}: ${message}`;
}

/** What a payment shows the rules. A fact that is not known (no BIN table, a count not kept) is left out. */
export type Facts = Partial<Record<RuleField, number | string>>;

/** The velocity facts of a screening's counts, as the limits read them (limits.ts). */
export function velocityFacts(counts: Partial<Record<Subject, Count>>, elapsed: number): Facts {
  const f: Facts = {};
  const sliding = (c: Count) => c.attempts + Math.floor(c.previous * (1 - elapsed));
  const attempts: Array<[RuleField, Subject]> = [
    ['card_attempts', 'card'],
    ['address_attempts', 'address'],
    ['network_attempts', 'network'],
    ['customer_attempts', 'customer'],
    ['guest_attempts', 'guest'],
    ['project_attempts', 'project'],
  ];
  for (const [field, s] of attempts) if (counts[s]) f[field] = sliding(counts[s]);
  const declines: Array<[RuleField, Subject]> = [
    ['card_declines', 'card'],
    ['card_platform_declines', 'card_platform'],
    ['address_declines', 'address'],
  ];
  for (const [field, s] of declines) if (counts[s]) f[field] = counts[s].hourDeclines;
  if (counts.order) f.order_attempts = counts.order.hourAttempts;
  const p = counts.project;
  if (p?.hourAttempts) f.project_decline_percent = Math.round((100 * p.hourDeclines) / p.hourAttempts);
  return f;
}

/** true, false, or undefined when a fact it needs is not known. */
export function holds(c: RuleCondition, facts: Facts): boolean | undefined {
  const v = facts[c.field];
  if (v === undefined) return undefined;
  const code = (x: string | number) => String(x).toUpperCase();
  switch (c.op) {
    case 'eq':
      return typeof c.value === 'number' ? v === c.value : code(v) === code(c.value as string);
    case 'ne':
      return typeof c.value === 'number' ? v !== c.value : code(v) !== code(c.value as string);
    case 'gt':
      return typeof v === 'number' && v > (c.value as number);
    case 'gte':
      return typeof v === 'number' && v >= (c.value as number);
    case 'lt':
      return typeof v === 'number' && v < (c.value as number);
    case 'lte':
      return typeof v === 'number' && v <= (c.value as number);
    case 'in':
      return (c.value as string[]).some((x) => code(x) === code(v));
    case 'not_in':
      return !(c.value as string[]).some((x) => code(x) === code(v));
  }
}

/** AND of the conditions: false if one fails, undefined if none fails but one is not known, else true. */
export function matches(rule: Pick<RuleInput, 'conditions'>, facts: Facts): boolean | undefined {
  let known = true;
  for (const c of rule.conditions) {
    const h = holds(c, facts);
    if (h === false) return false;
    if (h === undefined) known = false;
  }
  return known ? true : undefined;
}

/** A condition as the merchant reads it: `amount > 50000`, `card_country not in NL, BE`. */
export const conditionText = (c: RuleCondition) =>
  `${c.field} ${OP_TEXT[c.op]} ${Array.isArray(c.value) ? c.value.join(', ') : String(c.value)}`;

/** A stored rule: its id and name with what it says. */
export interface Rule extends RuleInput {
  id: string;
}

/**
 * The first rule (in order) whose conditions all hold, as a hit of the transaction's `risk`
 * object. A rule with a fact it needs unknown does not fire.
 */
export function firstRule(rules: readonly Rule[], facts: Facts): (RiskHit & { rule_id: string }) | undefined {
  for (const r of rules)
    if (matches(r, facts) === true)
      return {
        rule: 'merchant_rule',
        rule_id: r.id,
        action: r.action as RiskAction,
        reason: `rule "${r.name}": ${r.conditions.map(conditionText).join(' and ')}`,
      };
  return undefined;
}

/**
 * A rule on `three_ds` that the screening could not decide (3-D Secure had not answered yet) and
 * whose other conditions all held: it is judged again after 3-D Secure, on `conditions` (its
 * three_ds ones), before the authorization is sent. Kept in the `risk` object (`pending`).
 */
export interface PendingRule {
  rule_id: string;
  action: RiskAction;
  /** the reason its hit will give: the rule's name and every condition */
  reason: string;
  conditions: RuleCondition[];
}

const onThreeDs = (c: RuleCondition) => c.field === 'three_ds';

/**
 * The rules to judge again after 3-D Secure, in order: each rule on three_ds whose other
 * conditions hold, before the first rule that acted now (a later one would not have been first).
 */
export function pendingRules(rules: readonly Rule[], facts: Facts): PendingRule[] {
  const out: PendingRule[] = [];
  for (const r of rules) {
    if (matches(r, facts) === true) break;
    if (!r.conditions.some(onThreeDs) || matches({ conditions: r.conditions.filter((c) => !onThreeDs(c)) }, facts) !== true) continue;
    out.push({
      rule_id: r.id,
      action: r.action as RiskAction,
      reason: `rule "${r.name}": ${r.conditions.map(conditionText).join(' and ')}`,
      conditions: r.conditions.filter(onThreeDs),
    });
  }
  return out;
}

/** The first pending rule whose three_ds conditions hold for what 3-D Secure answered, as a hit. */
export function judgePending(pending: readonly PendingRule[], threeDs: string): (RiskHit & { rule_id: string }) | undefined {
  const p = pending.find((x) => matches(x, { three_ds: threeDs }) === true);
  return p && { rule: 'merchant_rule', rule_id: p.rule_id, action: p.action, reason: p.reason };
}
