// The labels of tender_risk_decisions_total (docs/operations.md): whatever the limits decide, the
// decision and the rule come from fixed sets, so the metric's series are bounded and name no
// project, card or address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LIMITS, RISK_ACTIONS, RULES, riskDecisionLabels, type RiskHit } from '../../src/domain/risk/limits.ts';
import { BLOCK_RULES } from '../../src/domain/risk/lists.ts';

const hit = (rule: string, action: RiskHit['action']): RiskHit => ({ rule, action, reason: `${rule} fired` });

test('a decision is labelled with its action and the first rule of that action; pass with none', () => {
  assert.deepEqual(riskDecisionLabels({ action: 'pass', rules: [] }), { decision: 'pass', rule: 'none' });
  // a refusal by the address and its network, with a challenge beside it: the first refusing rule
  const mixed = [hit('guest_attempts', 'challenge'), hit('address_attempts', 'refuse'), hit('network_attempts', 'refuse')];
  assert.deepEqual(riskDecisionLabels({ action: 'refuse', rules: mixed }), { decision: 'refuse', rule: 'address_attempts' });
  assert.deepEqual(riskDecisionLabels({ action: 'challenge', rules: [hit('customer_attempts', 'challenge')] }), {
    decision: 'challenge',
    rule: 'customer_attempts',
  });
  for (const l of LIMITS)
    assert.deepEqual(riskDecisionLabels({ action: l.action, rules: [hit(l.rule, l.action)] }), { decision: l.action, rule: l.rule });
});

test('a rule name outside the fixed list never becomes a label value', () => {
  // e.g. a future rule written by a merchant, or text that is no rule: it counts under none
  for (const rule of ['b3f1c2d4-0000-4000-8000-000000000000', 'merchant rule 7', ''])
    assert.deepEqual(riskDecisionLabels({ action: 'refuse', rules: [hit(rule, 'refuse')] }), { decision: 'refuse', rule: 'none' });
});

test('the label values are a small fixed set: every rule of the list, none, and the four decisions', () => {
  const rules = new Set<string>();
  const decisions = new Set<string>();
  for (const action of [...RISK_ACTIONS, 'pass'] as const)
    // the limits, and the lists' blocks (their allows only ever pass)
    for (const l of [...LIMITS, ...BLOCK_RULES.map((rule) => ({ rule })), undefined]) {
      const labels = riskDecisionLabels({ action, rules: l ? [hit(l.rule, action === 'pass' ? 'flag' : action)] : [] });
      rules.add(labels.rule);
      decisions.add(labels.decision);
    }
  assert.deepEqual([...decisions].sort(), ['challenge', 'flag', 'pass', 'refuse']);
  assert.deepEqual([...rules].sort(), [...RULES, 'none'].sort());
  assert.ok(
    RULES.every((r) => /^[a-z_]+$/.test(r)),
    'rule names are fixed identifiers',
  );
});

test("tender_risk_allows_total's labels: the first allow hit's scope and kind; none when no allowlist had its say", async () => {
  const { allowLabels, applyLists, ALLOW_LABELS } = await import('../../src/domain/risk/lists.ts');
  const limits = { action: 'refuse' as const, rules: [hit('card_attempts', 'refuse')] };
  const allowEmail = { scope: 'project', list: 'allow', kind: 'email' } as const;
  const allowNet = { scope: 'platform', list: 'allow', kind: 'network' } as const;
  assert.deepEqual(allowLabels(applyLists([allowNet, allowEmail], limits)), { scope: 'project', kind: 'email' });
  assert.deepEqual(allowLabels(applyLists([allowNet], limits)), { scope: 'platform', kind: 'network' });
  // a platform block wins over the allow: no allow is counted
  assert.equal(allowLabels(applyLists([allowEmail, { scope: 'platform', list: 'block', kind: 'card' }], limits)), undefined);
  assert.equal(allowLabels(applyLists([], limits)), undefined);
  assert.equal(allowLabels({ rules: [hit('allowlist_colour', 'pass'), hit('allowlist_email', 'flag')] }), undefined);
  assert.equal(ALLOW_LABELS.length, 12);
});
