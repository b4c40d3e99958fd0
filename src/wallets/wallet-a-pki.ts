/**
 * The PKI of wallet-a-pay payment tokens: the detached CMS (PKCS#7) signature a token
 * carries, read for verification and written for the sandbox, and the sandbox's own
 * certificate chain (root, intermediate, leaf with the provider's marker extensions).
 * ASN.1 goes through pkijs/asn1js; every signature is made and checked with node:crypto.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Asn1js from 'asn1js';
import type * as Pkijs from 'pkijs';

// Loaded on first use: they take a good part of a second to load, and most processes never need them.
const load = createRequire(import.meta.url);
type Libs = { asn1js: typeof Asn1js; pkijs: typeof Pkijs };
let libs: Libs | undefined;
const lib = (): Libs => (libs ??= { asn1js: load('asn1js'), pkijs: load('pkijs') });

/** Marker extensions of the provider's signing certificates (leaf and intermediate). */
export const LEAF_MARKER_OID = '1.2.840.113635.100.6.29';
export const INTERMEDIATE_MARKER_OID = '1.2.840.113635.100.6.2.14';

const OID = {
  sha256: '2.16.840.1.101.3.4.2.1',
  ecdsaSha256: '1.2.840.10045.4.3.2',
  data: '1.2.840.113549.1.7.1',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
};

const bytes = (b: ArrayBuffer | Uint8Array) => Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b));
const arrayBuffer = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/** What verification needs from a token's signature. */
export interface DetachedSignature {
  certificates: { cert: X509Certificate; markers: string[] }[];
  /** the signer's issuer and serial number, to find its certificate */
  signerSerial: string;
  digestAlgorithm: string;
  signatureAlgorithm: string;
  messageDigest?: Buffer;
  signingTime?: Date;
  /** DER of the signed attributes as a SET: what the signature covers */
  signedAttributes: Buffer;
  signature: Buffer;
}

/** Parses a CMS SignedData with one signer and signed attributes; throws on any other shape. */
export function readDetachedSignature(der: Buffer): DetachedSignature {
  const { asn1js, pkijs } = lib();
  const asn = asn1js.fromBER(arrayBuffer(der));
  if (asn.offset === -1) throw new Error('not DER');
  const info = new pkijs.ContentInfo({ schema: asn.result });
  if (info.contentType !== pkijs.ContentInfo.SIGNED_DATA) throw new Error('not a SignedData');
  const signed = new pkijs.SignedData({ schema: info.content });
  if (signed.signerInfos.length !== 1) throw new Error('not exactly one signer');
  const signer = signed.signerInfos[0];
  if (!signer.signedAttrs) throw new Error('no signed attributes');
  const certificates = (signed.certificates ?? [])
    .filter((c): c is Pkijs.Certificate => c instanceof pkijs.Certificate)
    .map((c) => ({ cert: new X509Certificate(bytes(c.toSchema().toBER())), markers: (c.extensions ?? []).map((e) => e.extnID) }));
  const attr = (oid: string) => signer.signedAttrs!.attributes.find((a) => a.type === oid)?.values[0];
  const digest = attr(OID.messageDigest);
  const time = attr(OID.signingTime);
  const signedAttributes = bytes(signer.signedAttrs.encodedValue);
  signedAttributes[0] = 0x31; // the signature covers the attributes as a SET, not as the [0] of SignerInfo
  const sid = signer.sid;
  if (!(sid instanceof pkijs.IssuerAndSerialNumber)) throw new Error('signer is not named by issuer and serial number');
  return {
    certificates,
    signerSerial: normalSerial(bytes(sid.serialNumber.valueBlock.valueHexView).toString('hex')),
    digestAlgorithm: signer.digestAlgorithm.algorithmId,
    signatureAlgorithm: signer.signatureAlgorithm.algorithmId,
    messageDigest: digest instanceof asn1js.OctetString ? bytes(digest.valueBlock.valueHexView) : undefined,
    signingTime: time instanceof asn1js.UTCTime || time instanceof asn1js.GeneralizedTime ? time.toDate() : undefined,
    signedAttributes,
    signature: bytes(signer.signature.valueBlock.valueHexView),
  };
}

/** A serial in capital hex without the leading zero bytes DER adds to keep a high-bit INTEGER positive. */
const normalSerial = (hex: string) => hex.toUpperCase().replace(/^(00)+(?=.)/, '');
/** node:crypto's X509Certificate serial, comparable with readDetachedSignature's signerSerial. */
export const serialOf = (cert: X509Certificate) => normalSerial(cert.serialNumber);

// ---- writing: the sandbox -------------------------------------------------------------

/** A signing certificate with its key, and the intermediate that issued it. */
export interface Signer {
  leaf: string; // PEM
  intermediate: string; // PEM
  privateKey: KeyObject | string; // PKCS#8 PEM
}

const parseCert = (pem: string) => lib().pkijs.Certificate.fromBER(arrayBuffer(new X509Certificate(pem).raw));

/** A detached CMS SignedData over content of the given SHA-256 `digest`, with signingTime, as the provider's wallet signs tokens. */
export function signDetached(digest: Buffer, signer: Signer, signingTime: Date): Buffer {
  const { asn1js, pkijs } = lib();
  const leaf = parseCert(signer.leaf);
  const attributes = [
    new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.data })] }),
    new pkijs.Attribute({ type: OID.signingTime, values: [new asn1js.UTCTime({ valueDate: signingTime })] }),
    new pkijs.Attribute({ type: OID.messageDigest, values: [new asn1js.OctetString({ valueHex: arrayBuffer(digest) })] }),
  ];
  const toSign = bytes(new asn1js.Set({ value: attributes.map((a) => a.toSchema()) }).toBER());
  const key = typeof signer.privateKey === 'string' ? createPrivateKey(signer.privateKey) : signer.privateKey;
  const signature = sign('sha256', toSign, { key, dsaEncoding: 'der' });
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: leaf.issuer, serialNumber: leaf.serialNumber }),
    digestAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes }),
    signatureAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaSha256 }),
    signature: new asn1js.OctetString({ valueHex: arrayBuffer(signature) }),
  });
  const signed = new pkijs.SignedData({
    version: 1,
    digestAlgorithms: [new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 })],
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    certificates: [leaf, parseCert(signer.intermediate)],
    signerInfos: [signerInfo],
  });
  const info = new pkijs.ContentInfo({ contentType: pkijs.ContentInfo.SIGNED_DATA, content: signed.toSchema(true) });
  return bytes(info.toSchema().toBER());
}

interface CertSpec {
  name: string;
  publicKey: KeyObject;
  issuerName?: string;
  signingKey: KeyObject;
  ca: boolean;
  marker?: string;
  notBefore: Date;
  notAfter: Date;
}

function commonName(name: string) {
  const { asn1js, pkijs } = lib();
  return new pkijs.RelativeDistinguishedNames({
    typesAndValues: [new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: name }) })],
  });
}

/** An X.509 v3 certificate signed with ECDSA-SHA256 by node:crypto. */
function makeCertificate(spec: CertSpec): string {
  const { asn1js, pkijs } = lib();
  const cert = new pkijs.Certificate();
  cert.version = 2;
  const serial = randomBytes(12);
  serial[0] &= 0x7f; // a positive INTEGER
  serial[0] |= 0x01; // with no leading zero byte
  cert.serialNumber = new asn1js.Integer({ valueHex: arrayBuffer(serial) });
  cert.issuer = commonName(spec.issuerName ?? spec.name);
  cert.subject = commonName(spec.name);
  // UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5)
  const time = (d: Date) => new pkijs.Time({ type: d.getUTCFullYear() < 2050 ? 0 : 1, value: d });
  cert.notBefore = time(spec.notBefore);
  cert.notAfter = time(spec.notAfter);
  const spki = spec.publicKey.export({ format: 'der', type: 'spki' });
  cert.subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(arrayBuffer(spki));
  const extensions = [
    new pkijs.Extension({
      extnID: OID.basicConstraints,
      critical: true,
      extnValue: new pkijs.BasicConstraints({ cA: spec.ca }).toSchema().toBER(false),
    }),
  ];
  if (spec.ca) {
    // keyCertSign and cRLSign: bits 5 and 6 of the KeyUsage BIT STRING
    extensions.push(
      new pkijs.Extension({
        extnID: OID.keyUsage,
        critical: true,
        extnValue: new asn1js.BitString({ valueHex: new Uint8Array([0x06]).buffer, unusedBits: 1 }).toBER(false),
      }),
    );
  }
  if (spec.marker) extensions.push(new pkijs.Extension({ extnID: spec.marker, extnValue: new asn1js.Null().toBER(false) }));
  cert.extensions = extensions;
  cert.signature = new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaSha256 });
  cert.signatureAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaSha256 });
  const tbs = bytes(cert.encodeTBS().toBER());
  cert.tbsView = new Uint8Array(tbs);
  cert.signatureValue = new asn1js.BitString({ valueHex: arrayBuffer(sign('sha256', tbs, { key: spec.signingKey, dsaEncoding: 'der' })) });
  return new X509Certificate(bytes(cert.toSchema().toBER())).toString();
}

export interface SandboxChain {
  root: string; // PEM
  intermediate: string; // PEM
  leaf: string; // PEM
  /** the leaf's key, PKCS#8 PEM */
  leafKey: string;
}

const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

/**
 * A certificate chain of the provider's shape: a root, an intermediate with the intermediate
 * marker and a leaf with the leaf marker. The root's and intermediate's keys are dropped once
 * they have signed: only the chain's certificates and the leaf key are kept.
 */
export function makeSandboxChain(label: string, notBefore: Date, notAfter: Date): SandboxChain {
  const root = ecKey();
  const intermediate = ecKey();
  const leaf = ecKey();
  const names = { root: `${label} root CA`, intermediate: `${label} intermediate CA`, leaf: `${label} signing` };
  const common = { notBefore, notAfter };
  return {
    root: makeCertificate({ ...common, name: names.root, publicKey: root.publicKey, signingKey: root.privateKey, ca: true }),
    intermediate: makeCertificate({
      ...common,
      name: names.intermediate,
      issuerName: names.root,
      publicKey: intermediate.publicKey,
      signingKey: root.privateKey,
      ca: true,
      marker: INTERMEDIATE_MARKER_OID,
    }),
    leaf: makeCertificate({
      ...common,
      name: names.leaf,
      issuerName: names.intermediate,
      publicKey: leaf.publicKey,
      signingKey: intermediate.privateKey,
      ca: false,
      marker: LEAF_MARKER_OID,
    }),
    leafKey: leaf.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}
