import type { Queryable } from '../../store/db/db.ts';
import type { TransactionRow } from '../../domain/entities.ts';
import type { Ctx } from '../platform/context.ts';
import * as holders from '../../store/vault/holder-names.ts';
import { dataKeyFor, existingDataKey, openField, sealField, type DataKey } from '../platform/crypto-envelope.ts';

/**
 * Cardholder names on transactions (payment_method_details.cardholder_name) are stored sealed
 * under the project's data key, like the vault's PANs, as `details.cardholder_name_sealed`. The
 * associated data names the project, not the transaction, so a refund or capture can carry the
 * original's sealed name unchanged.
 */
export const SEALED = 'cardholder_name_sealed';
const RECORD = 'transaction-details';

export const sealHolderName = (dk: DataKey, name: string) => sealField(dk, RECORD, 'cardholder_name', name);

/** The names of these transactions in clear, by transaction id, for showing them in the API. */
export async function openHolderNames(
  q: Queryable,
  master: Buffer | undefined,
  txns: Pick<TransactionRow, 'id' | 'project_id' | 'details'>[],
) {
  const names = new Map<string, string>();
  if (!master) return names;
  for (const t of txns) {
    const sealed = t.details?.[SEALED];
    if (typeof sealed !== 'string') continue;
    const dk = await existingDataKey(q, master, t.project_id);
    if (dk) names.set(t.id, openField(dk, RECORD, 'cardholder_name', sealed));
  }
  return names;
}

/**
 * Seals the names migration 085 took out of transactions stored before names were sealed, in
 * batches, each in one database transaction; run at every start, it finds nothing once done.
 */
export async function sealPendingHolderNames(ctx: Ctx): Promise<number> {
  const keys = new Map<string, DataKey>();
  for (const projectId of await holders.pendingProjects(ctx.db)) keys.set(projectId, await dataKeyFor(ctx, projectId));
  let sealed = 0;
  for (;;) {
    const n = await ctx.db.tx(async (q: Queryable) => {
      const batch = await holders.pendingBatch(q, 500);
      for (const row of batch) {
        const dk = keys.get(row.project_id) ?? (await existingDataKey(q, ctx.masterKey, row.project_id));
        if (!dk) throw new Error(`no data key for project ${row.project_id}`);
        await holders.sealInto(q, row.transaction_id, SEALED, sealHolderName(dk, row.name));
      }
      return batch.length;
    });
    sealed += n;
    if (n < 500) return sealed;
  }
}
