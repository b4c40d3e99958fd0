/**
 * wallet-a-pay payment tokens (EC_v1): verify the signature chain, then decrypt with the
 * project's payment processing key. Pure: keys, trusted roots and the clock come in as
 * arguments. The format is the provider's published one; the checks, in order:
 *   1. shape: version EC_v1, data, signature, header {ephemeralPublicKey, publicKeyHash, transactionId}
 *   2. signature: a detached CMS SignedData whose leaf (leaf marker) is issued by an
 *      intermediate (intermediate marker) issued by a trusted root, all valid now; the signed
 *      messageDigest is SHA-256(ephemeralPublicKey ‖ data ‖ transactionId ‖ applicationData)
 *      and the ECDSA signature over the signed attributes verifies with the leaf's key
 *   3. freshness: signingTime within `maxAgeMs` of now
 *   4. key: publicKeyHash names one of our processing keys
 *   5. decryption: ECDH with the ephemeral key, the NIST SP 800-56A single-step KDF, AES-256-GCM
 *   6. payload: a card number, expiry, amount, currency and a 3-D Secure cryptogram
 * See docs/wallets.md.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  randomBytes,
  timingSafeEqual,
  verify,
  type KeyObject,
  type X509Certificate,
} from 'node:crypto';
import { INTERMEDIATE_MARKER_OID, LEAF_MARKER_OID, readDetachedSignature, serialOf, signDetached, type Signer } from './wallet-a-pki.ts';

export type WalletATokenErrorCode =
  | 'invalid_format'
  | 'unsupported_version'
  | 'invalid_signature'
  | 'untrusted_certificate'
  | 'expired_certificate'
  | 'stale_token'
  | 'unknown_key'
  | 'invalid_tag'
  | 'invalid_payload';

export class WalletATokenError extends Error {
  constructor(
    readonly code: WalletATokenErrorCode,
    message: string,
  ) {
    super(message);
  }
}
// a declaration, not an arrow: a call to it narrows what it checked (TypeScript's control flow)
function fail(code: WalletATokenErrorCode, message: string): never {
  throw new WalletATokenError(code, message);
}

export interface PaymentData {
  version: string;
  data: string;
  signature: string;
  header: { ephemeralPublicKey: string; publicKeyHash: string; transactionId: string; applicationData?: string };
}

export interface ProcessingKey {
  /** PKCS#8 PEM or a KeyObject, EC P-256 */
  privateKey: string | KeyObject;
  /** base64 SHA-256 of the public key's SubjectPublicKeyInfo */
  publicKeyHash: string;
}

export interface OpenOptions {
  roots: X509Certificate[];
  keys: ProcessingKey[];
  /** the merchant identifier the token was made for: its SHA-256 is the KDF's party V */
  merchantIdentifier: string;
  now: Date;
  /** how old (or how far ahead) signingTime may be; 5 minutes unless set */
  maxAgeMs?: number;
}

/** The decrypted payment: what the provider's payload says, checked. */
export interface WalletAPayment {
  pan: string;
  /** MMYYYY, as the vault takes it */
  expiry: string;
  /** ISO 4217 numeric code */
  currencyNumeric: string;
  amount: number;
  cryptogram: string;
  eci: string;
  /** header.transactionId: unique per token, so a token pays once */
  tokenId: string;
  deviceManufacturerIdentifier?: string;
}

const DEFAULT_MAX_AGE_MS = 5 * 60_000;
const B64 = /^[A-Za-z0-9+/]+={0,2}$/;
// whole bytes only: Buffer.from(hex) drops a trailing half byte, which the signature would then not cover
const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const TOKEN_ID = /^(?:[0-9a-fA-F]{2}){1,64}$/;

/** The provider's token (`{paymentData, paymentMethod, transactionIdentifier}`), its paymentData, or either as JSON text. */
export function paymentDataOf(token: unknown): PaymentData {
  let t = token;
  if (typeof t === 'string') {
    try {
      t = JSON.parse(t);
    } catch {
      fail('invalid_format', 'the token is not JSON');
    }
  }
  const obj = (v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  const outer = obj(t) ?? fail('invalid_format', 'the token is not an object');
  const pd = obj(outer.paymentData) ?? outer;
  if (typeof pd.version !== 'string') fail('invalid_format', 'paymentData.version is missing');
  if (pd.version !== 'EC_v1') fail('unsupported_version', `version ${String(pd.version).slice(0, 20)} is not supported: only EC_v1`);
  const header = obj(pd.header) ?? fail('invalid_format', 'paymentData.header is missing');
  for (const [k, v] of [
    ['data', pd.data],
    ['signature', pd.signature],
    ['header.ephemeralPublicKey', header.ephemeralPublicKey],
    ['header.publicKeyHash', header.publicKeyHash],
  ] as const) {
    if (typeof v !== 'string' || !B64.test(v)) fail('invalid_format', `paymentData.${k} must be base64`);
  }
  if (typeof header.transactionId !== 'string' || !TOKEN_ID.test(header.transactionId))
    fail('invalid_format', 'paymentData.header.transactionId must be hex');
  if (header.applicationData !== undefined && (typeof header.applicationData !== 'string' || !HEX.test(header.applicationData))) {
    fail('invalid_format', 'paymentData.header.applicationData must be hex');
  }
  return pd as unknown as PaymentData;
}

const sha256 = (...parts: (Buffer | string)[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** What the signature's messageDigest covers. */
const signedContent = (pd: PaymentData) =>
  sha256(
    Buffer.from(pd.header.ephemeralPublicKey, 'base64'),
    Buffer.from(pd.data, 'base64'),
    Buffer.from(pd.header.transactionId, 'hex'),
    Buffer.from(pd.header.applicationData ?? '', 'hex'),
  );

const within = (cert: X509Certificate, now: Date) => now >= new Date(cert.validFrom) && now <= new Date(cert.validTo);

/** Step 2 and 3: the signature, its certificate chain and its time. */
function verifySignature(pd: PaymentData, opts: Pick<OpenOptions, 'roots' | 'now' | 'maxAgeMs'>) {
  let sig;
  try {
    sig = readDetachedSignature(Buffer.from(pd.signature, 'base64'));
  } catch (err) {
    return fail('invalid_signature', `signature is not a detached CMS signature (${(err as Error).message})`);
  }
  const leaf =
    sig.certificates.find((c) => c.markers.includes(LEAF_MARKER_OID))?.cert ??
    fail('untrusted_certificate', 'the signature has no leaf certificate with the leaf marker extension');
  const intermediate =
    sig.certificates.find((c) => c.markers.includes(INTERMEDIATE_MARKER_OID))?.cert ??
    fail('untrusted_certificate', 'the signature has no intermediate certificate with the intermediate marker extension');
  if (!leaf.checkIssued(intermediate) || !leaf.verify(intermediate.publicKey))
    fail('untrusted_certificate', 'the leaf certificate is not issued by the intermediate');
  const root =
    opts.roots.find((r) => intermediate.checkIssued(r) && intermediate.verify(r.publicKey)) ??
    fail('untrusted_certificate', 'the intermediate certificate is not issued by a trusted root');
  for (const [name, cert] of [
    ['leaf', leaf],
    ['intermediate', intermediate],
    ['root', root],
  ] as const) {
    if (!within(cert, opts.now))
      fail('expired_certificate', `the ${name} certificate is not valid now (valid ${cert.validFrom} to ${cert.validTo})`);
  }
  if (serialOf(leaf) !== sig.signerSerial) fail('invalid_signature', 'the signer is not the leaf certificate');
  if (sig.digestAlgorithm !== '2.16.840.1.101.3.4.2.1' || sig.signatureAlgorithm !== '1.2.840.10045.4.3.2')
    fail('invalid_signature', 'the signature is not ECDSA with SHA-256');
  const digest = signedContent(pd);
  if (!sig.messageDigest || sig.messageDigest.length !== digest.length || !timingSafeEqual(sig.messageDigest, digest)) {
    fail('invalid_signature', 'the signed message digest does not match: the token was altered');
  }
  if (!verify('sha256', sig.signedAttributes, { key: leaf.publicKey, dsaEncoding: 'der' }, sig.signature))
    fail('invalid_signature', 'the signature does not verify');
  const maxAge = opts.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  if (!sig.signingTime) fail('invalid_signature', 'the signature has no signing time');
  const age = opts.now.getTime() - sig.signingTime!.getTime();
  if (age > maxAge || age < -maxAge)
    fail('stale_token', `the token was signed at ${sig.signingTime!.toISOString()}, more than ${maxAge / 1000} s from now`);
}

/** The KDF of EC_v1: SHA-256(counter 1 ‖ Z ‖ algorithm id ‖ party U ‖ party V). */
function symmetricKey(sharedSecret: Buffer, merchantIdentifier: string) {
  // "Apple" is the protocol's fixed party U; party V is the SHA-256 of the merchant identifier
  return sha256(Buffer.from([0, 0, 0, 1]), sharedSecret, Buffer.from('\x0did-aes256-GCM', 'latin1'), 'Apple', sha256(merchantIdentifier));
}
const IV = Buffer.alloc(16);

/** base64 SHA-256 of a public key's SubjectPublicKeyInfo: how a token names the key it is encrypted to. */
export const publicKeyHash = (key: KeyObject | string) => sha256(asPublic(key).export({ format: 'der', type: 'spki' })).toString('base64');
const asPublic = (key: KeyObject | string) => (typeof key !== 'string' && key.type === 'public' ? key : createPublicKey(key));

/** Steps 4 and 5: the payload's JSON text. */
function decrypt(pd: PaymentData, keys: ProcessingKey[], merchantIdentifier: string): string {
  const key =
    keys.find((k) => k.publicKeyHash === pd.header.publicKeyHash) ??
    fail('unknown_key', 'the token is encrypted to a key this project does not hold (publicKeyHash)');
  let ephemeral: KeyObject;
  try {
    ephemeral = createPublicKey({ key: Buffer.from(pd.header.ephemeralPublicKey, 'base64'), format: 'der', type: 'spki' });
  } catch {
    return fail('invalid_format', 'header.ephemeralPublicKey is not a public key');
  }
  if (ephemeral.asymmetricKeyDetails?.namedCurve !== 'prime256v1') fail('invalid_format', 'header.ephemeralPublicKey is not a P-256 key');
  const shared = diffieHellman({
    privateKey: typeof key.privateKey === 'string' ? createPrivateKey(key.privateKey) : key.privateKey,
    publicKey: ephemeral,
  });
  const data = Buffer.from(pd.data, 'base64');
  if (data.length <= 16) fail('invalid_format', 'data is too short');
  try {
    const d = createDecipheriv('aes-256-gcm', symmetricKey(shared, merchantIdentifier), IV, { authTagLength: 16 });
    d.setAuthTag(data.subarray(data.length - 16));
    return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString('utf8');
  } catch {
    return fail('invalid_tag', 'the token does not decrypt: encrypted for another merchant or key, or altered');
  }
}

/** Step 6: the payload the wallet encrypted. Only 3-D Secure payment data is taken (EMV is for other regions). */
export function readPayload(text: string, tokenId: string): WalletAPayment {
  // the decrypted payload's fields, each checked before it is used
  let p: {
    applicationPrimaryAccountNumber?: unknown;
    applicationExpirationDate?: unknown;
    currencyCode?: unknown;
    transactionAmount?: unknown;
    paymentDataType?: unknown;
    paymentData?: { onlinePaymentCryptogram?: unknown; eciIndicator?: unknown } | null;
    deviceManufacturerIdentifier?: unknown;
  };
  try {
    p = JSON.parse(text) ?? {}; // null: every field missing
  } catch {
    return fail('invalid_payload', 'the decrypted payload is not JSON');
  }
  const pan = p?.applicationPrimaryAccountNumber;
  if (typeof pan !== 'string' || !/^\d{12,19}$/.test(pan)) fail('invalid_payload', 'applicationPrimaryAccountNumber is not a card number');
  const exp = p.applicationExpirationDate;
  if (typeof exp !== 'string' || !/^\d{2}(0[1-9]|1[0-2])\d{2}$/.test(exp))
    fail('invalid_payload', 'applicationExpirationDate is not YYMMDD');
  if (typeof p.currencyCode !== 'string' || !/^\d{3}$/.test(p.currencyCode))
    fail('invalid_payload', 'currencyCode is not an ISO 4217 numeric code');
  if (typeof p.transactionAmount !== 'number' || !Number.isSafeInteger(p.transactionAmount) || p.transactionAmount < 0)
    fail('invalid_payload', 'transactionAmount is not an amount in minor units');
  if (p.paymentDataType !== '3DSecure')
    fail('invalid_payload', `paymentDataType ${String(p.paymentDataType).slice(0, 20)} is not supported: only 3DSecure`);
  const cryptogram = p.paymentData?.onlinePaymentCryptogram;
  if (typeof cryptogram !== 'string' || !/^[A-Za-z0-9+/=]{1,256}$/.test(cryptogram))
    fail('invalid_payload', 'paymentData.onlinePaymentCryptogram is missing');
  const eci = p.paymentData?.eciIndicator ?? '';
  if (typeof eci !== 'string' || !/^(\d{1,2})?$/.test(eci)) fail('invalid_payload', 'paymentData.eciIndicator is not an ECI');
  return {
    pan,
    expiry: `${exp.slice(2, 4)}20${exp.slice(0, 2)}`,
    currencyNumeric: p.currencyCode,
    amount: p.transactionAmount,
    cryptogram,
    eci: eci.padStart(eci ? 2 : 0, '0'),
    tokenId: tokenId.toLowerCase(),
    deviceManufacturerIdentifier: typeof p.deviceManufacturerIdentifier === 'string' ? p.deviceManufacturerIdentifier : undefined,
  };
}

/** Every check, in order; the first failure throws a WalletATokenError with its code. */
export function openPaymentToken(token: unknown, opts: OpenOptions): WalletAPayment {
  const pd = paymentDataOf(token);
  verifySignature(pd, opts);
  return readPayload(decrypt(pd, opts.keys, opts.merchantIdentifier), pd.header.transactionId);
}

// ---- sealing: the sandbox wallet and tests --------------------------------------------

export interface SealOptions {
  signer: Signer;
  /** the processing key's public half (or its private key) the token is encrypted to */
  recipient: KeyObject | string;
  merchantIdentifier: string;
  signingTime: Date;
}

/** A token as the wallet makes it: encrypted to the processing key, signed by `signer`. */
export function sealPaymentToken(payload: object, opts: SealOptions): PaymentData {
  const ephemeral = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: asPublic(opts.recipient) });
  const c = createCipheriv('aes-256-gcm', symmetricKey(shared, opts.merchantIdentifier), IV, { authTagLength: 16 });
  const data = Buffer.concat([c.update(JSON.stringify(payload), 'utf8'), c.final(), c.getAuthTag()]);
  const header = {
    ephemeralPublicKey: ephemeral.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    publicKeyHash: publicKeyHash(opts.recipient),
    transactionId: randomBytes(32).toString('hex'),
  };
  const pd: PaymentData = { version: 'EC_v1', data: data.toString('base64'), signature: '', header };
  pd.signature = signDetached(signedContent(pd), opts.signer, opts.signingTime).toString('base64');
  return pd;
}
