import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { answerMti, decode, Deframer, encode, frame, Iso8583Error, type Message } from '../../src/acquirer/iso8583/codec.ts';
import { ISO_1987, withOverrides } from '../../src/acquirer/iso8583/layout.ts';
import {
  currencyField,
  currencyFromField,
  expiryField,
  expiryFromField,
  originalData,
  parseOriginalData,
  parseSecureField,
  secureField,
  transmissionTime,
} from '../../src/acquirer/iso8583/fields.ts';
import { outcomeOf } from '../../src/acquirer/iso8583/responses.ts';

/** An independent ISO 8583 implementation (npm iso_8583), used only here to read and answer Tender's messages. */
interface IsoLib {
  getBufferMessage(): Buffer | { error: string };
  getIsoJSON(b: Buffer, config: object): Record<string, string>;
}
const Iso = createRequire(import.meta.url)('iso_8583') as new (data?: Record<string, string>) => IsoLib;

const sale: Message = {
  mti: '0200',
  fields: {
    2: '4111111111111111',
    3: '000000',
    4: '000000001234',
    7: '1126103000',
    11: '000042',
    12: '103000',
    13: '1126',
    14: '2812',
    22: '012',
    37: '633010000042',
    41: 'TERM0001',
    42: 'MERCHANT0000001',
    48: secureField({ eci: '07' }),
    49: '978',
  },
};

test('a message the standard spells out by hand: sign-on 0800 with a secondary bitmap', () => {
  const msg: Message = { mti: '0800', fields: { 7: '1126103000', 11: '000001', 70: '001' } };
  // MTI "0800"; primary bitmap: bit 1 (secondary present), 7, 11 -> 82 20 00 00 00 00 00 00;
  // secondary: bit 70 -> 04 00 00 00 00 00 00 00; then the fields in ASCII
  const expected = Buffer.concat([
    Buffer.from('0800', 'ascii'),
    Buffer.from('8220000000000000', 'hex'),
    Buffer.from('0400000000000000', 'hex'),
    Buffer.from('1126103000' + '000001' + '001', 'ascii'),
  ]);
  assert.deepEqual(encode(msg), expected);
  const framed = frame(expected);
  assert.equal(framed.readUInt16BE(0), expected.length);
  assert.deepEqual(decode(expected), msg);
});

test("an independent implementation reads Tender's sale and answers it; Tender reads the answer", () => {
  const ours = frame(encode(sale));
  // it always writes a secondary bitmap; Tender reads that too
  const theirs = new Iso({ 0: sale.mti, ...Object.fromEntries(Object.entries(sale.fields)) }).getBufferMessage();
  assert.ok(Buffer.isBuffer(theirs));
  assert.deepEqual(decode(new Deframer().push(theirs)[0]), sale);
  // the other side reads Tender's request and answers it; Tender reads the answer
  const read = new Iso().getIsoJSON(ours, {});
  assert.equal(read[0], '0200');
  assert.equal(read[2], '4111111111111111');
  assert.equal(read[41], 'TERM0001');
  assert.equal(parseSecureField(read[48]).eci, '07');
  const reply = new Iso({
    0: '0210',
    3: read[3],
    4: read[4],
    7: read[7],
    11: read[11],
    37: read[37],
    38: 'A1B2C3',
    39: '00',
    41: read[41],
    49: read[49],
  }).getBufferMessage();
  assert.ok(Buffer.isBuffer(reply));
  const [body] = new Deframer().push(reply);
  const answer = decode(body);
  assert.equal(answer.mti, answerMti('0200'));
  assert.equal(answer.fields[11], '000042');
  assert.equal(answer.fields[38], 'A1B2C3');
  assert.equal(outcomeOf(answer.fields[39]).status, 'accepted');
});

test('a reversal with field 90 round-trips and the other implementation reads it', () => {
  const rev: Message = {
    mti: '0400',
    fields: {
      4: '000000001234',
      7: '1126103005',
      11: '000043',
      41: 'TERM0001',
      42: 'MERCHANT0000001',
      49: '978',
      90: originalData({ mti: '0200', stan: '000042', transmission: '1126103000' }),
    },
  };
  const bytes = encode(rev);
  assert.deepEqual(decode(bytes), rev);
  // with a field above 64 both write the same bytes
  assert.deepEqual(frame(bytes), new Iso({ 0: rev.mti, ...rev.fields }).getBufferMessage());
  const read = new Iso().getIsoJSON(frame(bytes), {});
  assert.deepEqual(parseOriginalData(read[90]), { mti: '0200', stan: '000042', transmission: '1126103000' });
});

test('every field format: fixed n pads with zeros, fixed an/ans with spaces, LLVAR and LLLVAR carry their length', () => {
  const m = decode(
    encode({ mti: '0210', fields: { 2: '378282246310005', 4: '5', 11: '7', 38: 'AB12', 39: '5', 41: 'T1', 48: 'EC00207' } }),
  );
  assert.equal(m.fields[2], '378282246310005');
  assert.equal(m.fields[4], '000000000005');
  assert.equal(m.fields[11], '000007');
  assert.equal(m.fields[38], 'AB12  ');
  assert.equal(m.fields[39], '5 ');
  assert.equal(m.fields[41], 'T1      ');
  assert.equal(m.fields[48], 'EC00207');
  const raw = encode({ mti: '0200', fields: { 2: '4111', 48: 'x' } })
    .subarray(12)
    .toString('ascii');
  assert.equal(raw, '044111' + '001x');
  for (const [fields, message] of [
    [{ 2: '41111111111111111111' }, /field 2 .*20 characters, at most 19/],
    [{ 4: '12a' }, /field 4 .*not n/],
    [{ 4: '1234567890123' }, /field 4 .*at most 12/],
    [{ 38: 'AB-12' }, /field 38 .*not an/],
    [{ 41: 'TÉRM' }, /field 41 .*not ans/],
    [{ 48: 'x'.repeat(1000) }, /field 48 .*at most 999/],
    [{ 5: '1' }, /field 5 is not in the layout/],
  ] as const)
    assert.throws(() => encode({ mti: '0200', fields }), message);
});

test('bad input is refused with a clear error: unknown MTI, truncated or overlong messages, broken prefixes', () => {
  assert.throws(() => encode({ mti: '0300', fields: {} }), /unknown MTI "0300"/);
  const good = encode(sale);
  const bad = (b: Buffer, re: RegExp) =>
    assert.throws(
      () => decode(b),
      (e: unknown) => e instanceof Iso8583Error && re.test(e.message),
    );
  bad(Buffer.concat([Buffer.from('9999'), good.subarray(4)]), /unknown MTI "9999"/);
  bad(Buffer.concat([Buffer.from('02x0'), good.subarray(4)]), /unknown MTI/);
  bad(good.subarray(0, 10), /shorter than an MTI and a bitmap/);
  bad(good.subarray(0, good.length - 3), /field 49: message ends inside its value/);
  bad(Buffer.concat([good, Buffer.from('zz')]), /2 bytes after the last field/);
  // field 2's length prefix made of letters
  const broken = Buffer.from(good);
  broken.write('xx', 12, 'ascii');
  bad(broken, /field 2 .*length prefix "xx" is not digits/);
  // a bit for a field the layout does not have (field 5)
  const extra = Buffer.from(good);
  extra[4] |= 0x08;
  bad(extra, /field 5 is present but not in the layout/);
  // a secondary bitmap announced but missing
  bad(Buffer.concat([Buffer.from('0800'), Buffer.from('8000000000000000', 'hex'), Buffer.from('1234')]), /inside its secondary bitmap/);
});

test('the deframer cuts a stream at any boundary and refuses broken length headers', () => {
  const a = frame(encode(sale));
  const b = frame(encode({ mti: '0800', fields: { 11: '1', 70: '301' } }));
  const stream = Buffer.concat([a, b]);
  const d = new Deframer();
  const out: Buffer[] = [];
  for (let i = 0; i < stream.length; i += 7) out.push(...d.push(stream.subarray(i, i + 7)));
  assert.deepEqual(
    out.map((x) => decode(x).mti),
    ['0200', '0800'],
  );
  assert.throws(() => new Deframer().push(Buffer.from([0, 0, 1])), /length header 0/);
  assert.throws(() => new Deframer().push(Buffer.from([0xff, 0xff])), /length header 65535/);
  assert.throws(() => frame(Buffer.alloc(9000)), /longer than/);
});

test('inside the fields: dates, expiry, currency, field 48 and field 90', () => {
  assert.equal(transmissionTime(new Date('2026-01-02T03:04:05Z')), '0102030405');
  assert.equal(expiryField('122028'), '2812');
  assert.equal(expiryFromField('2812'), '122028');
  assert.equal(currencyField('EUR'), '978');
  assert.equal(currencyFromField('392'), 'JPY');
  const s = { eci: '05', authenticationValue: 'AAABBJkZUQAAAABjRWWZEEFgFz8=', dsTransactionId: 'f25084f0-5b16-4c0a-ae5d-b24808a95e4b' };
  assert.equal(secureField(s).slice(0, 7), 'EC00205');
  assert.deepEqual(parseSecureField(secureField(s)), s);
  assert.deepEqual(parseSecureField('XX003abcEC00207'), { eci: '07' });
  assert.throws(() => parseSecureField('EC0'), /broken element/);
  assert.throws(() => parseSecureField('AV003abc'), /no ECI/);
  assert.throws(() => parseOriginalData('12'), /42 digits/);
  assert.equal(answerMti('0100'), '0110');
  assert.equal(answerMti('0401'), '0410');
  assert.equal(answerMti('0800'), '0810');
});

test('response codes map to reasons; unlisted codes decline', () => {
  assert.deepEqual(
    [outcomeOf('51').reason, outcomeOf('54').reason, outcomeOf('N7').reason],
    ['insufficient_funds', 'expired_card', 'incorrect_cvc'],
  );
  assert.equal(outcomeOf('91').status, 'error');
  assert.equal(outcomeOf('96').reason, 'processing_error');
  assert.deepEqual([outcomeOf('Q9').status, outcomeOf('Q9').reason, outcomeOf('Q9').response_code], ['declined', 'declined', 'Q9']);
});

test('a processor variant is data: overrides change a field without code, and broken ones are refused', () => {
  const variant = withOverrides(ISO_1987, {
    fields: { 48: { length: 50 }, 62: { name: 'private', charset: 'ans', length: 20, prefix: 2 } },
  });
  const m = { mti: '0200', fields: { 11: '1', 62: 'hello' } };
  assert.deepEqual(decode(encode(m, variant), variant).fields[62], 'hello');
  assert.throws(() => encode(m), /field 62 is not in the layout/);
  assert.throws(() => encode({ mti: '0200', fields: { 48: 'x'.repeat(51) } }, variant), /at most 50/);
  assert.throws(() => withOverrides(ISO_1987, { fields: { 62: { charset: 'b', length: 8, prefix: 0 } } }), /charset n\|an\|ans/);
  assert.throws(() => withOverrides(ISO_1987, { fields: { 1: {} } }), /not a data field/);
  assert.throws(() => withOverrides(ISO_1987, { mtis: ['02'] }), /four digits/);
});
