import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Security of the hosted pages: response headers (strict CSP, no framing, no caching, no
 * referrer) and CSRF tokens for their forms.
 *
 * A CSRF token is an HMAC over (action, order, transaction, issue time) under a key derived
 * from the master key. It binds a form to the one resource it acts on and expires; nothing
 * is stored per session, so any node can check it (stateless nodes, docs/design.md "Scale-out").
 */

/** How long a rendered form can be submitted. Longer than any transaction's default expiry. */
const CSRF_TTL_SECONDS = 2 * 60 * 60;

export interface CsrfScope {
  action: string;
  orderId: string;
  transactionId?: string;
}

export const csrfKey = (masterKey: Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'tender/hosted-pages/csrf/v1', 32));

const mac = (key: Buffer, s: CsrfScope, issued: number) =>
  createHmac('sha256', key)
    .update(`${s.action}\n${s.orderId}\n${s.transactionId ?? ''}\n${issued}`)
    .digest('base64url');

/** `<issued unix seconds>.<mac>` */
export function issueCsrf(key: Buffer, scope: CsrfScope, now: Date): string {
  const issued = Math.floor(now.getTime() / 1000);
  return `${issued}.${mac(key, scope, issued)}`;
}

export function checkCsrf(key: Buffer, scope: CsrfScope, token: unknown, now: Date): boolean {
  if (typeof token !== 'string') return false;
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return false;
  const issued = Number(m[1]);
  const age = now.getTime() / 1000 - issued;
  // a small negative age tolerates clock differences between nodes
  if (age > CSRF_TTL_SECONDS || age < -300) return false;
  const want = Buffer.from(mac(key, scope, issued));
  const got = Buffer.from(m[2]);
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * A browser that sends Origin must send ours. `null` is what Chrome sends for a same-origin
 * form POST under `Referrer-Policy: no-referrer`, so it is left to the token.
 */
export function originAllowed(origin: string | undefined, baseUrl: string): boolean {
  if (!origin || origin === 'null') return true;
  return origin === new URL(baseUrl).origin;
}

/** CSP sources a page needs beyond its own hashed stylesheet (wallet buttons add theirs). */
export type CspExtras = Partial<Record<'script-src' | 'connect-src' | 'frame-src' | 'img-src' | 'form-action', string[]>>;

export function contentSecurityPolicy(styleHash: string, extras: CspExtras = {}): string {
  const list = (base: string[], more?: string[]) => [...new Set([...base, ...(more ?? [])])].join(' ');
  const directives = [
    "default-src 'none'",
    `style-src '${styleHash}'`,
    `img-src ${list(["'self'", 'data:'], extras['img-src'])}`,
    // after our form, the customer is redirected through 3-D Secure to the merchant's
    // return_url; browsers check form-action on those redirects too
    `form-action ${list(["'self'"], extras['form-action'])}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ];
  if (extras['script-src']?.length) directives.push(`script-src ${list([], extras['script-src'])}`);
  if (extras['connect-src']?.length) directives.push(`connect-src ${list([], extras['connect-src'])}`);
  if (extras['frame-src']?.length) directives.push(`frame-src ${list([], extras['frame-src'])}`);
  return directives.join('; ');
}

/** Headers of every hosted page response, HTML or not. */
export function setPageHeaders(reply: FastifyReply, csp: string) {
  reply.header('Content-Security-Policy', csp);
  reply.header('X-Frame-Options', 'DENY');
  reply.header('Referrer-Policy', 'no-referrer');
  reply.header('Cache-Control', 'no-store');
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Cross-Origin-Opener-Policy', 'same-origin');
  reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=()');
}

/** Origins of the merchant's return and failure URLs, for form-action. */
export function originsOf(...urls: (string | undefined | null)[]): string[] {
  const out: string[] = [];
  for (const u of urls) {
    if (!u) continue;
    try {
      const o = new URL(u).origin;
      if (o !== 'null') out.push(o);
    } catch {
      /* not a URL: nothing to allow */
    }
  }
  return out;
}

// ---- flash: what a refused form shows after its redirect (POST/redirect/GET) ------------

/**
 * A refused form answers 303 to its page, never the page itself, so Back and reload never
 * resubmit. What that page must show (field errors, the name and expiry typed) travels in a
 * short-lived cookie for that one path, sealed with AES-256-GCM under a key derived from the
 * master key: stateless like the CSRF tokens, and the cardholder name never in clear or in a URL.
 */
const FLASH_COOKIE = 'tender_flash';
const FLASH_TTL_SECONDS = 600;

export const flashKey = (masterKey: Buffer): Buffer =>
  Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'tender/hosted-pages/flash/v1', 32));

/** Sets the flash for the page at `path` (a path of ours) that the redirect goes to. */
export function setFlash(reply: FastifyReply, key: Buffer, path: string, data: Record<string, unknown>, secure: boolean) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(path));
  const body = Buffer.concat([cipher.update(JSON.stringify({ d: data, exp: Date.now() + FLASH_TTL_SECONDS * 1000 })), cipher.final()]);
  const value = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  reply.header(
    'Set-Cookie',
    `${FLASH_COOKIE}=${value}; Path=${path}; Max-Age=${FLASH_TTL_SECONDS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  );
}

/** The flash of this page, once: read and cleared. Anything tampered, stale or for another page reads as none. */
export function takeFlash<T = Record<string, unknown>>(req: FastifyRequest, reply: FastifyReply, key: Buffer, path: string): T | undefined {
  const raw = (req.headers.cookie ?? '')
    .split(/;\s*/)
    .find((c) => c.startsWith(`${FLASH_COOKIE}=`))
    ?.slice(FLASH_COOKIE.length + 1);
  if (!raw) return undefined;
  reply.header('Set-Cookie', `${FLASH_COOKIE}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=Lax`);
  try {
    const buf = Buffer.from(raw, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(0, 12));
    decipher.setAAD(Buffer.from(path));
    decipher.setAuthTag(buf.subarray(12, 28));
    const json = JSON.parse(Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString('utf8'));
    return typeof json.exp === 'number' && json.exp > Date.now() ? (json.d as T) : undefined;
  } catch {
    return undefined;
  }
}
