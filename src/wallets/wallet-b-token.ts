/**
 * The wallet-b-pay payment token (Google Pay's format: ECv1, ECv2, ECv2SigningOnly).
 * Pure: no store, no HTTP, no clock of its own (callers pass `now`).
 * Format, order of checks and error codes: docs/wallet-b-token.md.
 */
import type { KeyObject } from 'node:crypto';
import {
  ecdsaSign,
  ecdsaVerify,
  eciesDecrypt,
  eciesEncrypt,
  exportPkcs8,
  exportPoint,
  exportSpki,
  fromBase64,
  importPkcs8,
  importPoint,
  importPublicKey,
  importSpki,
  lengthValue,
  newP256KeyPair,
  type EncryptingVersion,
  type ProtocolVersion,
} from './wallet-b-crypto.ts';

export type { ProtocolVersion } from './wallet-b-crypto.ts';

export type TokenErrorCode =
  | 'invalid_json' // the token is not JSON
  | 'malformed_token' // JSON, but fields missing, of the wrong type, or not decodable
  | 'unsupported_protocol' // protocolVersion is not ECv1, ECv2 or ECv2SigningOnly
  | 'no_root_keys' // no unexpired root signing key is configured for this protocolVersion
  | 'invalid_intermediate_signature' // no root key signed the intermediate signing key
  | 'intermediate_key_expired' // the intermediate key's keyExpiration is not after now
  | 'invalid_signature' // the message signature does not verify for this sender and recipient id
  | 'invalid_tag' // the MAC tag does not match under any recipient private key
  | 'plaintext_not_json' // the decrypted message is not JSON
  | 'invalid_message' // JSON, but not a payment message (messageExpiration, card fields)
  | 'message_expired' // messageExpiration is not after now
  | 'invalid_config'; // the caller's keys or recipient id are unusable (a server-side fault)

/** A refused token. `message` never contains card data. */
export class TokenError extends Error {
  override readonly name = 'TokenError';
  constructor(
    readonly code: TokenErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A root signing key as Google publishes them (keys.json). */
export interface RootKey {
  keyValue: string; // base64 DER SubjectPublicKeyInfo, EC P-256
  protocolVersion: string;
  keyExpiration?: string; // ms since epoch; required for every version but ECv1
}

export interface PaymentMethodDetails {
  pan: string;
  expirationMonth: number;
  expirationYear: number;
  authMethod: 'PAN_ONLY' | 'CRYPTOGRAM_3DS';
  cryptogram?: string;
  eciIndicator?: string;
  [field: string]: unknown;
}

/** The decrypted (or, for ECv2SigningOnly, signed) message. Unknown fields are kept. */
export interface DecryptedPayment {
  messageExpiration: string;
  messageId?: string;
  paymentMethod?: string;
  paymentMethodDetails: PaymentMethodDetails;
  gatewayMerchantId?: string;
  [field: string]: unknown;
}

export interface OpenOptions {
  rootKeys: RootKey[];
  recipientId: string; // e.g. "merchant:12345678901234567890" or "gateway:tender"
  recipientPrivateKeys: string[]; // base64 PKCS#8; several while rotating
  senderId?: string; // default "Google"
  now: Date;
}

export interface SealOptions {
  protocolVersion: ProtocolVersion;
  rootPrivateKey: string; // base64 PKCS#8
  intermediatePrivateKey?: string; // ECv2*: base64 PKCS#8; a fresh key when absent
  intermediateKeyExpiration?: string; // ECv2*: ms since epoch; default now + 7 days
  recipientId: string;
  recipientPublicKey?: string; // ECv1/ECv2: base64 SPKI or uncompressed point
  senderId?: string; // default "Google"
  now?: Date; // only for the default intermediateKeyExpiration
}

export interface SandboxKeys {
  rootPrivateKey: string; // PKCS#8
  rootPublicKey: string; // SPKI: use as RootKey.keyValue
  recipientPrivateKey: string; // PKCS#8
  recipientPublicKey: string; // uncompressed point, as in Google Pay's DIRECT tokenization
  intermediatePrivateKey: string; // PKCS#8
}

const DEFAULT_SENDER_ID = 'Google';
const VERSIONS: readonly unknown[] = ['ECv1', 'ECv2', 'ECv2SigningOnly'] satisfies ProtocolVersion[];
const isVersion = (v: unknown): v is ProtocolVersion => VERSIONS.includes(v);
const DAY_MS = 86_400_000;

interface ParsedToken {
  protocolVersion: ProtocolVersion;
  signature: Buffer;
  signedMessage: string;
  intermediate?: { signedKey: string; signatures: Buffer[] };
}

function fail(code: TokenErrorCode, message: string): never {
  throw new TokenError(code, message);
}
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const isInteger = (v: unknown): v is number => Number.isInteger(v);

function decode(value: unknown, what: string): Buffer {
  const bytes = isString(value) ? fromBase64(value) : undefined;
  return bytes && bytes.length > 0 ? bytes : fail('malformed_token', `${what} is not base64`);
}

/** Milliseconds since the epoch from a decimal string; undefined when it is not one. */
function millis(value: unknown): number | undefined {
  return isString(value) && /^\d{1,16}$/.test(value) ? Number(value) : undefined;
}

/** An expiration is over once it is at or before now (as Tink does). */
const isExpired = (expiration: number, now: Date) => expiration <= now.getTime();

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function parseToken(token: string): ParsedToken {
  const json = parseJson(token);
  if (json === undefined) fail('invalid_json', 'token is not JSON');
  if (!isObject(json)) fail('malformed_token', 'token is not a JSON object');
  const { protocolVersion, signature, signedMessage, intermediateSigningKey: isk } = json;
  if (!isString(protocolVersion)) fail('malformed_token', 'protocolVersion is missing');
  if (!isVersion(protocolVersion)) fail('unsupported_protocol', `protocolVersion "${protocolVersion}" is not supported`);
  if (!isString(signedMessage)) fail('malformed_token', 'signedMessage is missing or not a string');
  const parsed: ParsedToken = { protocolVersion, signature: decode(signature, 'signature'), signedMessage };
  if (protocolVersion === 'ECv1') return parsed;
  if (!isObject(isk) || !isString(isk.signedKey) || !Array.isArray(isk.signatures) || isk.signatures.length === 0) {
    fail('malformed_token', 'intermediateSigningKey must hold signedKey and signatures');
  }
  const signatures = isk.signatures.map((s: unknown) => decode(s, 'intermediate key signature'));
  parsed.intermediate = { signedKey: isk.signedKey, signatures };
  return parsed;
}

/** The root keys for this protocol version that have not expired (Tink's rules). */
function trustedRootKeys(rootKeys: RootKey[], version: ProtocolVersion, now: Date): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const root of rootKeys) {
    if (root.protocolVersion !== version) continue;
    const expiration = root.keyExpiration === undefined ? undefined : millis(root.keyExpiration);
    if (root.keyExpiration !== undefined && expiration === undefined) {
      fail('invalid_config', `a root signing key for ${version} has an invalid keyExpiration`);
    }
    if (expiration === undefined ? version !== 'ECv1' : isExpired(expiration, now)) continue;
    try {
      keys.push(importSpki(root.keyValue));
    } catch {
      fail('invalid_config', `a root signing key for ${version} is not a base64 SPKI P-256 key`);
    }
  }
  return keys.length > 0 ? keys : fail('no_root_keys', `no unexpired root signing key for ${version}`);
}

/** Verifies the intermediate signing key against the root keys; returns its public key. */
function intermediateKey(
  intermediate: NonNullable<ParsedToken['intermediate']>,
  roots: KeyObject[],
  senderId: string,
  version: ProtocolVersion,
  now: Date,
): KeyObject {
  const signed = lengthValue(senderId, version, intermediate.signedKey);
  const verified = roots.some((root) => intermediate.signatures.some((sig) => ecdsaVerify(root, signed, sig)));
  if (!verified) fail('invalid_intermediate_signature', 'no root signing key signed the intermediate signing key');
  const key = parseJson(intermediate.signedKey);
  const expiration = isObject(key) ? millis(key.keyExpiration) : undefined;
  if (!isObject(key) || !isString(key.keyValue) || expiration === undefined) {
    fail('malformed_token', 'signedKey must be JSON with keyValue and keyExpiration');
  }
  if (isExpired(expiration, now)) {
    fail('intermediate_key_expired', `intermediate signing key expired at ${new Date(expiration).toISOString()}`);
  }
  try {
    return importSpki(key.keyValue);
  } catch {
    fail('malformed_token', 'signedKey.keyValue is not a base64 SPKI P-256 key');
  }
}

function decrypt(version: EncryptingVersion, signedMessage: string, privateKeys: string[]): Buffer {
  const message = parseJson(signedMessage);
  if (!isObject(message)) fail('malformed_token', 'signedMessage is not a JSON object');
  const ciphertext = decode(message.encryptedMessage, 'encryptedMessage');
  const tag = decode(message.tag, 'tag');
  const point = decode(message.ephemeralPublicKey, 'ephemeralPublicKey');
  let ephemeral: { point: Buffer; key: KeyObject };
  try {
    ephemeral = { point, key: importPoint(point) };
  } catch {
    fail('malformed_token', 'ephemeralPublicKey is not an uncompressed P-256 point');
  }
  if (privateKeys.length === 0) fail('invalid_config', 'no recipient private key is configured');
  for (const [i, pkcs8] of privateKeys.entries()) {
    let key: KeyObject;
    try {
      key = importPkcs8(pkcs8);
    } catch {
      fail('invalid_config', `recipient private key #${i + 1} is not a base64 PKCS#8 P-256 key`);
    }
    const plaintext = eciesDecrypt(version, key, ephemeral, ciphertext, tag);
    if (plaintext) return plaintext;
  }
  fail('invalid_tag', 'MAC tag does not match: tampered message, or encrypted for another recipient key');
}

function parseMessage(plaintext: Buffer | string, now: Date): DecryptedPayment {
  let text: string;
  try {
    text = isString(plaintext) ? plaintext : new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch {
    fail('plaintext_not_json', 'decrypted message is not UTF-8 JSON');
  }
  const message = parseJson(text);
  if (message === undefined) fail('plaintext_not_json', 'decrypted message is not JSON');
  if (!isObject(message)) fail('invalid_message', 'decrypted message is not a JSON object');
  const expiration = millis(message.messageExpiration);
  if (expiration === undefined) fail('invalid_message', 'messageExpiration is missing or not milliseconds');
  if (isExpired(expiration, now)) fail('message_expired', `message expired at ${new Date(expiration).toISOString()}`);
  const details = message.paymentMethodDetails;
  if (!isObject(details)) fail('invalid_message', 'paymentMethodDetails is missing');
  const { pan, expirationMonth: month, expirationYear: year, authMethod, cryptogram, eciIndicator } = details;
  if (!isString(pan) || !/^\d{12,19}$/.test(pan)) fail('invalid_message', 'paymentMethodDetails.pan is not 12-19 digits');
  if (!isInteger(month) || month < 1 || month > 12) fail('invalid_message', 'paymentMethodDetails.expirationMonth is not 1-12');
  if (!isInteger(year) || year < 2000) fail('invalid_message', 'paymentMethodDetails.expirationYear is not a year');
  if (authMethod !== 'PAN_ONLY' && authMethod !== 'CRYPTOGRAM_3DS') {
    fail('invalid_message', 'paymentMethodDetails.authMethod is not PAN_ONLY or CRYPTOGRAM_3DS');
  }
  if (authMethod === 'CRYPTOGRAM_3DS' && (!isString(cryptogram) || cryptogram === '')) {
    fail('invalid_message', 'paymentMethodDetails.cryptogram is missing for CRYPTOGRAM_3DS');
  }
  if (cryptogram !== undefined && !isString(cryptogram)) fail('invalid_message', 'paymentMethodDetails.cryptogram is not a string');
  if (eciIndicator !== undefined && !isString(eciIndicator)) fail('invalid_message', 'paymentMethodDetails.eciIndicator is not a string');
  return message as DecryptedPayment;
}

/**
 * Verifies and opens a payment token. Checks, in order: token JSON and fields, protocol version,
 * root keys, intermediate key signature then expiry (ECv2*), message signature, MAC tag and
 * decryption (ECv1/ECv2), plaintext JSON, message expiry, payment fields.
 * Throws TokenError; returns the message.
 */
export function openToken(token: string, opts: OpenOptions): DecryptedPayment {
  const senderId = opts.senderId ?? DEFAULT_SENDER_ID;
  if (!opts.recipientId) fail('invalid_config', 'recipientId is required');
  if (!(opts.now instanceof Date) || Number.isNaN(opts.now.getTime())) fail('invalid_config', 'now is not a valid Date');
  const parsed = parseToken(token);
  const version = parsed.protocolVersion;
  const roots = trustedRootKeys(opts.rootKeys, version, opts.now);
  const signers = parsed.intermediate ? [intermediateKey(parsed.intermediate, roots, senderId, version, opts.now)] : roots;
  const signed = lengthValue(senderId, opts.recipientId, version, parsed.signedMessage);
  if (!signers.some((key) => ecdsaVerify(key, signed, parsed.signature))) {
    fail('invalid_signature', `message signature does not verify for sender ${senderId} and recipient ${opts.recipientId}`);
  }
  const plaintext =
    version === 'ECv2SigningOnly' ? parsed.signedMessage : decrypt(version, parsed.signedMessage, opts.recipientPrivateKeys);
  return parseMessage(plaintext, opts.now);
}

/**
 * Builds a token the way the wallet provider does, signed with a sandbox root key. For the
 * sandbox wallet sheet and tests; the payload (with its messageExpiration) is sealed as given.
 */
export function sealToken(payload: object, opts: SealOptions): string {
  const senderId = opts.senderId ?? DEFAULT_SENDER_ID;
  const version = opts.protocolVersion;
  const root = importPkcs8(opts.rootPrivateKey);
  const plaintext = JSON.stringify(payload);
  let signedMessage = plaintext;
  if (version !== 'ECv2SigningOnly') {
    if (!opts.recipientPublicKey) throw new Error(`recipientPublicKey is required for ${version}`);
    signedMessage = JSON.stringify(eciesEncrypt(version, importPublicKey(opts.recipientPublicKey), Buffer.from(plaintext, 'utf8')));
  }
  let messageSigner = root;
  let intermediateSigningKey: { signedKey: string; signatures: string[] } | undefined;
  if (version !== 'ECv1') {
    messageSigner = opts.intermediatePrivateKey ? importPkcs8(opts.intermediatePrivateKey) : newP256KeyPair().privateKey;
    const keyExpiration = opts.intermediateKeyExpiration ?? String((opts.now ?? new Date()).getTime() + 7 * DAY_MS);
    const signedKey = JSON.stringify({ keyValue: exportSpki(messageSigner), keyExpiration });
    const signature = ecdsaSign(root, lengthValue(senderId, version, signedKey));
    intermediateSigningKey = { signedKey, signatures: [signature.toString('base64')] };
  }
  const signature = ecdsaSign(messageSigner, lengthValue(senderId, opts.recipientId, version, signedMessage));
  return JSON.stringify({ signature: signature.toString('base64'), intermediateSigningKey, protocolVersion: version, signedMessage });
}

/** Fresh sandbox keys, all base64 DER (public keys: SPKI for the root, a point for the recipient). */
export function generateSandboxKeys(): SandboxKeys {
  const root = newP256KeyPair();
  const recipient = newP256KeyPair();
  return {
    rootPrivateKey: exportPkcs8(root.privateKey),
    rootPublicKey: exportSpki(root.publicKey),
    recipientPrivateKey: exportPkcs8(recipient.privateKey),
    recipientPublicKey: exportPoint(recipient.publicKey).toString('base64'),
    intermediatePrivateKey: exportPkcs8(newP256KeyPair().privateKey),
  };
}
