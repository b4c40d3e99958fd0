// The comparison of an ISO 8583 answer with its request (src/acquirer/iso8583/checks.ts), each
// field broken in turn, and the host's faults that make such answers (partial, wrong-*).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkAnswer } from '../../src/acquirer/iso8583/checks.ts';
import { encode, decode, type Message } from '../../src/acquirer/iso8583/codec.ts';
import { originalData, PROCESSING } from '../../src/acquirer/iso8583/fields.ts';
import { Book } from '../../src/acquirer/iso8583/host/book.ts';
import { applyFaultLine, noFaults } from '../../src/acquirer/iso8583/host/faults.ts';

const sale: Message = {
  mti: '0200',
  fields: {
    2: '4111111111111111',
    3: PROCESSING.purchase,
    4: '1234',
    7: '1201223344',
    11: '000042',
    14: '2912',
    37: '633622000042',
    41: 'TCHK0001',
    49: '978',
  },
};
const capture: Message = {
  mti: '0220',
  fields: { ...sale.fields, 90: originalData({ mti: '0100', stan: '000041', transmission: '1201223300' }) },
};
delete capture.fields[2];

/** The answer as it travels and is read back (fixed fields padded), with `change` applied. */
const answerTo = (req: Message, change: Record<number, string | undefined> = {}, code = '00'): Message => {
  const fields: Record<number, string> = { ...req.fields, 38: 'ABC123', 39: code };
  delete fields[2];
  delete fields[14];
  for (const [n, v] of Object.entries(change)) {
    if (v === undefined) delete fields[Number(n)];
    else fields[Number(n)] = v;
  }
  return decode(encode({ mti: String(Number(req.mti) + 10).padStart(4, '0'), fields }));
};

test('an answer that echoes its request matches it, padding and all', () => {
  assert.deepEqual(checkAnswer(sale, answerTo(sale)), { problems: [] });
  assert.deepEqual(checkAnswer(capture, answerTo(capture)), { problems: [] });
  assert.equal(answerTo(sale).fields[4], '000000001234', 'compared as it travels, zero-padded');
  // a field the answer leaves out is not compared
  assert.deepEqual(checkAnswer(sale, answerTo(sale, { 4: undefined, 37: undefined, 49: undefined })), { problems: [] });
});

test('each field broken in turn is a mismatch that names the field, never card data', () => {
  const broken: [number, string, Message][] = [
    [3, '200000', sale],
    [4, '1235', sale],
    [11, '000043', sale],
    [37, '633622000043', sale],
    [41, 'TCHK0002', sale],
    [49, '840', sale],
    [90, originalData({ mti: '0100', stan: '000040', transmission: '1201223300' }), capture],
    [4, '999', capture],
  ];
  for (const [n, value, req] of broken) {
    const { problems, partial } = checkAnswer(req, answerTo(req, { [n]: value }));
    assert.equal(problems.length, 1, `field ${n}: ${problems.join('; ')}`);
    assert.match(problems[0], new RegExp(`^field ${n} \\(`));
    assert.equal(partial, undefined);
    assert.doesNotMatch(problems[0], /4111/);
  }
  // an original named in the answer to a request that named none
  assert.match(checkAnswer(sale, answerTo(sale, { 90: capture.fields[90] })).problems.join(), /field 90 .*not sent/);
  // the answer of another message type
  assert.match(checkAnswer(sale, { ...answerTo(sale), mti: '0110' }).problems.join(), /MTI: 0110 does not answer 0200/);
  // two fields broken: both named
  assert.equal(checkAnswer(sale, answerTo(sale, { 4: '1', 49: '840' })).problems.length, 2);
});

test('code 10 with a smaller positive amount is a partial approval of it; any other amount with 10 is a mismatch', () => {
  assert.deepEqual(checkAnswer(sale, answerTo(sale, { 4: '123' }, '10')), { problems: [], partial: 123 });
  for (const amount of ['1234', '1235', '0'])
    assert.equal(checkAnswer(sale, answerTo(sale, { 4: amount }, '10')).problems.length, amount === '1234' ? 0 : 1, amount);
  // a smaller amount with 00 is no partial approval: a mismatch
  assert.deepEqual(checkAnswer(sale, answerTo(sale, { 4: '123' })).problems.length, 1);
  // 10 with the amount left out: no partial amount known (the connector reverses the whole)
  assert.deepEqual(checkAnswer(sale, answerTo(sale, { 4: undefined }, '10')), { problems: [] });
});

test("the host's switches: partial approves half and says so in field 4; wrong-* are counted admin lines", () => {
  const settled: number[] = [];
  const book = new Book({ holdMs: 86_400_000, settle: (l) => settled.push(l.amount) });
  const a = book.answer({ ...sale, fields: { ...sale.fields, 14: '2912' } }, { partial: true });
  assert.deepEqual([a.fields[39], a.fields[4]], ['10', '617']);
  assert.deepEqual(settled, [617], 'the host settles the part it approved');
  const f = noFaults();
  for (const line of ['partial 1', 'wrong-amount 2', 'wrong-currency 1', 'wrong-rrn 1', 'wrong-original 1'])
    assert.equal(applyFaultLine(f, line), 'ok', line);
  assert.deepEqual([f.partial, f.wrongAmount, f.wrongCurrency, f.wrongRrn, f.wrongOriginal], [1, 2, 1, 1, 1]);
  assert.match(applyFaultLine(f, 'wrong-amount x'), /^error/);
});
