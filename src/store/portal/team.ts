import type { Queryable } from '../db/db.ts';
import type { Role } from '../../domain/roles.ts';
import type { MerchantId } from '../../domain/ids.ts';

/** Statements of the portal's team: users and roles, one-time invitations, the second-factor rule. */

export interface TeamMember {
  id: string;
  email: string;
  role: Role;
  totp: boolean;
  created: Date;
}

export async function membersOf(q: Queryable, merchantId: MerchantId): Promise<TeamMember[]> {
  return q.query<TeamMember>(
    'SELECT id, email, role, totp_secret_ct IS NOT NULL AS totp, created FROM portal_users WHERE merchant_id = $1 ORDER BY created, id',
    [merchantId],
  );
}

/** Locks the merchant's users (changes of roles serialise, so the last owner can not be lost by a race). */
export async function lockMembers(q: Queryable, merchantId: MerchantId): Promise<TeamMember[]> {
  return q.query<TeamMember>(
    'SELECT id, email, role, totp_secret_ct IS NOT NULL AS totp, created FROM portal_users WHERE merchant_id = $1 ORDER BY created, id FOR UPDATE',
    [merchantId],
  );
}

export async function setRole(q: Queryable, merchantId: MerchantId, userId: string, role: Role): Promise<boolean> {
  const rows = await q.query('UPDATE portal_users SET role = $3 WHERE merchant_id = $1 AND id = $2 RETURNING id', [
    merchantId,
    userId,
    role,
  ]);
  return rows.length > 0;
}

/** Removes a user; their sessions and action tokens go with them (ON DELETE CASCADE). */
export async function deleteUser(q: Queryable, merchantId: MerchantId, userId: string): Promise<boolean> {
  const rows = await q.query('DELETE FROM portal_users WHERE merchant_id = $1 AND id = $2 RETURNING id', [merchantId, userId]);
  return rows.length > 0;
}

export async function insertUserWithRole(
  q: Queryable,
  u: { id: string; merchant_id: string; email: string; password_hash: string; role: Role },
): Promise<boolean> {
  const rows = await q.query(
    'INSERT INTO portal_users (id, merchant_id, email, password_hash, role) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (email) DO NOTHING RETURNING id',
    [u.id, u.merchant_id, u.email, u.password_hash, u.role],
  );
  return rows.length > 0;
}

export interface InviteRow {
  token_hash: string;
  merchant_id: string;
  email: string;
  role: Role;
  created_by: string | null;
  created: Date;
  expires: Date;
  used: Date | null;
}

export async function insertInvite(q: Queryable, i: Omit<InviteRow, 'created' | 'used'>) {
  await q.query('INSERT INTO portal_invites (token_hash, merchant_id, email, role, created_by, expires) VALUES ($1, $2, $3, $4, $5, $6)', [
    i.token_hash,
    i.merchant_id,
    i.email,
    i.role,
    i.created_by,
    i.expires,
  ]);
}

/** The open invitation behind a link (not used, not expired). */
export async function openInvite(q: Queryable, tokenHash: string, now: Date): Promise<InviteRow | undefined> {
  return (
    await q.query<InviteRow>('SELECT * FROM portal_invites WHERE token_hash = $1 AND used IS NULL AND expires > $2', [tokenHash, now])
  )[0];
}

/** Uses the invitation up; undefined when it was used, expired or never existed (so it works once). */
export async function takeInvite(q: Queryable, tokenHash: string, now: Date): Promise<InviteRow | undefined> {
  return (
    await q.query<InviteRow>('UPDATE portal_invites SET used = $2 WHERE token_hash = $1 AND used IS NULL AND expires > $2 RETURNING *', [
      tokenHash,
      now,
    ])
  )[0];
}

export async function pendingInvites(q: Queryable, merchantId: MerchantId, now: Date): Promise<InviteRow[]> {
  return q.query<InviteRow>(
    'SELECT * FROM portal_invites WHERE merchant_id = $1 AND used IS NULL AND expires > $2 ORDER BY created DESC LIMIT 50',
    [merchantId, now],
  );
}

export async function requiresTotp(q: Queryable, merchantId: MerchantId): Promise<boolean> {
  const rows = await q.query<{ r: boolean }>('SELECT portal_require_totp AS r FROM merchants WHERE id = $1', [merchantId]);
  return rows[0]?.r === true;
}

export async function setRequireTotp(q: Queryable, merchantId: MerchantId, on: boolean) {
  await q.query('UPDATE merchants SET portal_require_totp = $2 WHERE id = $1', [merchantId, on]);
}
