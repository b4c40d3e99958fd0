import type { Ctx } from '../platform/context.ts';
import type { Outcome } from '../../acquirer/connector.ts';
import type { TransactionRow } from '../../domain/entities.ts';
import { judgePending, threeDsFact } from '../../domain/risk/rules.ts';
import { setRisk } from '../../store/risk/rules.ts';
import type { RiskView } from './screen.ts';

/**
 * Rules on `three_ds` (docs/risk.md "Rules a merchant writes"): the screening, before 3-D Secure,
 * keeps the ones it could not decide in the `risk` object (`pending`); once 3-D Secure has
 * answered, just before the authorization is sent, they are judged on its answer. A refusal
 * declines the payment, which is never sent to the acquirer; a flag is added to the decision.
 */

/** The decline of a payment a rule refused after 3-D Secure: as the limits' refusals, authentication_failed. */
const REFUSED_AFTER_3DS: Outcome = {
  status: 'declined',
  reason: 'authentication_failed',
  response_code: 'RISK-REFUSED',
  response_code_description: 'refused by a risk rule after 3-D Secure; not sent to the acquirer',
};

/**
 * Judges the transaction's pending rules on what 3-D Secure answered (`trans_status`). Answers
 * the refusal to apply instead of sending the authorization, or undefined: send it. Without
 * pending rules it does nothing (no statement); with them it writes the `risk` object as judged.
 */
export async function judgeAfterThreeDs(
  ctx: Ctx,
  txn: Pick<TransactionRow, 'id' | 'project_id' | 'risk'>,
  three: { trans_status: string },
): Promise<{ outcome: Outcome } | undefined> {
  const risk = txn.risk as RiskView | null | undefined;
  if (!risk?.pending?.length) return undefined;
  const { pending, ...judged } = risk;
  const hit = judgePending(pending, threeDsFact(three.trans_status));
  const strength = { pass: 0, flag: 1, challenge: 2, refuse: 3 };
  const after: RiskView = hit
    ? { ...judged, action: strength[hit.action] > strength[judged.action] ? hit.action : judged.action, rules: [...judged.rules, hit] }
    : judged;
  await setRisk(ctx.db, txn.project_id, txn.id, after);
  return hit?.action === 'refuse' ? { outcome: REFUSED_AFTER_3DS } : undefined;
}
