import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bankOutcome, canMove, type PayoutState } from '../../src/domain/payouts/states.ts';
import { readBankFile } from '../../src/domain/payouts/bankfiles.ts';
import { readXml } from '../../src/domain/payouts/xml.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { camt053, pain002 } from '../helpers/bankfiles.ts';

const STATES: PayoutState[] = ['scheduled', 'sent', 'booked', 'rejected', 'returned'];

test('payout states: sent -> booked | rejected | returned, booked -> returned, every other move refused', () => {
  const allowed = STATES.flatMap((from) => STATES.filter((to) => canMove(from, to)).map((to) => `${from}->${to}`));
  assert.deepEqual(allowed, ['scheduled->sent', 'sent->booked', 'sent->rejected', 'sent->returned', 'booked->returned']);
});

test("a bank file's line: a move, already so (a file read again), or refused with why", () => {
  assert.deepEqual(bankOutcome('sent', 'booked'), { kind: 'move', to: 'booked' });
  assert.deepEqual(bankOutcome('booked', 'returned'), { kind: 'move', to: 'returned' });
  assert.deepEqual(bankOutcome('sent', 'rejected'), { kind: 'move', to: 'rejected' });
  for (const s of ['booked', 'returned', 'rejected'] as const) assert.deepEqual(bankOutcome(s, s), { kind: 'already' }, s);
  assert.deepEqual(bankOutcome('returned', 'booked'), { kind: 'already' }, 'booked, then back: the booking says nothing new');
  assert.deepEqual(bankOutcome('booked', 'rejected'), { kind: 'refused', reason: 'final_state' }, 'a booked transfer is not rejected');
  assert.deepEqual(bankOutcome('rejected', 'booked'), { kind: 'refused', reason: 'final_state' });
  assert.deepEqual(bankOutcome('rejected', 'returned'), { kind: 'refused', reason: 'final_state' });
  assert.deepEqual(bankOutcome('returned', 'rejected'), { kind: 'refused', reason: 'final_state' });
  for (const e of ['booked', 'returned', 'rejected'] as const)
    assert.deepEqual(bankOutcome('scheduled', e), { kind: 'refused', reason: 'not_sent' }, e);
});

const refused = (text: string, message: RegExp) =>
  assert.throws(
    () => readBankFile(text),
    (e: unknown) => e instanceof DomainError && e.field === 'file' && message.test(e.message),
    String(message),
  );

test('the XML of a bank file: well-formed, one document element, no DOCTYPE, bounded', () => {
  refused('<r><a></r>', /<\/r> at line 1, column 7 closes <a>/);
  refused('<r><a>', /ends inside <a>/);
  refused('<r/>tail', /text outside the document element/);
  refused('<r/><s/>', /a second document element <s>/);
  refused('<r>&nbsp;</r>', /an "&" that is no character reference/);
  refused('<r a=1/>', /a "<" that starts no tag/);
  refused('', /no document element/);
  refused('<!DOCTYPE r SYSTEM "http://example.org/r.dtd"><r/>', /DOCTYPE/);
  refused(`<r>${'x'.repeat(8 * 1024 * 1024)}</r>`, /larger than/);
  refused('<r/>', /no ISO 20022 document/);
  refused('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"/>', /the file is camt\.054\.001\.08/);
  // comments, CDATA and quoted ">" do not count as tags
  assert.equal(readXml('<!-- </x> --><r a="1>2"><![CDATA[</y>]]></r>').localName, 'r');
});

test('a statement: booked debits and returned credits that name a transfer; the rest is ignored', () => {
  const s = readBankFile(
    camt053('M1', [
      {
        iban: 'NL91ABNA0417164300',
        entries: [
          { end_to_end_id: 'TSE1', cents: 1234, direction: 'DBIT' },
          { end_to_end_id: 'TSE2', cents: 500, direction: 'CRDT', reason: 'AC04' },
          { end_to_end_id: 'TSE3', cents: 1, direction: 'DBIT', status: 'PDNG' },
          { end_to_end_id: 'OTHER', cents: 700, direction: 'CRDT' },
          { end_to_end_id: 'NOTPROVIDED', cents: 700, direction: 'DBIT' },
          { cents: 9, direction: 'DBIT' },
        ],
      },
    ]),
  );
  assert.equal(s.kind, 'camt.053.001.08');
  assert.deepEqual(s.kind === 'camt.053.001.08' && s.lines, [
    { event: 'booked', end_to_end_id: 'TSE1', cents: 1234, currency: 'EUR', account: 'NL91ABNA0417164300', reversal: false },
    {
      event: 'returned',
      end_to_end_id: 'TSE2',
      cents: 500,
      currency: 'EUR',
      account: 'NL91ABNA0417164300',
      reason: 'AC04',
      reversal: false,
    },
  ]);
  assert.equal(s.ignored, 4);
  const one = camt053('M2', [{ iban: 'NL91ABNA0417164300', entries: [{ end_to_end_id: 'TSE1', cents: 1234, direction: 'DBIT' }] }]);
  refused(one.replace('<CdtDbtInd>DBIT</CdtDbtInd>', '<CdtDbtInd>DEBIT</CdtDbtInd>'), /CdtDbtInd is DEBIT/);
  refused(one.replace(/<Amt Ccy="EUR">12\.34<\/Amt>/, '<Amt Ccy="EUR">12,34</Amt>'), /is not an ISO 20022 amount/);
  refused(one.replace(/<Amt Ccy="EUR">12\.34<\/Amt>/, '<Amt>12.34</Amt>'), /no ISO 4217 currency/);
  refused(one.replace(/<MsgId>M2<\/MsgId>/, ''), /GrpHdr\/MsgId is missing/);
  // a transfer's own amount (TxDtls/Amt) is optional when the entry holds one transfer
  const own = readBankFile(one.replace(/(<TxDtls>[\s\S]*?)<Amt Ccy="EUR">12\.34<\/Amt>/, '$1'));
  assert.equal(own.kind === 'camt.053.001.08' && own.lines[0]!.cents, 1234);
});

test('a status report: RJCT of the group, of a payment block or of a transfer, each with its reason or the one above', () => {
  const r = readBankFile(
    pain002('S1', {
      msg_id: 'TST1',
      group: { status: 'RJCT', reason: 'FF01' },
      payments: [
        {
          pmt_inf_id: 'TSP1',
          status: 'RJCT',
          transactions: [
            { end_to_end_id: 'TSE1', status: 'RJCT', reason: 'AC01', cents: 1234 },
            { end_to_end_id: 'TSE2', status: 'RJCT' },
            { end_to_end_id: 'TSE3', status: 'ACSC' },
          ],
        },
      ],
    }),
  );
  assert.equal(r.kind, 'pain.002.001.10');
  assert.deepEqual(r.kind === 'pain.002.001.10' && r.rejections, [
    { scope: 'group', msg_id: 'TST1', reason: 'FF01' },
    { scope: 'payment', msg_id: 'TST1', pmt_inf_id: 'TSP1', reason: 'FF01' },
    { scope: 'transaction', msg_id: 'TST1', pmt_inf_id: 'TSP1', end_to_end_id: 'TSE1', cents: 1234, currency: 'EUR', reason: 'AC01' },
    { scope: 'transaction', msg_id: 'TST1', pmt_inf_id: 'TSP1', end_to_end_id: 'TSE2', reason: 'FF01' },
  ]);
  assert.equal(r.ignored, 1);
  refused(pain002('S2', { msg_id: 'TST1' }).replace(/<OrgnlMsgId>TST1<\/OrgnlMsgId>/, ''), /OrgnlMsgId is missing/);
});
