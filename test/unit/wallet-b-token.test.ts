import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { thrownWithCode } from '../helpers/throws.ts';
import { readFileSync } from 'node:fs';
import {
  openToken,
  sealToken,
  generateSandboxKeys,
  TokenError,
  type OpenOptions,
  type ProtocolVersion,
  type RootKey,
  type SealOptions,
  type TokenErrorCode,
} from '../../src/wallets/wallet-b-token.ts';
import { ecdsaSign, exportSpki, importPkcs8, lengthValue } from '../../src/wallets/wallet-b-crypto.ts';

const vectors = JSON.parse(readFileSync(new URL('../fixtures/wallet-b/ecv2-tink-test-keys.json', import.meta.url), 'utf8'));

/** Injected clock: before the valid vector's intermediate key expires (2029-07-22). */
const NOW = new Date('2025-06-01T12:00:00Z');
const HOUR = 3_600_000;

const refused = (fn: () => unknown, code: TokenErrorCode) => thrownWithCode(fn, TokenError, code);

describe('shared Tink test vectors', () => {
  const vectorOpts = (over: Partial<OpenOptions> = {}): OpenOptions => ({
    rootKeys: vectors.root_signing_keys.keys,
    recipientId: vectors.recipient_id,
    recipientPrivateKeys: [vectors.recipient_private_key_pkcs8_base64],
    now: NOW,
    ...over,
  });
  const token = (name: string) => JSON.stringify(vectors.tokens[name]);
  const EXPECTED: Record<string, TokenErrorCode | 'ok'> = {
    valid: 'ok',
    expired_message: 'message_expired',
    plaintext_not_json: 'plaintext_not_json',
    invalid_tag: 'invalid_tag',
    expired_intermediate_key: 'intermediate_key_expired',
  };

  test('every vector in the file has an expected outcome here', () => {
    assert.deepEqual(Object.keys(vectors.tokens).sort(), Object.keys(EXPECTED).sort());
    assert.deepEqual(Object.keys(vectors.expected_outcome).sort(), Object.keys(EXPECTED).sort());
  });

  for (const [name, outcome] of Object.entries(EXPECTED)) {
    test(`${name}: ${vectors.expected_outcome[name]}`, () => {
      if (outcome === 'ok') assert.deepEqual(openToken(token(name), vectorOpts()), vectors.expected_plaintext);
      else refused(() => openToken(token(name), vectorOpts()), outcome);
    });
  }

  test('the failing vectors give distinct codes', () => {
    const codes = Object.values(EXPECTED).filter((c) => c !== 'ok');
    assert.equal(new Set(codes).size, codes.length);
  });

  test('valid vector after its intermediate key expiry (the injected clock decides)', () => {
    const at = new Date(1879409613939);
    refused(() => openToken(token('valid'), vectorOpts({ now: at })), 'intermediate_key_expired');
    assert.ok(openToken(token('valid'), vectorOpts({ now: new Date(at.getTime() - 1) })));
  });

  test('valid vector with a wrong recipient id', () => {
    refused(() => openToken(token('valid'), vectorOpts({ recipientId: 'merchant:12345678901234567890' })), 'invalid_signature');
  });

  test('valid vector with a wrong sender id: the intermediate key signature already covers it', () => {
    refused(() => openToken(token('valid'), vectorOpts({ senderId: 'GooglePayPasses' })), 'invalid_intermediate_signature');
  });

  test('valid vector against root keys that did not sign it', () => {
    const other: RootKey = { keyValue: generateSandboxKeys().rootPublicKey, protocolVersion: 'ECv2', keyExpiration: '32506264800000' };
    refused(() => openToken(token('valid'), vectorOpts({ rootKeys: [other] })), 'invalid_intermediate_signature');
  });

  test('root keys of another protocol version, expired, or without keyExpiration are not used', () => {
    const key: RootKey = vectors.root_signing_keys.keys[0];
    const cases: RootKey[][] = [
      [],
      [{ ...key, protocolVersion: 'ECv1' }],
      [{ ...key, keyExpiration: String(NOW.getTime()) }],
      [{ keyValue: key.keyValue, protocolVersion: 'ECv2' }],
    ];
    for (const rootKeys of cases) refused(() => openToken(token('valid'), vectorOpts({ rootKeys })), 'no_root_keys');
  });

  test('tries every recipient private key (rotation), and refuses when none fits', () => {
    const stranger = generateSandboxKeys().recipientPrivateKey;
    const keys = [stranger, vectors.recipient_private_key_pkcs8_base64];
    assert.deepEqual(openToken(token('valid'), vectorOpts({ recipientPrivateKeys: keys })), vectors.expected_plaintext);
    refused(() => openToken(token('valid'), vectorOpts({ recipientPrivateKeys: [stranger] })), 'invalid_tag');
  });

  test('the protocol version is bound by the signatures', () => {
    const downgraded = { ...vectors.tokens.valid, protocolVersion: 'ECv2SigningOnly' };
    const rootKeys = [vectors.root_signing_keys.keys[0], { ...vectors.root_signing_keys.keys[0], protocolVersion: 'ECv2SigningOnly' }];
    refused(() => openToken(JSON.stringify(downgraded), vectorOpts({ rootKeys })), 'invalid_intermediate_signature');
  });
});

describe('seal and open with sandbox keys', () => {
  const keys = generateSandboxKeys();
  const RECIPIENT = 'merchant:0123456789';
  const rootKeys: RootKey[] = (['ECv1', 'ECv2', 'ECv2SigningOnly'] as const).map((protocolVersion) => ({
    keyValue: keys.rootPublicKey,
    protocolVersion,
    keyExpiration: String(NOW.getTime() + 365 * 24 * HOUR),
  }));
  const openOpts = (over: Partial<OpenOptions> = {}): OpenOptions => ({
    rootKeys,
    recipientId: RECIPIENT,
    recipientPrivateKeys: [keys.recipientPrivateKey],
    now: NOW,
    ...over,
  });
  const sealOpts = (protocolVersion: ProtocolVersion, over: Partial<SealOptions> = {}): SealOptions => ({
    protocolVersion,
    rootPrivateKey: keys.rootPrivateKey,
    intermediatePrivateKey: keys.intermediatePrivateKey,
    recipientId: RECIPIENT,
    recipientPublicKey: keys.recipientPublicKey,
    now: NOW,
    ...over,
  });
  const payment = (over: Record<string, unknown> = {}) => ({
    messageExpiration: String(NOW.getTime() + HOUR),
    messageId: 'sandbox-message-1',
    paymentMethod: 'CARD',
    paymentMethodDetails: {
      pan: '4111111111111111',
      expirationMonth: 12,
      expirationYear: 2030,
      authMethod: 'CRYPTOGRAM_3DS',
      cryptogram: 'AgAAAAAABk4DWZ4C28yUQAAAAAA=',
      eciIndicator: '05',
    },
    gatewayMerchantId: 'tender-sandbox',
    ...over,
  });
  /** Changes signedMessage, then signs it again with the intermediate key: only the payload is tampered. */
  function resigned(token: string, change: (signedMessage: Record<string, string>) => void): string {
    const t = JSON.parse(token);
    const signedMessage = JSON.parse(t.signedMessage);
    change(signedMessage);
    t.signedMessage = JSON.stringify(signedMessage);
    const signed = lengthValue('Google', RECIPIENT, t.protocolVersion, t.signedMessage);
    t.signature = ecdsaSign(importPkcs8(keys.intermediatePrivateKey), signed).toString('base64');
    return JSON.stringify(t);
  }
  const flip = (base64: string, at = 0) => {
    const b = Buffer.from(base64, 'base64');
    b[at] ^= 0x01;
    return b.toString('base64');
  };

  for (const version of ['ECv1', 'ECv2', 'ECv2SigningOnly'] as const) {
    test(`${version} round trip`, () => {
      const token = sealToken(payment(), sealOpts(version));
      const parsed = JSON.parse(token);
      assert.equal(parsed.protocolVersion, version);
      assert.equal('intermediateSigningKey' in parsed, version !== 'ECv1');
      if (version === 'ECv2SigningOnly') assert.deepEqual(JSON.parse(parsed.signedMessage), payment());
      else assert.deepEqual(Object.keys(JSON.parse(parsed.signedMessage)).sort(), ['encryptedMessage', 'ephemeralPublicKey', 'tag']);
      assert.deepEqual(openToken(token, openOpts()), payment());
    });
  }

  test('ECv1 root keys need no keyExpiration; ECv2 ones do', () => {
    const bare = (protocolVersion: string): RootKey[] => [{ keyValue: keys.rootPublicKey, protocolVersion }];
    assert.ok(openToken(sealToken(payment(), sealOpts('ECv1')), openOpts({ rootKeys: bare('ECv1') })));
    refused(() => openToken(sealToken(payment(), sealOpts('ECv2')), openOpts({ rootKeys: bare('ECv2') })), 'no_root_keys');
  });

  test('a fresh intermediate key is made when none is given; recipient key as SPKI works too', () => {
    const token = sealToken(payment(), sealOpts('ECv2', { intermediatePrivateKey: undefined }));
    assert.deepEqual(openToken(token, openOpts()), payment());
    const spki = exportSpki(importPkcs8(keys.recipientPrivateKey));
    const viaSpki = sealToken(payment(), sealOpts('ECv2', { recipientPublicKey: spki }));
    assert.deepEqual(openToken(viaSpki, openOpts()), payment());
  });

  test('tampered tag', () => {
    const token = resigned(sealToken(payment(), sealOpts('ECv2')), (m) => (m.tag = flip(m.tag!)));
    refused(() => openToken(token, openOpts()), 'invalid_tag');
  });

  test('tampered ciphertext', () => {
    const token = resigned(sealToken(payment(), sealOpts('ECv2')), (m) => (m.encryptedMessage = flip(m.encryptedMessage!, 5)));
    refused(() => openToken(token, openOpts()), 'invalid_tag');
  });

  test('tampered signature', () => {
    const good = JSON.parse(sealToken(payment(), sealOpts('ECv2')));
    const other = JSON.parse(sealToken(payment({ messageId: 'another' }), sealOpts('ECv2')));
    refused(() => openToken(JSON.stringify({ ...good, signature: other.signature }), openOpts()), 'invalid_signature');
    refused(() => openToken(JSON.stringify({ ...good, signature: flip(good.signature, 10) }), openOpts()), 'invalid_signature');
  });

  test('tampered signedMessage without a new signature', () => {
    const t = JSON.parse(sealToken(payment(), sealOpts('ECv2SigningOnly')));
    t.signedMessage = t.signedMessage.replace('4111111111111111', '4000000000000002');
    refused(() => openToken(JSON.stringify(t), openOpts()), 'invalid_signature');
  });

  test('tampered intermediate key (expiry pushed out)', () => {
    const t = JSON.parse(sealToken(payment(), sealOpts('ECv2')));
    const signedKey = JSON.parse(t.intermediateSigningKey.signedKey);
    t.intermediateSigningKey.signedKey = JSON.stringify({ ...signedKey, keyExpiration: '99999999999999' });
    refused(() => openToken(JSON.stringify(t), openOpts()), 'invalid_intermediate_signature');
  });

  test('expired message: at or before now is expired', () => {
    for (const version of ['ECv1', 'ECv2', 'ECv2SigningOnly'] as const) {
      for (const at of [NOW.getTime() - 1, NOW.getTime()]) {
        const token = sealToken(payment({ messageExpiration: String(at) }), sealOpts(version));
        refused(() => openToken(token, openOpts()), 'message_expired');
      }
      const fresh = sealToken(payment({ messageExpiration: String(NOW.getTime() + 1) }), sealOpts(version));
      assert.ok(openToken(fresh, openOpts()));
    }
  });

  test('expired intermediate key', () => {
    const token = sealToken(payment(), sealOpts('ECv2', { intermediateKeyExpiration: String(NOW.getTime() - HOUR) }));
    refused(() => openToken(token, openOpts()), 'intermediate_key_expired');
    const later = sealToken(payment(), sealOpts('ECv2'));
    refused(() => openToken(later, openOpts({ now: new Date(NOW.getTime() + 8 * 24 * HOUR) })), 'intermediate_key_expired');
  });

  test('wrong recipient id', () => {
    for (const version of ['ECv1', 'ECv2', 'ECv2SigningOnly'] as const) {
      const token = sealToken(payment(), sealOpts(version, { recipientId: 'merchant:someone-else' }));
      refused(() => openToken(token, openOpts()), 'invalid_signature');
    }
  });

  test('not JSON, malformed, or unsupported protocol', () => {
    refused(() => openToken('not a token', openOpts()), 'invalid_json');
    refused(() => openToken('', openOpts()), 'invalid_json');
    refused(() => openToken('[]', openOpts()), 'malformed_token');
    refused(() => openToken('{}', openOpts()), 'malformed_token');
    const good = JSON.parse(sealToken(payment(), sealOpts('ECv2')));
    refused(() => openToken(JSON.stringify({ ...good, protocolVersion: 'ECv3' }), openOpts()), 'unsupported_protocol');
    refused(() => openToken(JSON.stringify({ ...good, signature: 'not base64!' }), openOpts()), 'malformed_token');
    refused(() => openToken(JSON.stringify({ ...good, signedMessage: undefined }), openOpts()), 'malformed_token');
    refused(() => openToken(JSON.stringify({ ...good, intermediateSigningKey: undefined }), openOpts()), 'malformed_token');
    const badPoint = resigned(JSON.stringify(good), (m) => (m.ephemeralPublicKey = Buffer.alloc(65, 4).toString('base64')));
    refused(() => openToken(badPoint, openOpts()), 'malformed_token');
  });

  test('decrypted JSON that is not a payment message', () => {
    const cases: Record<string, unknown>[] = [
      { messageExpiration: undefined },
      { messageExpiration: 'tomorrow' },
      { paymentMethodDetails: undefined },
      { paymentMethodDetails: { ...payment().paymentMethodDetails, pan: '4111 1111' } },
      { paymentMethodDetails: { ...payment().paymentMethodDetails, expirationMonth: 13 } },
      { paymentMethodDetails: { ...payment().paymentMethodDetails, authMethod: 'BIOMETRIC' } },
      { paymentMethodDetails: { ...payment().paymentMethodDetails, cryptogram: undefined } },
    ];
    for (const over of cases) {
      const err = refused(() => openToken(sealToken(payment(over), sealOpts('ECv2')), openOpts()), 'invalid_message');
      assert.doesNotMatch(err.message, /4111/, 'error messages never carry the PAN');
    }
    const panOnly = payment({
      paymentMethodDetails: { pan: '4111111111111111', expirationMonth: 1, expirationYear: 2031, authMethod: 'PAN_ONLY' },
    });
    assert.deepEqual(openToken(sealToken(panOnly, sealOpts('ECv2')), openOpts()), panOnly);
  });

  test('unusable configuration is its own code', () => {
    const token = sealToken(payment(), sealOpts('ECv2'));
    refused(() => openToken(token, openOpts({ recipientId: '' })), 'invalid_config');
    refused(() => openToken(token, openOpts({ recipientPrivateKeys: [] })), 'invalid_config');
    refused(() => openToken(token, openOpts({ recipientPrivateKeys: ['bm90IGEga2V5'] })), 'invalid_config');
    refused(
      () =>
        openToken(token, openOpts({ rootKeys: [{ keyValue: 'bm90IGEga2V5', protocolVersion: 'ECv2', keyExpiration: '32506264800000' }] })),
      'invalid_config',
    );
    refused(() => openToken(token, openOpts({ now: new Date(Number.NaN) })), 'invalid_config');
  });

  test('TokenError is an Error with a code', () => {
    const err = refused(() => openToken('x', openOpts()), 'invalid_json');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'TokenError');
  });
});
