// The bank's files as a test writes them (docs/payouts.md "Bank files in"): a camt.053.001.08
// statement of the operator's account, and a pain.002.001.10 status report on a payout file.
import { create } from 'xmlbuilder2';
import { join } from 'node:path';

/** The ISO 20022 schema of camt.053.001.08 (test/fixtures/sepa), for xmllint. */
export const CAMT_XSD = join(import.meta.dirname, '..', 'fixtures', 'sepa', 'camt.053.001.08.xsd');

const amount = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

export interface Entry {
  end_to_end_id?: string;
  cents: number;
  currency?: string;
  direction: 'DBIT' | 'CRDT';
  status?: 'BOOK' | 'PDNG';
  /** a returned transfer: RtrInf with this reason code */
  reason?: string;
  reversal?: boolean;
}

export interface StatementSpec {
  iban: string;
  entries: Entry[];
}

/** A camt.053.001.08 statement: one Stmt per account, one entry per transfer. */
export function camt053(msgId: string, statements: StatementSpec[], day = '2026-12-02'): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' })
    .ele('urn:iso:std:iso:20022:tech:xsd:camt.053.001.08', 'Document')
    .ele('BkToCstmrStmt');
  const hdr = doc.ele('GrpHdr');
  hdr.ele('MsgId').txt(msgId);
  hdr.ele('CreDtTm').txt(`${day}T18:00:00Z`);
  for (const [i, s] of statements.entries()) {
    const stmt = doc.ele('Stmt');
    stmt.ele('Id').txt(`${msgId}-${i + 1}`);
    stmt.ele('CreDtTm').txt(`${day}T18:00:00Z`);
    const acct = stmt.ele('Acct');
    acct.ele('Id').ele('IBAN').txt(s.iban);
    acct.ele('Ccy').txt('EUR');
    const bal = stmt.ele('Bal');
    bal.ele('Tp').ele('CdOrPrtry').ele('Cd').txt('OPBD');
    bal.ele('Amt', { Ccy: 'EUR' }).txt('1000000.00');
    bal.ele('CdtDbtInd').txt('CRDT');
    bal.ele('Dt').ele('Dt').txt(day);
    for (const [n, e] of s.entries.entries()) {
      const ccy = e.currency ?? 'EUR';
      const ntry = stmt.ele('Ntry');
      ntry.ele('NtryRef').txt(String(n + 1));
      ntry.ele('Amt', { Ccy: ccy }).txt(amount(e.cents));
      ntry.ele('CdtDbtInd').txt(e.direction);
      if (e.reversal) ntry.ele('RvslInd').txt('true');
      ntry
        .ele('Sts')
        .ele('Cd')
        .txt(e.status ?? 'BOOK');
      ntry.ele('BookgDt').ele('Dt').txt(day);
      ntry.ele('ValDt').ele('Dt').txt(day);
      const fmly = ntry.ele('BkTxCd').ele('Domn');
      fmly.ele('Cd').txt('PMNT');
      const f = fmly.ele('Fmly');
      f.ele('Cd').txt(e.direction === 'DBIT' ? 'ICDT' : 'RCDT');
      f.ele('SubFmlyCd').txt(e.reason ? 'RRTN' : 'ESCT');
      const tx = ntry.ele('NtryDtls').ele('TxDtls');
      if (e.end_to_end_id) tx.ele('Refs').ele('EndToEndId').txt(e.end_to_end_id);
      tx.ele('Amt', { Ccy: ccy }).txt(amount(e.cents));
      tx.ele('CdtDbtInd').txt(e.direction);
      if (e.reason) tx.ele('RtrInf').ele('Rsn').ele('Cd').txt(e.reason);
    }
  }
  return doc.end({ prettyPrint: true }) + '\n';
}

export interface StatusSpec {
  /** the MsgId of the pain.001 file reported on */
  msg_id: string;
  group?: { status: string; reason?: string };
  payments?: Array<{
    pmt_inf_id: string;
    status?: string;
    reason?: string;
    transactions?: Array<{ end_to_end_id: string; status: string; reason?: string; cents?: number; currency?: string }>;
  }>;
}

/** A pain.002.001.10 status report, by the message's documented structure. */
export function pain002(msgId: string, s: StatusSpec): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' })
    .ele('urn:iso:std:iso:20022:tech:xsd:pain.002.001.10', 'Document')
    .ele('CstmrPmtStsRpt');
  const hdr = doc.ele('GrpHdr');
  hdr.ele('MsgId').txt(msgId);
  hdr.ele('CreDtTm').txt('2026-12-02T09:00:00Z');
  const grp = doc.ele('OrgnlGrpInfAndSts');
  grp.ele('OrgnlMsgId').txt(s.msg_id);
  grp.ele('OrgnlMsgNmId').txt('pain.001.001.09');
  const reason = (el: ReturnType<typeof doc.ele>, code?: string) => code && el.ele('StsRsnInf').ele('Rsn').ele('Cd').txt(code);
  if (s.group) {
    grp.ele('GrpSts').txt(s.group.status);
    reason(grp, s.group.reason);
  }
  for (const p of s.payments ?? []) {
    const pmt = doc.ele('OrgnlPmtInfAndSts');
    pmt.ele('OrgnlPmtInfId').txt(p.pmt_inf_id);
    if (p.status) pmt.ele('PmtInfSts').txt(p.status);
    reason(pmt, p.reason);
    for (const t of p.transactions ?? []) {
      const tx = pmt.ele('TxInfAndSts');
      tx.ele('OrgnlEndToEndId').txt(t.end_to_end_id);
      tx.ele('TxSts').txt(t.status);
      reason(tx, t.reason);
      if (t.cents !== undefined)
        tx.ele('OrgnlTxRef')
          .ele('Amt')
          .ele('InstdAmt', { Ccy: t.currency ?? 'EUR' })
          .txt(amount(t.cents));
    }
  }
  return doc.end({ prettyPrint: true }) + '\n';
}
