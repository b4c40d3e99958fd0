import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * One-time passwords: HOTP (RFC 4226) and TOTP (RFC 6238), and the base32 (RFC 4648) that
 * authenticator apps exchange secrets in. Pure: the caller passes the time.
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32, ignoring case, spaces and padding; undefined on any other character. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.toUpperCase().replace(/[\s=]/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const i = ALPHABET.indexOf(ch);
    if (i < 0) return undefined;
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** RFC 4226 HOTP: the code for one counter value. */
export function hotp(secret: Buffer, counter: number, digits = 6, algorithm: TotpAlgorithm = 'sha1'): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, secret).update(msg).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 10 ** digits).padStart(digits, '0');
}

const TOTP_STEP_SECONDS = 30;

/** The time step (RFC 6238 T) of a moment. */
const totpCounter = (unixSeconds: number, step = TOTP_STEP_SECONDS) => Math.floor(unixSeconds / step);

/** RFC 6238 TOTP: the code at a moment (unix seconds). */
export const totp = (secret: Buffer, unixSeconds: number, digits = 6, algorithm: TotpAlgorithm = 'sha1') =>
  hotp(secret, totpCounter(unixSeconds), digits, algorithm);

/**
 * Checks a 6-digit code against the step of `unixSeconds` and one step either side (clock
 * drift). Answers the matching counter, so the caller can refuse a code used before (replay),
 * or undefined.
 */
export function verifyTotp(secret: Buffer, code: string, unixSeconds: number, lastCounter = -1): number | undefined {
  const clean = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(clean)) return undefined;
  const now = totpCounter(unixSeconds);
  for (const c of [now - 1, now, now + 1]) {
    if (c <= lastCounter) continue;
    const want = Buffer.from(hotp(secret, c));
    if (timingSafeEqual(want, Buffer.from(clean))) return c;
  }
  return undefined;
}

/** The otpauth:// URI authenticator apps read from the QR code (Key Uri Format). */
export function otpauthUri(issuer: string, account: string, secret: Buffer): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return `otpauth://totp/${label}?secret=${base32Encode(secret)}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=6&period=${TOTP_STEP_SECONDS}`;
}
