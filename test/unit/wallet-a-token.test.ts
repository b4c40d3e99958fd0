import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { thrownWithCode } from '../helpers/throws.ts';
import { spawnSync } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  openPaymentToken,
  paymentDataOf,
  publicKeyHash,
  readPayload,
  sealPaymentToken,
  WalletATokenError,
  type OpenOptions,
  type PaymentData,
  type SealOptions,
  type WalletATokenErrorCode,
} from '../../src/wallets/wallet-a-token.ts';
import { makeSandboxChain, signDetached, type SandboxChain } from '../../src/wallets/wallet-a-pki.ts';

/** Injected clock; every chain and signingTime is relative to it. */
const NOW = new Date('2025-06-01T12:00:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const YEAR = 365 * 24 * HOUR;
const at = (ms: number) => new Date(NOW.getTime() + ms);
const MERCHANT = 'merchant.com.example.sandbox';

const chain = makeSandboxChain('sandbox', at(-YEAR), at(YEAR));
/** Same names, another root: only the signatures tell them apart. */
const foreign = makeSandboxChain('sandbox', at(-YEAR), at(YEAR));
const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const otherKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

const signerOf = (c: SandboxChain) => ({ leaf: c.leaf, intermediate: c.intermediate, privateKey: c.leafKey });
const payload = (over: Record<string, unknown> = {}) => ({
  applicationPrimaryAccountNumber: '4111111111111111',
  applicationExpirationDate: '301231',
  currencyCode: '978',
  transactionAmount: 1250,
  deviceManufacturerIdentifier: '040010030273',
  paymentDataType: '3DSecure',
  paymentData: { onlinePaymentCryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=', eciIndicator: '5' },
  ...over,
});
const seal = (over: Partial<SealOptions> = {}, body: object = payload()): PaymentData =>
  sealPaymentToken(body, { signer: signerOf(chain), recipient: key.publicKey, merchantIdentifier: MERCHANT, signingTime: NOW, ...over });
const opts = (over: Partial<OpenOptions> = {}): OpenOptions => ({
  roots: [new X509Certificate(chain.root)],
  keys: [{ privateKey: key.privateKey, publicKeyHash: publicKeyHash(key.publicKey) }],
  merchantIdentifier: MERCHANT,
  now: NOW,
  ...over,
});
const open = (token: unknown, over: Partial<OpenOptions> = {}) => openPaymentToken(token, opts(over));

const refused = (fn: () => unknown, code: WalletATokenErrorCode) => thrownWithCode(fn, WalletATokenError, code);

/** The bytes the signature covers, per the format: ephemeralPublicKey ‖ data ‖ transactionId ‖ applicationData. */
const signedBytes = (pd: PaymentData) =>
  Buffer.concat([
    Buffer.from(pd.header.ephemeralPublicKey, 'base64'),
    Buffer.from(pd.data, 'base64'),
    Buffer.from(pd.header.transactionId, 'hex'),
    Buffer.from(pd.header.applicationData ?? '', 'hex'),
  ]);
/** Changes the token, then signs it again with the sandbox leaf: the signature passes, later checks see the change. */
function resigned(pd: PaymentData, change: (t: PaymentData) => void): PaymentData {
  const t = structuredClone(pd);
  change(t);
  t.signature = signDetached(createHash('sha256').update(signedBytes(t)).digest(), signerOf(chain), NOW).toString('base64');
  return t;
}
const flip = (base64: string, at: number) => {
  const b = Buffer.from(base64, 'base64');
  b[at < 0 ? b.length + at : at] ^= 0x01;
  return b.toString('base64');
};

describe('round trip', () => {
  const EXPECTED = {
    pan: '4111111111111111',
    expiry: '122030',
    currencyNumeric: '978',
    amount: 1250,
    cryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=',
    eci: '05',
  };

  test('seal then open gives the checked payment, tokenId the lower-case transactionId', () => {
    const pd = seal();
    pd.header.transactionId = pd.header.transactionId.toUpperCase(); // the signed bytes are the same
    assert.deepEqual(open(pd), {
      ...EXPECTED,
      tokenId: pd.header.transactionId.toLowerCase(),
      deviceManufacturerIdentifier: '040010030273',
    });
  });

  test('the full token, the bare paymentData, and either as JSON text', () => {
    const pd = seal();
    const full = {
      paymentData: pd,
      paymentMethod: { displayName: 'Visa 1111', network: 'Visa', type: 'debit' },
      transactionIdentifier: pd.header.transactionId.toUpperCase(),
    };
    for (const token of [full, pd, JSON.stringify(full), JSON.stringify(pd)]) {
      assert.deepEqual(paymentDataOf(token), pd);
      assert.equal(open(token).pan, EXPECTED.pan);
    }
  });

  test('processing keys as PKCS#8 PEM; the one named by publicKeyHash is used', () => {
    const pem = (k: typeof key) => k.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const keys = [otherKey, key].map((k) => ({ privateKey: pem(k), publicKeyHash: publicKeyHash(k.publicKey) }));
    assert.equal(open(seal(), { keys }).amount, 1250);
  });

  test('signed applicationData is accepted; eci is padded, or empty when absent', () => {
    assert.equal(open(resigned(seal(), (t) => (t.header.applicationData = 'c0ffee'))).eci, '05');
    assert.equal(
      readPayload(JSON.stringify(payload({ paymentData: { onlinePaymentCryptogram: 'AQ==', eciIndicator: '07' } })), 'AB').eci,
      '07',
    );
    assert.equal(readPayload(JSON.stringify(payload({ paymentData: { onlinePaymentCryptogram: 'AQ==' } })), 'AB').eci, '');
  });

  test('re-signing an unchanged token keeps it valid (the tamper helper is sound)', () => {
    assert.equal(open(resigned(seal(), () => {})).pan, EXPECTED.pan);
  });
});

describe('each check has its code', () => {
  test('invalid_format', () => {
    const pd = seal();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' })
      .publicKey.export({ format: 'der', type: 'spki' })
      .toString('base64');
    const cases: unknown[] = [
      'not json',
      '[]',
      42,
      null,
      { ...pd, version: undefined },
      { ...pd, header: undefined },
      { ...pd, data: 'not base64!' },
      { ...pd, signature: '' },
      { ...pd, header: { ...pd.header, transactionId: 'xyz' } },
      { ...pd, header: { ...pd.header, applicationData: 'not hex' } },
    ];
    for (const token of cases) refused(() => open(token), 'invalid_format');
    refused(() => open(resigned(pd, (t) => (t.header.ephemeralPublicKey = Buffer.from('not a key').toString('base64')))), 'invalid_format');
    refused(() => open(resigned(pd, (t) => (t.header.ephemeralPublicKey = p384))), 'invalid_format');
    refused(() => open(resigned(pd, (t) => (t.data = Buffer.alloc(16).toString('base64')))), 'invalid_format');
  });

  test('unsupported_version', () => {
    const pd = seal();
    refused(() => open({ ...pd, version: 'RSA_v1' }), 'unsupported_version');
    refused(() => open({ paymentData: { ...pd, version: 'EC_v2' } }), 'unsupported_version');
  });

  test('invalid_signature: not CMS, or the signed bytes changed', () => {
    const pd = seal();
    const cases: PaymentData[] = [
      { ...pd, signature: Buffer.from('not a CMS signature').toString('base64') },
      { ...pd, data: flip(pd.data, 3) },
      { ...pd, header: { ...pd.header, transactionId: pd.header.transactionId.replace(/^./, (c) => (c === '0' ? '1' : '0')) } },
      { ...pd, header: { ...pd.header, applicationData: 'c0ffee' } },
      { ...pd, header: { ...pd.header, ephemeralPublicKey: seal().header.ephemeralPublicKey } },
      { ...pd, signature: seal().signature },
    ];
    for (const token of cases) refused(() => open(token), 'invalid_signature');
  });

  test('untrusted_certificate: a chain under another root, or no roots', () => {
    refused(() => open(seal({ signer: signerOf(foreign) })), 'untrusted_certificate');
    refused(() => open(seal(), { roots: [] }), 'untrusted_certificate');
    refused(() => open(seal(), { roots: [new X509Certificate(foreign.root)] }), 'untrusted_certificate');
  });

  test('expired_certificate: a chain not valid at the token clock', () => {
    const ended = makeSandboxChain('ended', at(-2 * YEAR), at(-MIN));
    refused(() => open(seal({ signer: signerOf(ended) }), { roots: [new X509Certificate(ended.root)] }), 'expired_certificate');
    const future = makeSandboxChain('future', at(MIN), at(YEAR));
    refused(() => open(seal({ signer: signerOf(future) }), { roots: [new X509Certificate(future.root)] }), 'expired_certificate');
  });

  test('stale_token: signingTime more than 5 minutes either side of now', () => {
    refused(() => open(seal({ signingTime: at(-5 * MIN - 1000) })), 'stale_token');
    refused(() => open(seal({ signingTime: at(5 * MIN + 1000) })), 'stale_token');
    assert.ok(open(seal({ signingTime: at(-5 * MIN) })));
    assert.ok(open(seal({ signingTime: at(5 * MIN) })));
  });

  test('stale_token: maxAgeMs is honoured', () => {
    const token = seal({ signingTime: at(-2 * MIN) });
    assert.ok(open(token));
    refused(() => open(token, { maxAgeMs: MIN }), 'stale_token');
    assert.ok(open(seal({ signingTime: at(-20 * MIN) }), { maxAgeMs: 30 * MIN }));
  });

  test('unknown_key: encrypted to a key we do not hold', () => {
    refused(() => open(seal({ recipient: otherKey.publicKey })), 'unknown_key');
    refused(() => open(seal(), { keys: [] }), 'unknown_key');
  });

  test('invalid_tag: another merchant identifier, or a tampered tag or ciphertext under a valid signature', () => {
    refused(() => open(seal(), { merchantIdentifier: 'merchant.com.example.other' }), 'invalid_tag');
    refused(() => open(seal({ merchantIdentifier: 'merchant.com.example.other' })), 'invalid_tag');
    refused(() => open(resigned(seal(), (t) => (t.data = flip(t.data, -1)))), 'invalid_tag');
    refused(() => open(resigned(seal(), (t) => (t.data = flip(t.data, 0)))), 'invalid_tag');
  });

  test('invalid_payload: decrypted JSON that is not a 3-D Secure payment', () => {
    const cases: Record<string, unknown>[] = [
      { paymentDataType: 'EMV' },
      { applicationPrimaryAccountNumber: '4111 1111 1111 1111' },
      { applicationPrimaryAccountNumber: '41111111111' },
      { applicationExpirationDate: '2913xx' },
      { applicationExpirationDate: '301331' },
      { currencyCode: 'EUR' },
      { transactionAmount: -1 },
      { transactionAmount: 12.5 },
      { paymentData: { eciIndicator: '05' } },
      { paymentData: { onlinePaymentCryptogram: 'AQ==', eciIndicator: 'x' } },
    ];
    for (const over of cases) {
      const err = refused(() => open(seal({}, payload(over))), 'invalid_payload');
      assert.doesNotMatch(err.message, /4111/, 'error messages never carry the PAN');
    }
  });

  test('invalid_payload: plaintext that is not a JSON object', () => {
    for (const text of ['not json', '', 'null', '[]']) refused(() => readPayload(text, 'ab'), 'invalid_payload');
  });

  test('WalletATokenError is an Error with a code', () => {
    const err = refused(() => open('x'), 'invalid_format');
    assert.ok(err instanceof Error);
  });
});

describe('checks run in the documented order', () => {
  test('untrusted before unknown key; expired before stale; a bad signature before everything after it', () => {
    refused(() => open(seal({ signer: signerOf(foreign), recipient: otherKey.publicKey })), 'untrusted_certificate');
    refused(() => open(seal({ signingTime: at(2 * YEAR) }), { now: at(2 * YEAR) }), 'expired_certificate');
    const stale = seal({ signingTime: at(-HOUR), recipient: otherKey.publicKey });
    refused(() => open({ ...stale, data: flip(stale.data, 0) }), 'invalid_signature');
    refused(() => open(stale), 'stale_token');
    refused(() => open(seal({ recipient: otherKey.publicKey }), { merchantIdentifier: 'other' }), 'unknown_key');
  });
});

describe('publicKeyHash', () => {
  test('base64 SHA-256 of the SPKI DER, whatever form the key is given in', () => {
    const spki = key.publicKey.export({ format: 'der', type: 'spki' });
    const expected = createHash('sha256').update(spki).digest('base64');
    const forms = [
      key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      key.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      key.publicKey,
      key.privateKey,
      createPublicKey(key.privateKey),
    ];
    for (const form of forms) assert.equal(publicKeyHash(form), expected);
    assert.notEqual(publicKeyHash(otherKey.publicKey), expected);
    assert.equal(seal().header.publicKeyHash, expected);
  });
});

describe('interop', () => {
  test('the CMS signature verifies with openssl cms -verify', () => {
    const pd = resigned(seal(), (t) => (t.header.applicationData = 'c0ffee'));
    const dir = mkdtempSync(join(tmpdir(), 'wallet-a-cms-'));
    try {
      writeFileSync(join(dir, 'sig.der'), Buffer.from(pd.signature, 'base64'));
      writeFileSync(join(dir, 'root.pem'), chain.root);
      const verify = (content: Buffer) => {
        writeFileSync(join(dir, 'content.bin'), content);
        const args = ['cms', '-verify', '-inform', 'DER', '-in', join(dir, 'sig.der'), '-binary', '-content', join(dir, 'content.bin')];
        args.push(
          '-CAfile',
          join(dir, 'root.pem'),
          '-purpose',
          'any',
          '-attime',
          String(NOW.getTime() / 1000),
          '-out',
          join(dir, 'out.bin'),
        );
        return spawnSync('openssl', args, { encoding: 'utf8' });
      };
      const ok = verify(signedBytes(pd));
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(ok.stderr, /Verification successful/);
      const altered = signedBytes(pd);
      altered[0] ^= 0x01;
      assert.notEqual(verify(altered).status, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('found in review', () => {
  test('hex fields are whole bytes: an extra half byte (outside the signature) is refused', () => {
    const pd = seal();
    // Buffer.from(hex) drops a trailing half byte, so one signed token could otherwise carry 16 token ids
    refused(() => open({ ...pd, header: { ...pd.header, transactionId: `${pd.header.transactionId}0` } }), 'invalid_format');
    refused(() => open({ ...pd, header: { ...pd.header, applicationData: 'a' } }), 'invalid_format');
  });

  test('a leaf whose serial has its high bit set (DER adds a 00 byte) is the signer', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wallet-a-serial-'));
    const run = (...args: string[]) => {
      const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    };
    try {
      const ext = (name: string, lines: string) => writeFileSync(join(dir, `${name}.ext`), lines);
      ext('ca', 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n1.2.840.113635.100.6.2.14=ASN1:NULL\n');
      ext('leaf', 'basicConstraints=critical,CA:FALSE\n1.2.840.113635.100.6.29=ASN1:NULL\n');
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
      run(
        'req',
        '-x509',
        ...ec,
        '-keyout',
        'root.key',
        '-out',
        'root.pem',
        '-subj',
        '/CN=root',
        '-days',
        '3650',
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign',
      );
      run('req', ...ec, '-keyout', 'int.key', '-out', 'int.csr', '-subj', '/CN=intermediate');
      run(
        'x509',
        '-req',
        '-in',
        'int.csr',
        '-CA',
        'root.pem',
        '-CAkey',
        'root.key',
        '-set_serial',
        '0x11',
        '-out',
        'int.pem',
        '-days',
        '3650',
        '-extfile',
        'ca.ext',
      );
      run('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=leaf');
      run(
        'x509',
        '-req',
        '-in',
        'leaf.csr',
        '-CA',
        'int.pem',
        '-CAkey',
        'int.key',
        '-set_serial',
        '0x8A1B2C3D4E5F',
        '-out',
        'leaf.pem',
        '-days',
        '3650',
        '-extfile',
        'leaf.ext',
      );
      const read = (f: string) => readFileSync(join(dir, f), 'utf8');
      const now = new Date();
      const pd = seal({
        signer: { leaf: read('leaf.pem'), intermediate: read('int.pem'), privateKey: read('leaf.key') },
        signingTime: now,
      });
      assert.equal(open(pd, { roots: [new X509Certificate(read('root.pem'))], now }).pan, '4111111111111111');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
