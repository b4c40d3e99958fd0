/**
 * The bank's files about Tender's payouts (docs/payouts.md "Bank files in"), read into what they
 * say of each transfer; matching them to payouts is the service's. Pure: text in, lines out.
 *
 * - camt.053.001.08, the operator's account statement (its ISO 20022 schema is in
 *   test/fixtures/sepa/): a booked debit naming a payout's EndToEndId books it; a booked credit
 *   with return information (RtrInf) naming one is its return.
 * - pain.002.001.10, the bank's status report on a pain.001 file: RJCT on the group, on the
 *   payment information block or on one transaction rejects those payouts. No official schema of
 *   it is in the repository: it is read by its documented structure.
 */
import { invalid } from '../errors.ts';
import { cents, child, children, readXml, textOf, type XmlElement } from './xml.ts';

const CAMT053 = 'urn:iso:std:iso:20022:tech:xsd:camt.053.001.08';
const PAIN002 = 'urn:iso:std:iso:20022:tech:xsd:pain.002.001.10';

/** An entry of the statement that names a transfer (an EndToEndId other than NOTPROVIDED). */
export interface StatementLine {
  event: 'booked' | 'returned';
  end_to_end_id: string;
  cents: number;
  currency: string;
  /** the statement's account (Acct/Id/IBAN), when it names one by IBAN */
  account?: string;
  /** the return reason code (RtrInf/Rsn/Cd, or its Prtry) */
  reason?: string;
  /** RvslInd: the bank undoes an earlier entry; reported, never applied */
  reversal: boolean;
}

export interface Statement {
  kind: 'camt.053.001.08';
  message_id: string;
  lines: StatementLine[];
  /** entries that name no transfer of Tender's: not booked yet (Sts other than BOOK), credits that are no return, no EndToEndId */
  ignored: number;
}

/** A rejection in a status report: of the whole file (group), of its payment information block, or of one transfer. */
export interface Rejection {
  scope: 'group' | 'payment' | 'transaction';
  msg_id: string;
  pmt_inf_id?: string;
  end_to_end_id?: string;
  /** the transaction's original amount, when the report repeats it (OrgnlTxRef/Amt/InstdAmt) */
  cents?: number;
  currency?: string;
  /** StsRsnInf/Rsn/Cd (or Prtry), inherited from the level above when the line has none */
  reason?: string;
}

export interface StatusReport {
  kind: 'pain.002.001.10';
  message_id: string;
  original_msg_id: string;
  rejections: Rejection[];
  /** statuses that reject nothing (ACCP, ACSC, ACTC, PDNG, PART, ...) */
  ignored: number;
}

const required = (el: XmlElement | undefined, what: string, ...path: string[]): string => {
  const t = textOf(el, ...path);
  if (t === undefined) throw invalid('file', `${what}: ${path.join('/')} is missing`);
  return t;
};

/** The amount and currency of an amount element (`<Amt Ccy="EUR">12.34</Amt>`). */
function amountOf(el: XmlElement, where: string): { cents: number; currency: string } {
  const currency = el.getAttribute('Ccy');
  if (!currency || !/^[A-Z]{3}$/.test(currency)) throw invalid('file', `${where}: the amount has no ISO 4217 currency (Ccy)`);
  return { cents: cents(el.textContent?.trim(), where), currency };
}

/** The root's message kind: the ISO 20022 namespace tells it. */
function kindOf(root: XmlElement): 'camt' | 'pain' {
  const ns = root.namespaceURI ?? '';
  if (root.localName === 'Document' && ns === CAMT053) return 'camt';
  if (root.localName === 'Document' && ns === PAIN002) return 'pain';
  const named = /^urn:iso:std:iso:20022:tech:xsd:(.+)$/.exec(ns)?.[1];
  throw invalid(
    'file',
    `${named ? `the file is ${named}` : 'the file is no ISO 20022 document'}: Tender reads camt.053.001.08 statements and pain.002.001.10 status reports`,
  );
}

const reasonOf = (el: XmlElement | undefined) => textOf(el, 'Rsn', 'Cd') ?? textOf(el, 'Rsn', 'Prtry');

function statement(root: XmlElement): Statement {
  const doc = child(root, 'BkToCstmrStmt');
  if (!doc) throw invalid('file', 'the camt.053 document has no BkToCstmrStmt');
  const message_id = required(doc, 'the statement', 'GrpHdr', 'MsgId');
  const lines: StatementLine[] = [];
  let ignored = 0;
  const stmts = children(doc, 'Stmt');
  if (!stmts.length) throw invalid('file', 'the camt.053 document has no Stmt');
  for (const [s, stmt] of stmts.entries()) {
    const account = textOf(stmt, 'Acct', 'Id', 'IBAN');
    for (const [n, entry] of children(stmt, 'Ntry').entries()) {
      const where = `Stmt ${s + 1} Ntry ${n + 1}`;
      const amt = child(entry, 'Amt');
      if (!amt) throw invalid('file', `${where}: Amt is missing`);
      const total = amountOf(amt, where);
      const direction = required(entry, where, 'CdtDbtInd');
      if (direction !== 'CRDT' && direction !== 'DBIT') throw invalid('file', `${where}: CdtDbtInd is ${direction}, not CRDT or DBIT`);
      const status = textOf(entry, 'Sts', 'Cd') ?? textOf(entry, 'Sts', 'Prtry');
      const reversal = textOf(entry, 'RvslInd') === 'true';
      const txs = children(entry, 'NtryDtls').flatMap((d) => children(d, 'TxDtls'));
      if (status !== 'BOOK' || !txs.length) {
        ignored++;
        continue;
      }
      for (const tx of txs) {
        const id = textOf(tx, 'Refs', 'EndToEndId');
        const rtr = child(tx, 'RtrInf');
        if (!id || id === 'NOTPROVIDED' || (direction === 'CRDT' && !rtr)) {
          ignored++;
          continue;
        }
        // one transfer's amount is its own; an entry of one transfer may carry it on the entry only
        const own = child(tx, 'Amt') ?? child(tx, 'AmtDtls', 'TxAmt', 'Amt');
        if (!own && txs.length > 1) throw invalid('file', `${where}: a batch entry whose TxDtls ${id} has no Amt`);
        lines.push({
          event: direction === 'DBIT' ? 'booked' : 'returned',
          end_to_end_id: id,
          ...(own ? amountOf(own, `${where} ${id}`) : total),
          ...(account ? { account } : {}),
          ...(rtr && reasonOf(rtr) ? { reason: reasonOf(rtr) } : {}),
          reversal,
        });
      }
    }
  }
  return { kind: 'camt.053.001.08', message_id, lines, ignored };
}

const isRejected = (status: string | undefined) => status === 'RJCT';

function statusReport(root: XmlElement): StatusReport {
  const doc = child(root, 'CstmrPmtStsRpt');
  if (!doc) throw invalid('file', 'the pain.002 document has no CstmrPmtStsRpt');
  const message_id = required(doc, 'the status report', 'GrpHdr', 'MsgId');
  const group = child(doc, 'OrgnlGrpInfAndSts');
  const msg_id = required(group, 'the status report', 'OrgnlMsgId');
  const groupReason = reasonOf(child(group, 'StsRsnInf'));
  const rejections: Rejection[] = [];
  let ignored = 0;
  if (isRejected(textOf(group, 'GrpSts'))) rejections.push({ scope: 'group', msg_id, ...(groupReason ? { reason: groupReason } : {}) });
  for (const [p, pmt] of children(doc, 'OrgnlPmtInfAndSts').entries()) {
    const pmt_inf_id = required(pmt, `OrgnlPmtInfAndSts ${p + 1}`, 'OrgnlPmtInfId');
    const pmtReason = reasonOf(child(pmt, 'StsRsnInf')) ?? groupReason;
    const pmtStatus = textOf(pmt, 'PmtInfSts');
    if (isRejected(pmtStatus)) rejections.push({ scope: 'payment', msg_id, pmt_inf_id, ...(pmtReason ? { reason: pmtReason } : {}) });
    else if (pmtStatus) ignored++;
    for (const [n, tx] of children(pmt, 'TxInfAndSts').entries()) {
      const where = `OrgnlPmtInfAndSts ${p + 1} TxInfAndSts ${n + 1}`;
      if (!isRejected(textOf(tx, 'TxSts'))) {
        ignored++;
        continue;
      }
      const end_to_end_id = required(tx, where, 'OrgnlEndToEndId');
      const reason = reasonOf(child(tx, 'StsRsnInf')) ?? pmtReason;
      const amt = child(tx, 'OrgnlTxRef', 'Amt', 'InstdAmt');
      rejections.push({
        scope: 'transaction',
        msg_id,
        pmt_inf_id,
        end_to_end_id,
        ...(amt ? amountOf(amt, `${where} ${end_to_end_id}`) : {}),
        ...(reason ? { reason } : {}),
      });
    }
  }
  return { kind: 'pain.002.001.10', message_id, original_msg_id: msg_id, rejections, ignored };
}

/** A camt.053.001.08 statement or a pain.002.001.10 status report; a ValidationError for anything else, or a broken one. */
export function readBankFile(text: string): Statement | StatusReport {
  const root = readXml(text);
  return kindOf(root) === 'camt' ? statement(root) : statusReport(root);
}
