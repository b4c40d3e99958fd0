import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Ctx } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import * as team from '../../store/portal/team.ts';
import { insertAudit } from '../../store/portal/merchants.ts';
import { DomainError, invalid, notFound } from '../../domain/errors.ts';
import { isEmail, normaliseEmail } from '../../domain/portal.ts';
import { isRole, type Role } from '../../domain/roles.ts';
import { isUuid, type MerchantId } from '../../domain/ids.ts';
import { hashPassword, MAX_PASSWORD, MIN_PASSWORD } from './users.ts';
import type { Actor } from './actions.ts';

/**
 * The merchant's team in the portal: owners invite users with a one-time link (no email is
 * sent: the owner passes the link on), change their roles and remove them, and may require a
 * second factor of everyone. Every change is in the audit log, written with the change.
 */

const INVITE_DAYS = 7;
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

async function auditIn(q: Queryable, actor: Actor, action: string, detail: Record<string, unknown>) {
  await insertAudit(q, {
    id: randomUUID(),
    merchant_id: actor.user.merchant_id,
    user_id: actor.user.id,
    email: actor.user.email,
    project_id: null,
    action,
    detail,
    address: actor.address,
  });
}

export const membersOf = (ctx: Ctx, merchantId: MerchantId) => team.membersOf(ctx.db, merchantId);
export const pendingInvites = (ctx: Ctx, merchantId: MerchantId) => team.pendingInvites(ctx.db, merchantId, new Date());
export const requiresTotp = (ctx: Ctx, merchantId: MerchantId) => team.requiresTotp(ctx.db, merchantId);

/** An invitation: the token of the link, shown once (only its hash is kept). */
export async function inviteUser(ctx: Ctx, actor: Actor, input: { email: string; role: string }) {
  const email = normaliseEmail(input.email ?? '');
  if (!isEmail(email)) throw invalid('email', 'email must be an email address');
  if (!isRole(input.role)) throw invalid('role', 'role must be owner, developer, support or viewer');
  const token = randomBytes(24).toString('base64url');
  const expires = new Date(Date.now() + INVITE_DAYS * 24 * 3600 * 1000);
  await ctx.db.tx(async (q) => {
    await team.insertInvite(q, {
      token_hash: hashToken(token),
      merchant_id: actor.user.merchant_id,
      email,
      role: input.role as Role,
      created_by: actor.user.id,
      expires,
    });
    await auditIn(q, actor, 'user_invited', { email, role: input.role, expires: expires.toISOString() });
  });
  return { token, email, role: input.role as Role, expires };
}

/** The invitation behind a link, while it is open. */
export async function inviteOf(ctx: Ctx, token: string) {
  if (!/^[A-Za-z0-9_-]{20,64}$/.test(token)) return undefined;
  return team.openInvite(ctx.db, hashToken(token), new Date());
}

/** Accepting: the invited user chooses a password; the link is used up in the same transaction. */
export async function acceptInvite(ctx: Ctx, token: string, password: string, address: string) {
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD)
    throw invalid('password', `the password must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
  if (!/^[A-Za-z0-9_-]{20,64}$/.test(token)) throw notFound('invitation');
  const hash = await hashPassword(password);
  return ctx.db.tx(async (q) => {
    const invite = await team.takeInvite(q, hashToken(token), new Date());
    if (!invite) throw notFound('invitation');
    const id = randomUUID();
    const made = await team.insertUserWithRole(q, {
      id,
      merchant_id: invite.merchant_id,
      email: invite.email,
      password_hash: hash,
      role: invite.role,
    });
    if (!made) throw new DomainError('ValidationError', `a portal user ${invite.email} exists already`, 'email', 'conflict');
    const self = { user: { id, merchant_id: invite.merchant_id, email: invite.email }, address } as Actor;
    await auditIn(q, self, 'invitation_accepted', { email: invite.email, role: invite.role });
    return { user_id: id, email: invite.email, role: invite.role };
  });
}

/** At least one owner stays: the change is refused when it would leave none. */
function keepsAnOwner(members: team.TeamMember[], userId: string, role: Role | null) {
  const owners = members.filter((m) => m.role === 'owner' && !(m.id === userId && role !== 'owner'));
  if (!owners.length) throw new DomainError('ValidationError', 'the team needs at least one owner', 'role', 'conflict');
}

export async function changeRole(ctx: Ctx, actor: Actor, userId: string, role: string) {
  if (!isRole(role)) throw invalid('role', 'role must be owner, developer, support or viewer');
  if (!isUuid(userId)) throw notFound('user');
  await ctx.db.tx(async (q) => {
    const members = await team.lockMembers(q, actor.user.merchant_id);
    const member = members.find((m) => m.id === userId.toLowerCase());
    if (!member) throw notFound('user');
    keepsAnOwner(members, member.id, role);
    await team.setRole(q, actor.user.merchant_id, member.id, role);
    await auditIn(q, actor, 'role_changed', { user: member.email, from: member.role, to: role });
  });
}

export async function removeUser(ctx: Ctx, actor: Actor, userId: string) {
  if (!isUuid(userId)) throw notFound('user');
  await ctx.db.tx(async (q) => {
    const members = await team.lockMembers(q, actor.user.merchant_id);
    const member = members.find((m) => m.id === userId.toLowerCase());
    if (!member) throw notFound('user');
    keepsAnOwner(members, member.id, null);
    await team.deleteUser(q, actor.user.merchant_id, member.id);
    await auditIn(q, actor, 'user_removed', { user: member.email, role: member.role });
  });
}

/** Requiring a second factor of everyone takes one yourself first (so the owner is not locked out of the switch). */
export async function setRequireTotp(ctx: Ctx, actor: Actor, on: boolean) {
  if (on && !actor.user.totp_secret_ct)
    throw new DomainError('ValidationError', 'turn on two-factor authentication for yourself first (Settings)', 'on', 'conflict');
  await ctx.db.tx(async (q) => {
    await team.setRequireTotp(q, actor.user.merchant_id, on);
    await auditIn(q, actor, on ? 'two_factor_required' : 'two_factor_optional', {});
  });
}
