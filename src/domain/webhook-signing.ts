import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the receiver checks
 * `webhook-signature` = `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the project's
 * secret `whsec_<base64>`. During a rotation several signatures are sent, space-separated,
 * and a receiver accepts the message when any one of them matches its secret.
 */
const SECRET_PREFIX = 'whsec_';

/** A new secret: 32 random bytes, base64, with the `whsec_` prefix receivers expect. */
export const newSecret = () => SECRET_PREFIX + randomBytes(32).toString('base64');

/** The HMAC key of a secret: the base64 after the prefix. */
export function secretKey(secret: string): Buffer {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(b64, 'base64');
  if (!key.length) throw new Error('webhook secret is empty');
  return key;
}

/** `v1,<signature>` of one message under one secret. timestamp is in seconds since the epoch. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of a message, signed with every given secret (the newest first). */
export function signedHeaders(secrets: readonly string[], id: string, at: Date, body: string): SignedHeaders {
  if (!secrets.length) throw new Error('no webhook secret to sign with');
  const ts = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': secrets.map((s) => sign(s, id, ts, body)).join(' '),
  };
}
