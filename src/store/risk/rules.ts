import type { Queryable } from '../db/db.ts';
import { CARD } from '../../domain/payment-methods.ts';
import type { RuleCondition } from '../../domain/risk/rules.ts';
import type { RiskAction } from '../../domain/risk/limits.ts';

/** A project's rules (docs/risk.md "Rules a merchant writes"), in their order. */
export interface RuleRow {
  id: string;
  project_id: string;
  position: number;
  name: string;
  action: RiskAction;
  conditions: RuleCondition[];
  enabled: boolean;
  created: Date;
  modified: Date;
}

export const rulesOf = (q: Queryable, projectId: string) =>
  q.query<RuleRow>('SELECT * FROM risk_rules WHERE project_id = $1 ORDER BY position, created', [projectId]);

export async function ruleById(q: Queryable, projectId: string, id: string): Promise<RuleRow | undefined> {
  const [r] = await q.query<RuleRow>('SELECT * FROM risk_rules WHERE project_id = $1 AND id = $2', [projectId, id]);
  return r;
}

/** Adds a rule, off, after the project's others (at most `max`: answers undefined beyond). */
export async function insertRule(
  q: Queryable,
  r: Pick<RuleRow, 'id' | 'project_id' | 'name' | 'action' | 'conditions' | 'created'>,
  max: number,
): Promise<RuleRow | undefined> {
  const [row] = await q.query<RuleRow>(
    `INSERT INTO risk_rules (id, project_id, position, name, action, conditions, enabled, created, modified)
     SELECT $1, $2, COALESCE(max(position), 0) + 1, $3, $4, $5::jsonb, false, $6, $6 FROM risk_rules WHERE project_id = $2
     HAVING count(*) < $7
     RETURNING *`,
    [r.id, r.project_id, r.name, r.action, JSON.stringify(r.conditions), r.created, max],
  );
  return row;
}

export async function setEnabled(q: Queryable, projectId: string, id: string, enabled: boolean, now: Date) {
  const rows = await q.query('UPDATE risk_rules SET enabled = $3, modified = $4 WHERE project_id = $1 AND id = $2 RETURNING id', [
    projectId,
    id,
    enabled,
    now,
  ]);
  return rows.length > 0;
}

/** Swaps a rule with its neighbour before (-1) or after (+1) it. */
export async function moveRule(q: Queryable, projectId: string, id: string, by: -1 | 1, now: Date) {
  const rows = await q.query(
    `WITH me AS (SELECT id, position FROM risk_rules WHERE project_id = $1 AND id = $2),
     other AS (
       SELECT r.id, r.position FROM risk_rules r, me
        WHERE r.project_id = $1 AND (CASE WHEN $3 < 0 THEN r.position < me.position ELSE r.position > me.position END)
        ORDER BY CASE WHEN $3 < 0 THEN -r.position ELSE r.position END LIMIT 1
     )
     UPDATE risk_rules r SET position = CASE WHEN r.id = me.id THEN other.position ELSE me.position END, modified = $4
       FROM me, other WHERE r.project_id = $1 AND r.id IN (me.id, other.id) RETURNING r.id`,
    [projectId, id, by, now],
  );
  return rows.length > 0;
}

export async function deleteRule(q: Queryable, projectId: string, id: string) {
  const rows = await q.query('DELETE FROM risk_rules WHERE project_id = $1 AND id = $2 RETURNING id', [projectId, id]);
  return rows.length > 0;
}

/** A past card payment as the dry run replays it. */
export interface PastPayment {
  transaction_id: string;
  order_id: string;
  merchant_order_id: string | null;
  amount: number;
  currency: string;
  payment_method: string | null;
  brand: string | null;
  address_country: string | null;
  /** the card's issuing country as its screening found it (transactions.risk); null when not known or not kept */
  card_country: string | null;
  /** what 3-D Secure answered (outcomes.three_d_secure); null when it did not */
  trans_status: string | null;
  created: Date;
}

/** The project's card payments since `since`, newest first, at most `limit`. */
export const pastCardPayments = (q: Queryable, projectId: string, since: Date, limit: number) =>
  q.query<PastPayment>(
    `SELECT t.id AS transaction_id, t.order_id, o.merchant_order_id, t.amount, t.currency, t.payment_method,
            t.payment_method_brand AS brand, o.body->'customer'->>'country' AS address_country,
            t.risk->>'card_country' AS card_country, t.outcomes->'three_d_secure'->>'trans_status' AS trans_status, t.created
       FROM transactions t JOIN orders o ON o.id = t.order_id AND o.project_id = t.project_id
      WHERE t.project_id = $1 AND t.created >= $2 AND t.payment_method = $4 AND t.credit_debit = 'credit'
      ORDER BY t.created DESC LIMIT $3`,
    [projectId, since, limit, CARD],
  );

/** A card transaction's `risk` object, replaced once its rules on three_ds were judged after 3-D Secure. */
export async function setRisk(q: Queryable, projectId: string, transactionId: string, risk: unknown) {
  await q.query('UPDATE transactions SET risk = $3::jsonb WHERE project_id = $1 AND id = $2', [
    projectId,
    transactionId,
    JSON.stringify(risk),
  ]);
}
