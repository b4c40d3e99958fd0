import type { Queryable } from '../db/db.ts';
import { PROJECTS_CHANNEL } from '../platform/projects.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { Role } from '../../domain/roles.ts';
import type { MerchantId, ProjectId } from '../../domain/ids.ts';

/** Every statement of the merchant portal: users, sessions, actions, audit, and its reads. */

export interface PortalUserRow {
  id: string;
  merchant_id: string;
  email: string;
  password_hash: string;
  totp_secret_ct: string | null;
  totp_pending_ct: string | null;
  totp_last_counter: number;
  /** migrations/240_portal_team.sql: owner, developer, support or viewer */
  role: Role;
  created: Date;
}

export interface SessionRow {
  token_hash: string;
  user_id: string;
  verified: boolean;
  created: Date;
  last_seen: Date;
}

// ---- users ---------------------------------------------------------------------------------

export async function insertUser(q: Queryable, u: Pick<PortalUserRow, 'id' | 'merchant_id' | 'email' | 'password_hash'>): Promise<boolean> {
  const rows = await q.query(
    'INSERT INTO portal_users (id, merchant_id, email, password_hash) VALUES ($1, $2, $3, $4) ON CONFLICT (email) DO NOTHING RETURNING id',
    [u.id, u.merchant_id, u.email, u.password_hash],
  );
  return rows.length > 0;
}

export async function userByEmail(q: Queryable, email: string): Promise<PortalUserRow | undefined> {
  return (await q.query<PortalUserRow>('SELECT * FROM portal_users WHERE email = $1', [email]))[0];
}

export async function userById(q: Queryable, id: string, lock = false): Promise<PortalUserRow | undefined> {
  return (await q.query<PortalUserRow>(`SELECT * FROM portal_users WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]))[0];
}

export async function setTotp(q: Queryable, id: string, t: { pending?: string | null; secret?: string | null; lastCounter?: number }) {
  const sets: string[] = [];
  const params: unknown[] = [id];
  if (t.pending !== undefined) sets.push(`totp_pending_ct = $${params.push(t.pending)}`);
  if (t.secret !== undefined) sets.push(`totp_secret_ct = $${params.push(t.secret)}`);
  if (t.lastCounter !== undefined) sets.push(`totp_last_counter = $${params.push(t.lastCounter)}`);
  if (sets.length) await q.query(`UPDATE portal_users SET ${sets.join(', ')} WHERE id = $1`, params);
}

export async function merchantName(q: Queryable, merchantId: MerchantId): Promise<string | undefined> {
  return (await q.query<{ name: string }>('SELECT name FROM merchants WHERE id = $1', [merchantId]))[0]?.name;
}

// ---- sessions ------------------------------------------------------------------------------

export async function insertSession(q: Queryable, s: SessionRow) {
  await q.query('INSERT INTO portal_sessions (token_hash, user_id, verified, created, last_seen) VALUES ($1, $2, $3, $4, $5)', [
    s.token_hash,
    s.user_id,
    s.verified,
    s.created,
    s.last_seen,
  ]);
}

export async function findSession(q: Queryable, tokenHash: string): Promise<SessionRow | undefined> {
  return (await q.query<SessionRow>('SELECT * FROM portal_sessions WHERE token_hash = $1', [tokenHash]))[0];
}

export async function touchSession(q: Queryable, tokenHash: string, now: Date, verified?: boolean) {
  await q.query('UPDATE portal_sessions SET last_seen = $2, verified = coalesce($3, verified) WHERE token_hash = $1', [
    tokenHash,
    now,
    verified ?? null,
  ]);
}

export async function deleteSession(q: Queryable, tokenHash: string) {
  await q.query('DELETE FROM portal_sessions WHERE token_hash = $1', [tokenHash]);
}

/** Drops sessions past their lifetime (run now and then at sign-in). */
export async function deleteStaleSessions(q: Queryable, idleBefore: Date, createdBefore: Date) {
  await q.query('DELETE FROM portal_sessions WHERE last_seen < $1 OR created < $2', [idleBefore, createdBefore]);
}

// ---- one-time action tokens ----------------------------------------------------------------

/** true: this request runs the action; otherwise the row of the earlier run (result null: still running). */
export async function claimAction(q: Queryable, token: string, userId: string): Promise<true | { result: string | null }> {
  const rows = await q.query('INSERT INTO portal_actions (token, user_id) VALUES ($1, $2) ON CONFLICT (token) DO NOTHING RETURNING token', [
    token,
    userId,
  ]);
  if (rows.length) return true;
  return (
    (
      await q.query<{ result: string | null }>('SELECT result FROM portal_actions WHERE token = $1 AND user_id = $2', [token, userId])
    )[0] ?? { result: null }
  );
}

export async function finishAction(q: Queryable, token: string, result: string) {
  await q.query('UPDATE portal_actions SET result = $2 WHERE token = $1', [token, result]);
}

// ---- audit log -----------------------------------------------------------------------------

export interface AuditRow {
  id: string;
  merchant_id: string;
  user_id: string | null;
  email: string | null;
  project_id: string | null;
  action: string;
  detail: Record<string, unknown>;
  address: string | null;
  created: Date;
}

export async function insertAudit(q: Queryable, a: Omit<AuditRow, 'created'>) {
  await q.query(
    'INSERT INTO portal_audit (id, merchant_id, user_id, email, project_id, action, detail, address) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
    [a.id, a.merchant_id, a.user_id, a.email, a.project_id, a.action, JSON.stringify(a.detail), a.address],
  );
}

export async function auditOf(q: Queryable, merchantId: MerchantId, limit: number): Promise<AuditRow[]> {
  return q.query<AuditRow>('SELECT * FROM portal_audit WHERE merchant_id = $1 ORDER BY created DESC, id DESC LIMIT $2', [
    merchantId,
    limit,
  ]);
}

// ---- projects and keys as a merchant sees them ---------------------------------------------

export async function projectsOfMerchant(q: Queryable, merchantId: MerchantId): Promise<ProjectRow[]> {
  return q.query<ProjectRow>('SELECT * FROM projects WHERE merchant_id = $1 ORDER BY mode DESC, created, id', [merchantId]);
}

export interface KeyRow {
  id: string;
  hint: string;
  created: Date;
  last_used: Date | null;
  revoked: Date | null;
}

export async function keysOf(q: Queryable, projectId: ProjectId): Promise<KeyRow[]> {
  return q.query<KeyRow>(
    'SELECT id, hint, created, last_used, revoked FROM api_keys WHERE project_id = $1 ORDER BY revoked IS NOT NULL, created DESC, id',
    [projectId],
  );
}

/** Revokes one key of the project; false when it has no such active key. */
export async function revokeKey(q: Queryable, projectId: ProjectId, keyId: string): Promise<boolean> {
  const rows = await q.query('UPDATE api_keys SET revoked = now() WHERE project_id = $1 AND id = $2 AND revoked IS NULL RETURNING id', [
    projectId,
    keyId,
  ]);
  if (rows.length) await q.query(`SELECT pg_notify('${PROJECTS_CHANNEL}', $1)`, [projectId]);
  return rows.length > 0;
}

/** Notes a key's use, at most once a minute (so an API request rarely writes). */

// ---- reads for the pages -------------------------------------------------------------------

export interface LinkListRow {
  id: string;
  merchant_order_id: string;
  description: string | null;
  currency: string;
  amount: number;
  expires_at: Date;
  created: Date;
}

export async function linksOf(q: Queryable, projectId: ProjectId, limit: number): Promise<LinkListRow[]> {
  return q.query<LinkListRow>(
    'SELECT id, merchant_order_id, description, currency, amount, expires_at, created FROM payment_links WHERE project_id = $1 ORDER BY created DESC, id DESC LIMIT $2',
    [projectId, limit],
  );
}
