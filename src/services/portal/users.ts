import { createHash, hkdfSync, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { Ctx } from '../platform/context.ts';
import { open, seal } from '../platform/crypto-envelope.ts';
import * as store from '../../store/portal/merchants.ts';
import { merchantExists } from '../../store/platform/projects.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import { isEmail, normaliseEmail, sessionExpired } from '../../domain/portal.ts';
import { SignInGuard, refuseIfLocked } from './sign-in-guard.ts';
import { base32Encode, otpauthUri, verifyTotp } from '../../domain/totp.ts';
import { isUuid, type MerchantId } from '../../domain/ids.ts';

/**
 * Portal users: passwords (scrypt), sessions (in the database, behind a random cookie), sign-in
 * throttling per account and per address, and the optional TOTP second factor.
 */

export type PortalUser = store.PortalUserRow;

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
/** scrypt with N = 2^15, r = 8, p = 1: 32 MiB of memory per check (docs/portal.md "Security"). */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LEN = 32;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, KEY_LEN, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, key] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !key) return false;
  const want = Buffer.from(key, 'base64url');
  const got = await scryptAsync(password, Buffer.from(salt, 'base64url'), want.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(got, want);
}

/** Checked against when the email is unknown, so an unknown account takes as long as a wrong password. */
let decoyHash: Promise<string> | undefined;

export const MIN_PASSWORD = 12;
export const MAX_PASSWORD = 256;

export interface CreatedUser {
  user_id: string;
  merchant_id: string;
  email: string;
  /** set when the password was generated here: shown once */
  password?: string;
}

/** Creates a portal user of a merchant; without a password, generates one (returned once). */
export async function createUser(ctx: Ctx, input: { merchantId: MerchantId; email: string; password?: string }): Promise<CreatedUser> {
  const email = normaliseEmail(input.email ?? '');
  if (!isEmail(email)) throw invalid('email', 'email must be an email address');
  const generated = input.password === undefined ? randomBytes(15).toString('base64url') : undefined;
  const password = input.password ?? generated!;
  if (password.length < MIN_PASSWORD || password.length > MAX_PASSWORD)
    throw invalid('password', `the password must be ${MIN_PASSWORD} to ${MAX_PASSWORD} characters`);
  if (!isUuid(input.merchantId) || !(await merchantExists(ctx.db, input.merchantId)))
    throw new DomainError('NotFound', `merchant ${input.merchantId} not found`);
  const id = randomUUID();
  const made = await store.insertUser(ctx.db, { id, merchant_id: input.merchantId, email, password_hash: await hashPassword(password) });
  if (!made) throw new DomainError('ValidationError', `a portal user ${email} exists already`, 'email', 'conflict');
  return { user_id: id, merchant_id: input.merchantId, email, ...(generated ? { password: generated } : {}) };
}

/** The first run's user, for the first merchant: admin@<portal host>. */
export async function createFirstUser(ctx: Ctx, merchantId: MerchantId): Promise<CreatedUser> {
  const host = new URL(ctx.config.portalUrl).hostname;
  const domain = host.includes('.') && !/^[\d.]+$/.test(host) ? host : 'example.com';
  return createUser(ctx, { merchantId, email: `admin@${domain}` });
}

// ---- sign-in -------------------------------------------------------------------------------

export { ThrottledError } from './sign-in-guard.ts';

export interface SignedIn {
  /** the cookie value; only its hash is stored */
  token: string;
  user: PortalUser;
  /** the user has TOTP: the session is good for the code page only until the code is given */
  needsCode: boolean;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * Checks email and password (throttling: sign-in-guard.ts). The address is refused while locked
 * (429). A locked account is refused too, unless its user has a second factor: then a right
 * password still leads to the code page, so an attacker cannot keep the owner out by failing
 * on purpose. Every failure counts against both the account and the address.
 */
export async function signIn(ctx: Ctx, input: { email: string; password: string; address: string }): Promise<SignedIn> {
  const p = ctx.config.portal;
  const email = normaliseEmail(String(input.email ?? '')).slice(0, 320);
  const user = email ? await store.userByEmail(ctx.db, email) : undefined;
  const guard = new SignInGuard(ctx, { user, address: input.address });
  const now = guard.now;
  const address = await guard.attempt(`address:${input.address}`, p.addressMaxFailures);
  refuseIfLocked(address.wait);
  const account = await guard.attempt(`account:${email}`, p.maxFailures);
  if (account.unchecked) await guard.succeeded(address); // not checked: no count against the address either
  const viaSecondFactor = account.wait > 0 && !account.unchecked && Boolean(user?.totp_secret_ct);
  if (!viaSecondFactor) refuseIfLocked(account.wait);

  const password = String(input.password ?? '').slice(0, MAX_PASSWORD);
  const ok = user
    ? await verifyPassword(password, user.password_hash)
    : (await verifyPassword(password, await (decoyHash ??= hashPassword(randomUUID()))), false);
  if (!ok || !user) {
    await guard.audit('sign_in_failed', { factor: 'password' });
    refuseIfLocked(await guard.failed(address), await guard.failed(account));
    throw new DomainError('Unauthorized', 'the email or password is not right');
  }
  await guard.succeeded(address);
  if (!viaSecondFactor) await guard.cleared(account);
  await store.deleteStaleSessions(ctx.db, new Date(now.getTime() - p.sessionIdleMs), new Date(now.getTime() - p.sessionMaxMs));
  const token = randomBytes(32).toString('base64url');
  const needsCode = Boolean(user.totp_secret_ct);
  await store.insertSession(ctx.db, { token_hash: hashToken(token), user_id: user.id, verified: !needsCode, created: now, last_seen: now });
  return { token, user, needsCode };
}

export interface ActiveSession {
  /** sha256 of the cookie: what CSRF tokens are bound to */
  id: string;
  user: PortalUser;
  verified: boolean;
}

/** The session behind a cookie, kept alive; undefined when unknown or expired (then deleted). */
export async function sessionOf(ctx: Ctx, token: string | undefined): Promise<ActiveSession | undefined> {
  if (!token || token.length > 100) return undefined;
  const id = hashToken(token);
  const s = await store.findSession(ctx.db, id);
  if (!s) return undefined;
  const now = new Date();
  if (sessionExpired(s, now, ctx.config.portal.sessionIdleMs, ctx.config.portal.sessionMaxMs)) {
    await store.deleteSession(ctx.db, id);
    return undefined;
  }
  const user = await store.userById(ctx.db, s.user_id);
  if (!user) return undefined;
  await store.touchSession(ctx.db, id, now);
  return { id, user, verified: s.verified };
}

export async function signOut(ctx: Ctx, sessionId: string) {
  await store.deleteSession(ctx.db, sessionId);
}

// ---- TOTP ----------------------------------------------------------------------------------

const totpKey = (ctx: Ctx) => Buffer.from(hkdfSync('sha256', ctx.masterKey, Buffer.alloc(0), 'tender/portal/totp/v1', 32));
const sealSecret = (ctx: Ctx, userId: string, secret: Buffer) => seal(totpKey(ctx), secret, `portal-totp\n${userId}`);
const openSecret = (ctx: Ctx, userId: string, sealed: string) => open(totpKey(ctx), sealed, `portal-totp\n${userId}`);

/**
 * Checks a code against the user's secret (pending or active) and uses it up. Counted per user
 * and per address before it is checked, like passwords: a locked scope throws ThrottledError.
 */
async function useCode(ctx: Ctx, userId: string, code: string, which: 'pending' | 'active', address: string): Promise<boolean> {
  const p = ctx.config.portal;
  const user = await store.userById(ctx.db, userId);
  const guard = new SignInGuard(ctx, { user, address });
  const byAddress = await guard.attempt(`address:${address}`, p.addressMaxFailures);
  refuseIfLocked(byAddress.wait);
  const byUser = await guard.attempt(`code:${userId}`, p.maxFailures);
  if (byUser.unchecked) await guard.succeeded(byAddress);
  refuseIfLocked(byUser.wait);
  const ok = await checkCode(ctx, userId, code, which);
  if (!ok) {
    await guard.audit('sign_in_failed', { factor: 'code' });
    refuseIfLocked(await guard.failed(byAddress), await guard.failed(byUser));
    return false;
  }
  await guard.succeeded(byAddress);
  await guard.cleared(byUser);
  return true;
}

async function checkCode(ctx: Ctx, userId: string, code: string, which: 'pending' | 'active'): Promise<boolean> {
  return ctx.db.tx(async (q) => {
    const user = await store.userById(q, userId, true);
    const sealed = which === 'active' ? user?.totp_secret_ct : user?.totp_pending_ct;
    if (!user || !sealed) return false;
    const counter = verifyTotp(openSecret(ctx, user.id, sealed), String(code ?? ''), Date.now() / 1000, Number(user.totp_last_counter));
    if (counter === undefined) return false;
    await store.setTotp(
      q,
      user.id,
      which === 'pending' ? { secret: sealed, pending: null, lastCounter: counter } : { lastCounter: counter },
    );
    return true;
  });
}

/** The second step of sign-in: a right code makes the session whole. */
export async function verifySessionCode(ctx: Ctx, session: ActiveSession, code: string, address: string): Promise<boolean> {
  if (!(await useCode(ctx, session.user.id, code, 'active', address))) return false;
  await store.touchSession(ctx.db, session.id, new Date(), true);
  return true;
}

export interface TotpSetup {
  /** base32, for typing in by hand */
  secret: string;
  uri: string;
}

/** A new pending secret (replacing any earlier pending one); active once its first code is entered. */
export async function startTotpSetup(ctx: Ctx, user: PortalUser): Promise<TotpSetup> {
  const secret = randomBytes(20);
  await store.setTotp(ctx.db, user.id, { pending: sealSecret(ctx, user.id, secret) });
  return { secret: base32Encode(secret), uri: otpauthUri('Tender', user.email, secret) };
}

/** The pending secret shown again (the setup page reloaded). */
export function pendingTotp(ctx: Ctx, user: PortalUser): TotpSetup | undefined {
  if (!user.totp_pending_ct) return undefined;
  const secret = openSecret(ctx, user.id, user.totp_pending_ct);
  return { secret: base32Encode(secret), uri: otpauthUri('Tender', user.email, secret) };
}

export const confirmTotp = (ctx: Ctx, user: PortalUser, code: string, address: string) => useCode(ctx, user.id, code, 'pending', address);

/** Turning the second factor off takes a current code. */
export async function disableTotp(ctx: Ctx, user: PortalUser, code: string, address: string): Promise<boolean> {
  if (!(await useCode(ctx, user.id, code, 'active', address))) return false;
  await store.setTotp(ctx.db, user.id, { secret: null, pending: null });
  return true;
}
