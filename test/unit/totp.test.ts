import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base32Decode, base32Encode, hotp, otpauthUri, totp, verifyTotp } from '../../src/domain/totp.ts';
import { parseMajorAmount, sessionExpired } from '../../src/domain/portal.ts';

// RFC 6238 Appendix B: the seeds are ASCII "1234567890" repeated to the hash's key length.
const seed = (n: number) => Buffer.from('1234567890'.repeat(7).slice(0, n), 'ascii');
const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

test('RFC 6238 test vectors (SHA-1, SHA-256, SHA-512; 8 digits)', () => {
  for (const [time, sha1, sha256, sha512] of VECTORS) {
    assert.equal(totp(seed(20), time, 8, 'sha1'), sha1, `sha1 at ${time}`);
    assert.equal(totp(seed(32), time, 8, 'sha256'), sha256, `sha256 at ${time}`);
    assert.equal(totp(seed(64), time, 8, 'sha512'), sha512, `sha512 at ${time}`);
  }
});

test('RFC 4226 Appendix D HOTP values', () => {
  const want = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  want.forEach((code, counter) => assert.equal(hotp(seed(20), counter), code));
});

test('base32 (RFC 4648) both ways; refuses other characters', () => {
  assert.equal(base32Encode(Buffer.from('foobar')), 'MZXW6YTBOI');
  assert.equal(base32Decode('mzxw6ytboi======')!.toString(), 'foobar');
  assert.equal(base32Decode('MZXW 6YTB OI')!.toString(), 'foobar');
  assert.equal(base32Decode('MZXW1'), undefined);
  const secret = Buffer.from('0123456789abcdefghij');
  assert.deepEqual(base32Decode(base32Encode(secret)), secret);
});

test('verifyTotp: the current step and one either side; never a step at or before the last used', () => {
  const s = seed(20);
  const now = 1_700_000_000;
  const step = Math.floor(now / 30);
  assert.equal(verifyTotp(s, totp(s, now), now), step);
  assert.equal(verifyTotp(s, totp(s, now - 30), now), step - 1);
  assert.equal(verifyTotp(s, totp(s, now + 30), now), step + 1);
  assert.equal(verifyTotp(s, totp(s, now - 90), now), undefined, 'too old');
  assert.equal(verifyTotp(s, totp(s, now), now, step), undefined, 'already used');
  assert.equal(verifyTotp(s, '12345', now), undefined);
  assert.equal(verifyTotp(s, 'abcdef', now), undefined);
  assert.match(
    otpauthUri('Tender', 'a@b.example', s),
    /^otpauth:\/\/totp\/Tender:a%40b\.example\?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Tender/,
  );
});

test("parseMajorAmount: as people type amounts, in the currency's decimals", () => {
  assert.equal(parseMajorAmount('12.34', 'EUR'), 1234);
  assert.equal(parseMajorAmount('12,5', 'EUR'), 1250);
  assert.equal(parseMajorAmount(' 1 000 ', 'EUR'), 100000);
  assert.equal(parseMajorAmount('7', 'JPY'), 7);
  assert.equal(parseMajorAmount('7.5', 'JPY'), undefined);
  assert.equal(parseMajorAmount('1.234', 'KWD'), 1234);
  assert.equal(parseMajorAmount('12.345', 'EUR'), undefined);
  assert.equal(parseMajorAmount('0', 'EUR'), undefined);
  assert.equal(parseMajorAmount('-1', 'EUR'), undefined);
  assert.equal(parseMajorAmount('1e3', 'EUR'), undefined);
  assert.equal(parseMajorAmount('5', 'XXX'), undefined);
  assert.equal(parseMajorAmount('99999999999999999', 'EUR'), undefined);
});

test('sessions end after the idle time or the absolute lifetime', () => {
  const created = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(created.getTime() + ms);
  assert.equal(sessionExpired({ created, last_seen: at(0) }, at(29 * 60_000), 30 * 60_000, 12 * 3600_000), false);
  assert.equal(sessionExpired({ created, last_seen: at(0) }, at(31 * 60_000), 30 * 60_000, 12 * 3600_000), true);
  assert.equal(sessionExpired({ created, last_seen: at(12 * 3600_000) }, at(12 * 3600_000 + 1), 30 * 60_000, 12 * 3600_000), true);
});
