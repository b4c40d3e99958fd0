/**
 * Crypto primitives of the wallet-b-pay payment token (Google Pay's ECv1 / ECv2 format).
 * Pure functions over node:crypto; the token format and its checks live in wallet-b-token.ts.
 * See docs/wallet-b-token.md.
 */
import {
  createCipheriv,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  sign,
  timingSafeEqual,
  verify,
  type KeyObject,
} from 'node:crypto';

export type ProtocolVersion = 'ECv1' | 'ECv2' | 'ECv2SigningOnly';
export type EncryptingVersion = Exclude<ProtocolVersion, 'ECv2SigningOnly'>;

/** The three fields of an encrypted signedMessage, all base64. */
export interface SealedMessage {
  encryptedMessage: string;
  ephemeralPublicKey: string;
  tag: string;
}

const CURVE = 'prime256v1';
const HKDF_SALT = Buffer.alloc(32); // 32 zero bytes
const HKDF_INFO = Buffer.from('Google', 'utf8');
const ZERO_IV = Buffer.alloc(16);
/** AES-CTR key length and HMAC-SHA256 key length per protocol version, in bytes. */
const KEY_SIZES: Record<EncryptingVersion, { enc: number; mac: number; cipher: string }> = {
  ECv1: { enc: 16, mac: 16, cipher: 'aes-128-ctr' },
  ECv2: { enc: 32, mac: 32, cipher: 'aes-256-ctr' },
};
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64 (padded); undefined when the text is not base64. */
export function fromBase64(text: string): Buffer | undefined {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** The signed bytes: each part as a 4-byte little-endian length followed by its UTF-8 bytes. */
export function lengthValue(...parts: string[]): Buffer {
  return Buffer.concat(
    parts.flatMap((part) => {
      const bytes = Buffer.from(part, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32LE(bytes.length);
      return [length, bytes];
    }),
  );
}

function requireP256(key: KeyObject): KeyObject {
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== CURVE) {
    throw new Error('not an EC P-256 key');
  }
  return key;
}

/** A P-256 public key from base64 DER SubjectPublicKeyInfo. Throws when it is not one. */
export function importSpki(base64: string): KeyObject {
  const der = fromBase64(base64);
  if (!der) throw new Error('not base64');
  return requireP256(createPublicKey({ key: der, format: 'der', type: 'spki' }));
}

/** A P-256 private key from base64 DER PKCS#8. Throws when it is not one. */
export function importPkcs8(base64: string): KeyObject {
  const der = fromBase64(base64);
  if (!der) throw new Error('not base64');
  return requireP256(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}

/** A P-256 public key from an uncompressed point (0x04 || X || Y). Throws when off the curve. */
export function importPoint(point: Buffer): KeyObject {
  if (point.length !== 65 || point[0] !== 0x04) throw new Error('not an uncompressed P-256 point');
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33).toString('base64url');
  return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
}

/** Base64 SPKI or base64 uncompressed point, whichever the text holds. */
export function importPublicKey(base64: string): KeyObject {
  const bytes = fromBase64(base64);
  if (bytes?.length === 65 && bytes[0] === 0x04) return importPoint(bytes);
  return importSpki(base64);
}

/** The uncompressed point (0x04 || X || Y) of a P-256 public key. */
export function exportPoint(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}

/** Base64 SPKI of a public key, or of the public half of a private key. */
export function exportSpki(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
}

export function exportPkcs8(key: KeyObject): string {
  return key.export({ format: 'der', type: 'pkcs8' }).toString('base64');
}

export function newP256KeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: CURVE });
}

/** ECDSA P-256 / SHA-256 signature, DER encoded. */
export function ecdsaSign(privateKey: KeyObject, data: Buffer): Buffer {
  return sign('sha256', data, privateKey);
}

/** True when the DER ECDSA signature verifies; false for any bad or malformed signature. */
export function ecdsaVerify(publicKey: KeyObject, data: Buffer, signature: Buffer): boolean {
  try {
    return verify('sha256', data, publicKey, signature);
  } catch {
    return false;
  }
}

/** HKDF-SHA256(salt = 32 zero bytes, info = "Google") over ephemeral point || shared secret. */
function deriveKeys(version: EncryptingVersion, ephemeralPoint: Buffer, sharedSecret: Buffer) {
  const sizes = KEY_SIZES[version];
  const ikm = Buffer.concat([ephemeralPoint, sharedSecret]);
  const keys = Buffer.from(hkdfSync('sha256', ikm, HKDF_SALT, HKDF_INFO, sizes.enc + sizes.mac));
  return { cipher: sizes.cipher, encKey: keys.subarray(0, sizes.enc), macKey: keys.subarray(sizes.enc) };
}

/** AES-CTR with a zero IV: the same operation encrypts and decrypts. */
function aesCtr(cipher: string, key: Buffer, data: Buffer): Buffer {
  const c = createCipheriv(cipher, key, ZERO_IV);
  return Buffer.concat([c.update(data), c.final()]);
}

function hmacSha256(key: Buffer, data: Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** ECIES-KEM encryption to the recipient's public key with a fresh ephemeral key. */
export function eciesEncrypt(version: EncryptingVersion, recipient: KeyObject, plaintext: Buffer): SealedMessage {
  const ephemeral = newP256KeyPair();
  const point = exportPoint(ephemeral.publicKey);
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipient });
  const { cipher, encKey, macKey } = deriveKeys(version, point, shared);
  const ciphertext = aesCtr(cipher, encKey, plaintext);
  return {
    encryptedMessage: ciphertext.toString('base64'),
    ephemeralPublicKey: point.toString('base64'),
    tag: hmacSha256(macKey, ciphertext).toString('base64'),
  };
}

/**
 * ECIES-KEM decryption with one recipient private key. Returns undefined when the tag does not
 * match (tampered ciphertext or tag, or a message for another key). The tag is checked, in
 * constant time, before anything is decrypted.
 */
export function eciesDecrypt(
  version: EncryptingVersion,
  recipient: KeyObject,
  ephemeral: { point: Buffer; key: KeyObject },
  ciphertext: Buffer,
  tag: Buffer,
): Buffer | undefined {
  const shared = diffieHellman({ privateKey: recipient, publicKey: ephemeral.key });
  const { cipher, encKey, macKey } = deriveKeys(version, ephemeral.point, shared);
  const expected = hmacSha256(macKey, ciphertext);
  if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) return undefined;
  return aesCtr(cipher, encKey, ciphertext);
}
