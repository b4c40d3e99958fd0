import type { Queryable } from '../db/db.ts';
import type { Part, WriteSet } from '../db/writes.ts';
import type { EmvResult, TransStatus } from '../../domain/card.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';
import type { OrderId, ProjectId, TransactionId } from '../../domain/ids.ts';

/** A stored card: PAN, name and CVC only sealed (services/platform/crypto-envelope.ts). */
export interface VaultCardRow {
  id: string;
  project_id: string;
  transaction_id: string;
  data_key_id: string;
  pan_ct: string;
  name_ct: string | null;
  fingerprint: string;
  expiry: string;
  truncated_pan: string;
  brand: string;
  brands: string[];
  cvc_ct: string | null;
  created: Date;
}

/** A card transaction's 3-D Secure and authorization, between starting and authorizing. */
export interface CardAuthRow {
  transaction_id: string;
  project_id: string;
  vault_token: string;
  trans_status: TransStatus;
  eci: string | null;
  /** EMV 3-D Secure's ids and authentication value (live projects), null otherwise */
  emv: EmvResult | null;
  acquirer_reference: string | null;
  created: Date;
  modified: Date;
}

// ---- vault_cards ---------------------------------------------------------------------------

/**
 * Stores a card for the transaction whose setup_token it names, in one statement, only while
 * that token is unused, of `projectId`, its transaction new and created at or after `cutoff`:
 * the token is marked used and the card inserted, or nothing is written (false).
 */
export async function storeCardOnce(
  q: Queryable,
  use: { token: string; projectId: ProjectId; now: Date; cutoff: Date },
  row: Omit<VaultCardRow, 'cvc_ct' | 'transaction_id'>,
): Promise<boolean> {
  const [{ n }] = await q.query<{ n: number }>(
    `WITH used AS (
       UPDATE transactions SET setup_token_used = $3
       WHERE setup_token = $1 AND project_id = $2 AND setup_token_used IS NULL AND status = 'new' AND created >= $4
       RETURNING id),
     card AS (
       INSERT INTO vault_cards (id, project_id, transaction_id, data_key_id, pan_ct, name_ct, fingerprint, expiry, truncated_pan, brand, brands, created)
       SELECT c.id, c.project_id, used.id, c.data_key_id, c.pan_ct, c.name_ct, c.fingerprint, c.expiry, c.truncated_pan, c.brand, c.brands, c.created
       FROM used, jsonb_populate_record(NULL::vault_cards, $5::jsonb) c)
     SELECT count(*)::int AS n FROM used`,
    [use.token, use.projectId, use.now, use.cutoff, JSON.stringify(row)],
    { prepare: 'store_card_once' },
  );
  return n > 0;
}

/** The stored card of a transaction, locked when asked. */
export async function findVaultCard(
  q: Queryable,
  projectId: ProjectId,
  vaultToken: string,
  lock = false,
): Promise<VaultCardRow | undefined> {
  return (
    await q.query<VaultCardRow>(`SELECT * FROM vault_cards WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [
      projectId,
      vaultToken,
    ])
  )[0];
}

/** An order's sealed CVCs dropped, as a part of one statement (store/db/writes.ts). */
export const cvcOfOrderPart = (projectId: ProjectId, orderId: OrderId): Part => ({
  sql: `UPDATE vault_cards SET cvc_ct = NULL WHERE project_id = $1 AND cvc_ct IS NOT NULL
       AND transaction_id IN (SELECT id FROM transactions WHERE project_id = $1 AND order_id = $2)`,
  params: [projectId, orderId],
});

// ---- card_authentications ------------------------------------------------------------------

/** A card transaction's 3-D Secure, decided as it starts, gathered in a step's one statement (store/db/writes.ts). */
export const addCardAuth = (w: WriteSet, row: CardAuthRow) => w.insert('card_authentications', row);

/** What the authorization learns: the challenge's result, the acquirer's reference. */
export const changeCardAuth = (
  w: WriteSet,
  transactionId: TransactionId,
  change: Partial<Pick<CardAuthRow, 'trans_status' | 'eci' | 'emv' | 'acquirer_reference' | 'modified'>>,
) => w.update('card_authentications', transactionId, change, 'transaction_id');

/** A card's sealed CVC, kept until the authorization (null: dropped), gathered in a step's one statement. */
export const changeSealedCvc = (w: WriteSet, cardId: string, cvcCt: string | null) => w.update('vault_cards', cardId, { cvc_ct: cvcCt });

/**
 * The RReq of a live challenge, kept with its 3-D Secure: only the first (a duplicate RReq finds
 * one there and changes nothing). True when this one was kept.
 */
export async function recordRreq(
  q: Queryable,
  projectId: ProjectId,
  transactionId: TransactionId,
  rreq: NonNullable<EmvResult['rreq']>,
): Promise<boolean> {
  const rows = await q.query(
    `UPDATE card_authentications SET emv = emv || jsonb_build_object('rreq', $3::jsonb)
      WHERE project_id = $1 AND transaction_id = $2 AND emv IS NOT NULL AND emv->'rreq' IS NULL RETURNING transaction_id`,
    [projectId, transactionId, JSON.stringify(rreq)],
  );
  return rows.length > 0;
}

export async function findCardAuth(
  q: Queryable,
  projectId: ProjectId,
  transactionId: TransactionId,
  lock = false,
): Promise<CardAuthRow | undefined> {
  return (
    await q.query<CardAuthRow>(
      `SELECT * FROM card_authentications WHERE project_id = $1 AND transaction_id = $2${lock ? ' FOR UPDATE' : ''}`,
      [projectId, transactionId],
    )
  )[0];
}

export interface VaultTarget {
  txn: Pick<TransactionRow, 'id' | 'project_id' | 'status' | 'setup_token' | 'setup_token_used' | 'created'>;
  project: Pick<ProjectRow, 'id' | 'clock_offset_ms'>;
}

/** The transaction a setup_token belongs to, with what the vault needs of its project. */
export async function vaultTarget(q: Queryable, token: string): Promise<VaultTarget | undefined> {
  const [row] = await q.query<{
    id: string;
    project_id: string;
    status: TransactionRow['status'];
    setup_token: string;
    setup_token_used: Date | null;
    created: Date;
    clock_offset_ms: number;
  }>(
    `SELECT t.id, t.project_id, t.status, t.setup_token, t.setup_token_used, t.created, p.clock_offset_ms
     FROM transactions t JOIN projects p ON p.id = t.project_id WHERE t.setup_token = $1`,
    [token],
    { prepare: 'vault_target' },
  );
  if (!row) return undefined;
  const { clock_offset_ms, ...txn } = row;
  return { txn, project: { id: row.project_id, clock_offset_ms } };
}

declare module '../db/writes.ts' {
  interface Tables {
    vault_cards: VaultCardRow;
    card_authentications: CardAuthRow;
  }
}
