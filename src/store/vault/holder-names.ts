import type { Queryable } from '../db/db.ts';
import type { TransactionId } from '../../domain/ids.ts';

/** Names migration 085 set aside for sealing (see services/vault/holder-names.ts). */
export interface PendingName {
  transaction_id: string;
  project_id: string;
  name: string;
}

export const pendingProjects = async (q: Queryable) =>
  (await q.query<{ project_id: string }>('SELECT DISTINCT project_id FROM holder_names_to_seal')).map((r) => r.project_id);

export const pendingBatch = (q: Queryable, limit: number) =>
  q.query<PendingName>(
    'SELECT transaction_id, project_id, name FROM holder_names_to_seal ORDER BY transaction_id LIMIT $1 FOR UPDATE SKIP LOCKED',
    [limit],
  );

/** Writes the sealed name into the transaction's details and forgets the clear one. */
export async function sealInto(q: Queryable, transactionId: TransactionId, key: string, sealed: string) {
  await q.query('UPDATE transactions SET details = details || jsonb_build_object($2::text, $3::text) WHERE id = $1', [
    transactionId,
    key,
    sealed,
  ]);
  await q.query('DELETE FROM holder_names_to_seal WHERE transaction_id = $1', [transactionId]);
}
