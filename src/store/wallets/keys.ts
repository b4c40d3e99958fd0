import type { Queryable } from '../db/db.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** Rows of migration 060_wallets.sql. Private keys are sealed; services/wallets/keys.ts opens them. */

export type WalletBKeyKind = 'recipient' | 'sandbox_root';

export interface WalletBKeyRow {
  id: string;
  project_id: string;
  kind: WalletBKeyKind;
  recipient_id: string | null;
  data_key_id: string;
  private_key_ct: string;
  public_key: string;
  created: Date;
  retired: Date | null;
}

export interface WalletBTokenRow {
  vault_token: string;
  project_id: string;
  transaction_id: string;
  auth_method: 'PAN_ONLY' | 'CRYPTOGRAM_3DS';
  cryptogram_mac: string | null;
  message_id: string | null;
  created: Date;
}

export interface WalletAIdentityRow {
  project_id: string;
  data_key_id: string;
  certificate: string;
  private_key_ct: string;
  created: Date;
  modified: Date;
}

/** The project's unretired keys of a kind, newest first. */
export async function activeKeys(q: Queryable, projectId: ProjectId, kind: WalletBKeyKind): Promise<WalletBKeyRow[]> {
  return q.query<WalletBKeyRow>(
    'SELECT * FROM wallet_b_keys WHERE project_id = $1 AND kind = $2 AND retired IS NULL ORDER BY created DESC, id',
    [projectId, kind],
  );
}

/** Inserts a key; ignored when the project already has an active key of the kind (a racing node made one). */
export async function insertKey(q: Queryable, k: Omit<WalletBKeyRow, 'retired'>) {
  await q.query(
    `INSERT INTO wallet_b_keys (id, project_id, kind, recipient_id, data_key_id, private_key_ct, public_key, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
    [k.id, k.project_id, k.kind, k.recipient_id, k.data_key_id, k.private_key_ct, k.public_key, k.created],
  );
}

/** Retires every key of a kind but the one named (rotation, or an imported key). */
export async function retireKeys(q: Queryable, projectId: ProjectId, kind: WalletBKeyKind, exceptId: string, now: Date) {
  await q.query('UPDATE wallet_b_keys SET retired = $4 WHERE project_id = $1 AND kind = $2 AND id <> $3 AND retired IS NULL', [
    projectId,
    kind,
    exceptId,
    now,
  ]);
}

export async function setRecipientId(q: Queryable, projectId: ProjectId, recipientId: string) {
  await q.query("UPDATE wallet_b_keys SET recipient_id = $2 WHERE project_id = $1 AND kind = 'recipient' AND retired IS NULL", [
    projectId,
    recipientId,
  ]);
}

export async function findToken(q: Queryable, projectId: ProjectId, vaultToken: string): Promise<WalletBTokenRow | undefined> {
  return (
    await q.query<WalletBTokenRow>('SELECT * FROM wallet_b_tokens WHERE project_id = $1 AND vault_token = $2', [projectId, vaultToken])
  )[0];
}

export async function messageSeen(q: Queryable, projectId: ProjectId, messageId: string): Promise<boolean> {
  return (await q.query('SELECT 1 FROM wallet_b_tokens WHERE project_id = $1 AND message_id = $2', [projectId, messageId])).length > 0;
}

/** Records a tokenized card; a messageId another request recorded first is left as it was. */
export async function insertToken(q: Queryable, t: WalletBTokenRow) {
  await q.query(
    `INSERT INTO wallet_b_tokens (vault_token, project_id, transaction_id, auth_method, cryptogram_mac, message_id, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
    [t.vault_token, t.project_id, t.transaction_id, t.auth_method, t.cryptogram_mac, t.message_id, t.created],
  );
}

export async function findIdentity(q: Queryable, projectId: ProjectId): Promise<WalletAIdentityRow | undefined> {
  return (await q.query<WalletAIdentityRow>('SELECT * FROM wallet_a_identities WHERE project_id = $1', [projectId]))[0];
}

export async function upsertIdentity(q: Queryable, r: Omit<WalletAIdentityRow, 'created' | 'modified'>, now: Date) {
  await q.query(
    `INSERT INTO wallet_a_identities (project_id, data_key_id, certificate, private_key_ct, created, modified)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (project_id) DO UPDATE SET data_key_id = $2, certificate = $3, private_key_ct = $4, modified = $5`,
    [r.project_id, r.data_key_id, r.certificate, r.private_key_ct, now],
  );
}

// ---- wallet-a-pay payment tokens (070_wallet_a_payments.sql) ---------------------------

export type WalletAKeyKind = 'processing' | 'sandbox_signer';

export interface WalletAKeyRow {
  id: string;
  project_id: string;
  kind: WalletAKeyKind;
  data_key_id: string;
  private_key_ct: string;
  public_key_hash: string | null;
  public_pem: string;
  created: Date;
  retired: Date | null;
}

export async function activeWalletAKey(q: Queryable, projectId: ProjectId, kind: WalletAKeyKind): Promise<WalletAKeyRow | undefined> {
  return (
    await q.query<WalletAKeyRow>('SELECT * FROM wallet_a_keys WHERE project_id = $1 AND kind = $2 AND retired IS NULL', [projectId, kind])
  )[0];
}

/** Inserts a key, retiring the active one of its kind when `replace`; without it a key a racing node made first wins. */
export async function insertWalletAKey(q: Queryable, k: Omit<WalletAKeyRow, 'retired'>, replace: boolean) {
  if (replace)
    await q.query('UPDATE wallet_a_keys SET retired = $3 WHERE project_id = $1 AND kind = $2 AND retired IS NULL', [
      k.project_id,
      k.kind,
      k.created,
    ]);
  await q.query(
    `INSERT INTO wallet_a_keys (id, project_id, kind, data_key_id, private_key_ct, public_key_hash, public_pem, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
    [k.id, k.project_id, k.kind, k.data_key_id, k.private_key_ct, k.public_key_hash, k.public_pem, k.created],
  );
}

export async function walletATokenSeen(q: Queryable, projectId: ProjectId, tokenId: string): Promise<boolean> {
  return (await q.query('SELECT 1 FROM wallet_a_tokens WHERE project_id = $1 AND token_id = $2', [projectId, tokenId])).length > 0;
}

/** Records a token's card; false when another request recorded the same token first. */
export async function insertWalletAToken(
  q: Queryable,
  t: { vault_token: string; project_id: string; transaction_id: string; token_id: string; created: Date },
): Promise<boolean> {
  const rows = await q.query(
    'INSERT INTO wallet_a_tokens (vault_token, project_id, transaction_id, token_id, created) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING vault_token',
    [t.vault_token, t.project_id, t.transaction_id, t.token_id, t.created],
  );
  return rows.length === 1;
}
