import type { Queryable } from '../db/db.ts';
import type { Part } from '../db/writes.ts';
import type { VaultCardRow } from '../vault/cards.ts';

/** The 3DS Method of a transaction's lookup (migration 326, services/threeds/method.ts). */

export interface MethodRow {
  project_id: string;
  transaction_id: string;
  server_trans_id: string;
  method_url: string;
  vault_token: string;
  cvc_ct: string | null;
  shopper: Record<string, unknown>;
  created: Date;
  notified_at: Date | null;
  finished_at: Date | null;
  comp_ind: 'Y' | 'N' | null;
}

/** The card stored for a transaction and the transaction's state, when both are the project's. */
export async function methodTarget(
  q: Queryable,
  projectId: string,
  transactionId: string,
  vaultToken: string,
): Promise<{ card: VaultCardRow; status: string; expires_at: Date | null; payment_method: string } | undefined> {
  const [r] = await q.query<VaultCardRow & { txn_status: string; txn_expires_at: Date | null; txn_method: string }>(
    `SELECT v.*, t.status AS txn_status, t.expires_at AS txn_expires_at, t.payment_method AS txn_method
       FROM transactions t JOIN vault_cards v ON v.project_id = t.project_id AND v.id = $3 AND v.transaction_id = t.id
      WHERE t.project_id = $1 AND t.id = $2`,
    [projectId, transactionId, vaultToken],
  );
  if (!r) return undefined;
  const { txn_status, txn_expires_at, txn_method, ...card } = r;
  return {
    card: card as VaultCardRow,
    status: txn_status,
    expires_at: txn_expires_at ? new Date(txn_expires_at) : null,
    payment_method: txn_method,
  };
}

/** A method begun: the transaction's row made, or replaced when one was left unfinished. */
export async function beginMethod(
  q: Queryable,
  m: Pick<MethodRow, 'project_id' | 'transaction_id' | 'server_trans_id' | 'method_url' | 'vault_token' | 'cvc_ct' | 'shopper'>,
): Promise<void> {
  await q.query(
    `INSERT INTO threeds_methods (project_id, transaction_id, server_trans_id, method_url, vault_token, cvc_ct, shopper)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
     ON CONFLICT (project_id, transaction_id) DO UPDATE SET server_trans_id = EXCLUDED.server_trans_id, method_url = EXCLUDED.method_url,
       vault_token = EXCLUDED.vault_token, cvc_ct = EXCLUDED.cvc_ct, shopper = EXCLUDED.shopper, created = now(),
       notified_at = NULL, finished_at = NULL, comp_ind = NULL`,
    [m.project_id, m.transaction_id, m.server_trans_id, m.method_url, m.vault_token, m.cvc_ct, JSON.stringify(m.shopper)],
  );
}

/** The transaction's method (by transaction id alone: the 3-D Secure page's routes know no project). */
export async function findMethod(q: Queryable, transactionId: string): Promise<MethodRow | undefined> {
  return (await q.query<MethodRow>('SELECT * FROM threeds_methods WHERE transaction_id = $1', [transactionId]))[0];
}

/** The ACS's notification for `serverTransId`, noted once and only before the method finished; whether it was taken. */
export async function noteNotified(q: Queryable, transactionId: string, serverTransId: string): Promise<boolean> {
  const r = await q.query(
    `UPDATE threeds_methods SET notified_at = now()
      WHERE transaction_id = $1 AND server_trans_id = $2 AND finished_at IS NULL AND notified_at IS NULL RETURNING 1`,
    [transactionId, serverTransId],
  );
  return r.length > 0;
}

/**
 * The page's go-ahead: the method finished, Y when the ACS's notification came, else N; the CVC
 * handed out once and dropped. Undefined when there is no unfinished method.
 */
export async function finishMethod(q: Queryable, transactionId: string): Promise<(MethodRow & { order_id: string }) | undefined> {
  const [r] = await q.query<MethodRow & { order_id: string }>(
    `WITH old AS (SELECT * FROM threeds_methods WHERE transaction_id = $1 AND finished_at IS NULL FOR UPDATE)
     UPDATE threeds_methods m SET finished_at = now(), comp_ind = CASE WHEN old.notified_at IS NULL THEN 'N' ELSE 'Y' END, cvc_ct = NULL
       FROM old, transactions t
      WHERE m.project_id = old.project_id AND m.transaction_id = old.transaction_id AND t.project_id = old.project_id AND t.id = old.transaction_id
      RETURNING m.project_id, m.transaction_id, m.server_trans_id, m.method_url, m.vault_token, old.cvc_ct, m.shopper, m.created,
        m.notified_at, m.finished_at, m.comp_ind, t.order_id`,
    [transactionId],
  );
  return r;
}

/** A finished method taken by the lookup it was for (removed: a later lookup runs a method of its own). */
export async function takeFinishedMethod(
  q: Queryable,
  projectId: string,
  transactionId: string,
): Promise<Pick<MethodRow, 'server_trans_id' | 'comp_ind'> | undefined> {
  return (
    await q.query<Pick<MethodRow, 'server_trans_id' | 'comp_ind'>>(
      `DELETE FROM threeds_methods WHERE project_id = $1 AND transaction_id = $2 AND finished_at IS NOT NULL
       RETURNING server_trans_id, comp_ind`,
      [projectId, transactionId],
    )
  )[0];
}

/** An order's methods lose their sealed CVC, as a part of one statement (the order ended). */
export const methodCvcOfOrderPart = (projectId: string, orderId: string): Part => ({
  sql: `UPDATE threeds_methods SET cvc_ct = NULL WHERE project_id = $1::uuid AND cvc_ct IS NOT NULL
          AND transaction_id IN (SELECT id FROM transactions WHERE project_id = $1::uuid AND order_id = $2::uuid)`,
  params: [projectId, orderId],
});
