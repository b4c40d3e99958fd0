import { Type, type Static } from '@sinclair/typebox';
import { Enum } from './common.ts';
import { LIMITS, OTHER_RULES, RISK_ACTIONS } from '../risk/limits.ts';
import { LIST_RULES } from '../risk/lists.ts';
import { RuleCondition } from '../risk/rules.ts';

/**
 * A card transaction's `risk` object (docs/risk.md): the velocity limits' decision on it and the
 * rules behind it. The customer never sees it; the hosted pages say only that the payment was
 * refused.
 */
export const RiskView = Type.Object(
  {
    action: Enum(['pass', ...RISK_ACTIONS], {
      description:
        'refuse: declined (reason authentication_failed), never sent to the acquirer; challenge: 3-D Secure with a challenge mandated; flag: passed, for review',
    }),
    rules: Type.Array(
      Type.Object({
        rule: Enum([...LIMITS.map((l) => l.rule), ...LIST_RULES, ...OTHER_RULES], {
          description:
            "a velocity limit's name, a list's (blocklist_*, allowlist_*, platform_*), merchant_rule (a rule the merchant wrote: rule_id) or platform_hold (the operator's hold)",
        }),
        rule_id: Type.Optional(Type.String({ format: 'uuid', description: "the merchant's rule, for merchant_rule" })),
        action: Enum(['pass', ...RISK_ACTIONS], { description: 'pass: an allowlist let the payment past the velocity limits' }),
        reason: Type.String({ description: 'what was counted, against which limit; or which list the payment is on' }),
      }),
      { description: 'every rule that fired; action is the strongest of theirs' },
    ),
    card_country: Type.Optional(
      Type.String({
        pattern: '^[A-Z]{2}$',
        description: "the card's issuing country (ISO 3166 alpha-2) from the BIN table; absent when the table has no line for its BIN",
      }),
    ),
    pending: Type.Optional(
      Type.Array(
        Type.Object({
          rule_id: Type.String({ format: 'uuid' }),
          action: Enum([...RISK_ACTIONS]),
          reason: Type.String(),
          conditions: Type.Array(RuleCondition),
        }),
        {
          description:
            "the merchant's rules on three_ds whose other conditions held, to be judged once 3-D Secure has answered, before the authorization is sent; gone once judged",
        },
      ),
    ),
    screened: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Risk',
    examples: [
      {
        action: 'refuse',
        rules: [{ rule: 'address_attempts', action: 'refuse', reason: '11 attempts by this address within 10 minutes (at most 10)' }],
        card_country: 'US',
        screened: '2026-12-01T12:00:00.000Z',
      },
    ],
  },
);
export type RiskView = Static<typeof RiskView>;
