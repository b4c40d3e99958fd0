// Rules a merchant writes (docs/risk.md): the evaluator of each field and operator, the AND of
// conditions, first match in order, unknown facts, and every rule the schema or the field's kind refuses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FIELD_NAMES,
  RULE_FIELDS,
  conditionText,
  firstRule,
  holds,
  judgePending,
  matches,
  pendingRules,
  ruleFaults,
  threeDsFact,
  velocityFacts,
  type Facts,
  type Rule,
  type RuleCondition,
} from '../../src/domain/risk/rules.ts';
import { judgeSlices } from '../../src/services/risk/hold.ts';

const c = (field: RuleCondition['field'], op: RuleCondition['op'], value: RuleCondition['value']): RuleCondition => ({ field, op, value });
const facts: Facts = {
  amount: 5000,
  currency: 'EUR',
  card_country: 'US',
  address_country: 'NL',
  method: 'credit-card',
  brand: 'visa',
  card_attempts: 3,
  order_attempts: 2,
  project_decline_percent: 40,
};

test('each number operator compares the fact with the value', () => {
  const at = (op: RuleCondition['op'], v: number) => holds(c('amount', op, v), facts);
  assert.deepEqual([at('eq', 5000), at('eq', 4999), at('ne', 4999), at('ne', 5000)], [true, false, true, false]);
  assert.deepEqual([at('gt', 4999), at('gt', 5000), at('gte', 5000), at('gte', 5001)], [true, false, true, false]);
  assert.deepEqual([at('lt', 5001), at('lt', 5000), at('lte', 5000), at('lte', 4999)], [true, false, true, false]);
});

test('each code operator compares codes without regard to case', () => {
  assert.equal(holds(c('currency', 'eq', 'eur'), facts), true);
  assert.equal(holds(c('currency', 'ne', 'EUR'), facts), false);
  assert.equal(holds(c('card_country', 'in', ['CA', 'us']), facts), true);
  assert.equal(holds(c('card_country', 'not_in', ['NL', 'BE']), facts), true);
  assert.equal(holds(c('address_country', 'not_in', ['NL', 'BE']), facts), false);
  assert.equal(holds(c('method', 'eq', 'credit-card'), facts), true);
  assert.equal(holds(c('brand', 'in', ['mastercard']), facts), false);
});

test('every field is read from its fact; a fact not known leaves the condition undecided', () => {
  for (const f of FIELD_NAMES) {
    const cond = RULE_FIELDS[f] === 'number' ? c(f, 'gte', 0) : c(f, 'ne', 'ZZ');
    assert.equal(holds(cond, { [f]: RULE_FIELDS[f] === 'number' ? 1 : 'AA' }), true, f);
    assert.equal(holds(cond, {}), undefined, f);
  }
});

test('conditions are an AND: one false is false, else one unknown is unknown', () => {
  assert.equal(matches({ conditions: [c('amount', 'gt', 100), c('currency', 'eq', 'EUR')] }, facts), true);
  assert.equal(matches({ conditions: [c('amount', 'gt', 100), c('currency', 'eq', 'USD')] }, facts), false);
  assert.equal(matches({ conditions: [c('amount', 'gt', 100), c('guest_attempts', 'gt', 1)] }, facts), undefined);
  assert.equal(matches({ conditions: [c('amount', 'gt', 9000), c('guest_attempts', 'gt', 1)] }, facts), false);
});

test('the first rule that matches fires, in order; an undecided rule does not fire', () => {
  const rules: Rule[] = [
    { id: 'a', name: 'Unknown', action: 'refuse', conditions: [c('guest_attempts', 'gt', 0)] },
    { id: 'b', name: 'Big', action: 'challenge', conditions: [c('amount', 'gte', 5000)] },
    { id: 'c', name: 'Euro', action: 'flag', conditions: [c('currency', 'eq', 'EUR')] },
  ];
  const hit = firstRule(rules, facts);
  assert.deepEqual(hit, { rule: 'merchant_rule', rule_id: 'b', action: 'challenge', reason: 'rule "Big": amount ≥ 5000' });
  assert.equal(firstRule(rules.slice(0, 1), facts), undefined);
  assert.equal(conditionText(c('card_country', 'not_in', ['NL', 'BE'])), 'card_country not in NL, BE');
});

test('velocity facts are the counts as the limits read them', () => {
  const n = (attempts: number, previous = 0, hourAttempts = attempts, hourDeclines = 0) => ({
    attempts,
    previous,
    hourAttempts,
    hourDeclines,
  });
  const f = velocityFacts({ card: n(2, 4, 9, 3), order: n(1, 0, 6), project: n(10, 0, 40, 10), card_platform: n(1, 0, 1, 5) }, 0.5);
  assert.deepEqual(f, {
    card_attempts: 4,
    project_attempts: 10,
    card_declines: 3,
    card_platform_declines: 5,
    order_attempts: 6,
    project_decline_percent: 25,
  });
});

const good = { name: 'Big foreign', action: 'refuse', conditions: [c('amount', 'gt', 100)] };

test('a good rule has no fault', () => {
  assert.deepEqual(ruleFaults(good), []);
  assert.deepEqual(ruleFaults({ ...good, conditions: [c('card_country', 'in', ['US', 'CA']), c('currency', 'eq', 'EUR')] }), []);
});

test('every rule of the schema and of the field kinds refuses what breaks it, naming the part', () => {
  const bad: Array<[unknown, string, RegExp]> = [
    [{ ...good, name: '' }, 'name', /1 to 80/],
    [{ ...good, name: 'x'.repeat(81) }, 'name', /1 to 80/],
    [{ ...good, name: 'a\nb' }, 'name', /1 to 80/],
    [{ ...good, action: 'allow' }, 'action', /refuse, challenge, flag/],
    [{ ...good, conditions: [] }, 'conditions', /1 to 10/],
    [{ ...good, conditions: Array(11).fill(c('amount', 'gt', 1)) }, 'conditions', /1 to 10/],
    [{ ...good, conditions: [{ field: 'pan', op: 'eq', value: '4111' }] }, 'conditions.0.field', /field must be one of amount/],
    [{ ...good, conditions: [{ field: 'amount', op: 'like', value: 1 }] }, 'conditions.0.op', /op must be one of/],
    [{ ...good, conditions: [c('amount', 'gt', -1)] }, 'conditions.0.value', /whole number/],
    [{ ...good, conditions: [c('amount', 'gt', 1.5)] }, 'conditions.0.value', /whole number/],
    [{ ...good, conditions: [{ field: 'currency', op: 'eq', value: '<script>' }] }, 'conditions.0.value', /code/],
    [{ ...good, conditions: [c('amount', 'in', ['1'])] }, 'conditions.0.op', /amount is a number/],
    [{ ...good, conditions: [c('amount', 'gt', '100')] }, 'conditions.0.value', /whole number/],
    [{ ...good, conditions: [c('currency', 'gt', 'EUR')] }, 'conditions.0.op', /currency is a code/],
    [{ ...good, conditions: [c('currency', 'in', 'EUR')] }, 'conditions.0.value', /list of codes/],
    [{ ...good, conditions: [c('currency', 'eq', ['EUR'])] }, 'conditions.0.value', /one code/],
    [{ ...good, conditions: [c('currency', 'eq', 5)] }, 'conditions.0.value', /one code/],
    [{ ...good, extra: 1 }, 'extra', /extra/],
    [null, 'rule', /./],
  ];
  for (const [input, field, message] of bad) {
    const faults = ruleFaults(input);
    assert.ok(faults.length, `refused: ${JSON.stringify(input)}`);
    assert.equal(faults[0]!.field, field, JSON.stringify(input));
    assert.match(faults[0]!.message, message, JSON.stringify(input));
  }
});

const HOLD = { sliceSeconds: 60, slices: 3, minAuthorizations: 10, minPercent: 60, factor: 3, baselineMinutes: 2 };

test('the hold trips when every judged slice is over its bound, and not otherwise', () => {
  const s = (slice: number, sent: number, declined: number) => ({ slice, sent, declined });
  // baseline: slices 0 and 1 (10 % declined); judged: 2, 3, 4
  const base = [s(0, 20, 2), s(1, 20, 2)];
  assert.match(
    judgeSlices(HOLD, [...base, s(2, 10, 9), s(3, 12, 12), s(4, 20, 15)]) ?? '',
    /90 %, 100 %, 75 % of authorizations declined in 3 slices/,
  );
  // one slice with too few authorizations, one missing, one under the bound: no hold
  assert.equal(judgeSlices(HOLD, [...base, s(2, 10, 9), s(3, 9, 9), s(4, 20, 15)]), undefined);
  assert.equal(judgeSlices(HOLD, [...base, s(2, 10, 9), s(4, 20, 15)]), undefined);
  assert.equal(judgeSlices(HOLD, [...base, s(2, 10, 9), s(3, 20, 12), s(4, 20, 15)]), undefined);
  // a project that declines a lot anyway (25 %: bound 75 %) is judged against its own ratio
  assert.equal(judgeSlices(HOLD, [s(0, 20, 5), s(1, 20, 5), s(2, 10, 7), s(3, 10, 7), s(4, 10, 7)]), undefined);
  assert.equal(judgeSlices({ ...HOLD, minAuthorizations: 0 }, [...base, s(2, 10, 9), s(3, 12, 12), s(4, 20, 15)]), undefined);
});

test('three_ds: what 3-D Secure answered; a rule on it waits for 3-D Secure when its other conditions hold, before the first rule that acts', () => {
  assert.deepEqual(['Y', 'A', 'U', 'N', 'R', 'C'].map(threeDsFact), ['passed', 'attempted', 'none', 'failed', 'failed', 'failed']);
  const rule = (id: string, action: Rule['action'], ...conditions: RuleCondition[]): Rule => ({ id, name: id, action, conditions });
  const rules = [
    rule('big-unauthenticated', 'refuse', c('three_ds', 'ne', 'passed'), c('amount', 'gte', 1000)),
    rule('small-only', 'refuse', c('three_ds', 'eq', 'none'), c('amount', 'lt', 10)),
    rule('dollars', 'flag', c('currency', 'eq', 'USD')),
    rule('any', 'flag', c('three_ds', 'eq', 'attempted')),
  ];
  // screening (no three_ds fact): the first rule waits; the second's amount fails; none acts now, so the last waits too
  assert.equal(firstRule(rules, facts), undefined);
  const waiting = pendingRules(rules, facts);
  assert.deepEqual(
    waiting.map((p) => [p.rule_id, p.conditions.map((x) => x.field)]),
    [
      ['big-unauthenticated', ['three_ds']],
      ['any', ['three_ds']],
    ],
  );
  assert.equal(waiting[0]!.reason, 'rule "big-unauthenticated": three_ds ≠ passed and amount ≥ 1000');
  // a rule that acts now ends the list: a later rule would not have been first
  assert.deepEqual(
    pendingRules(rules, { ...facts, currency: 'USD' }).map((p) => p.rule_id),
    ['big-unauthenticated'],
  );
  assert.deepEqual(judgePending(waiting, 'none'), {
    rule: 'merchant_rule',
    rule_id: 'big-unauthenticated',
    action: 'refuse',
    reason: 'rule "big-unauthenticated": three_ds ≠ passed and amount ≥ 1000',
  });
  assert.equal(judgePending(waiting, 'attempted')?.rule_id, 'big-unauthenticated');
  assert.equal(judgePending(waiting, 'passed'), undefined);
  assert.equal(judgePending(waiting.slice(1), 'attempted')?.action, 'flag');
});

test('a rule on three_ds refuses a value outside passed, attempted, none, failed, and the challenge action', () => {
  const base = { name: 'r', action: 'refuse', conditions: [c('three_ds', 'in', ['passed', 'none'])] };
  assert.deepEqual(ruleFaults(base), []);
  assert.deepEqual(ruleFaults({ ...base, conditions: [c('three_ds', 'eq', 'Y')] }), [
    { field: 'conditions.0.value', message: 'three_ds is one of passed, attempted, none, failed' },
  ]);
  assert.deepEqual(ruleFaults({ ...base, action: 'challenge' }), [
    { field: 'action', message: 'a rule on three_ds is judged after 3-D Secure: it may refuse or flag, not challenge' },
  ]);
});
