/**
 * SEPA credit transfer files (docs/payouts.md "Files"): ISO 20022 pain.001.001.09 as the EPC's
 * SCT implementation guidelines restrict it. Pure: the document is built from what the store
 * holds, so a file written again is the same file, byte for byte.
 */
import { create } from 'xmlbuilder2';
import { electronicFormatIBAN, isValidBIC, isValidIBAN } from 'ibantools';

/** The characters SEPA lets through every bank (the EPC's basic Latin set). */
const SEPA_CHARS = /[^A-Za-z0-9/\-?:().,'+ ]/g;

/**
 * Text for a SEPA field: accents dropped (é -> e), `&` as `+`, anything else outside the set as a
 * space, spaces collapsed, at most `max` characters. Empty when nothing usable is left.
 */
export function sepaText(text: string, max: number): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/&/g, '+')
    .replace(SEPA_CHARS, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max)
    .trim();
}

/** The longest name a SEPA party may have (the EPC restricts ISO's 140 to 70). */
export const NAME_MAX = 70;

/** An IBAN as a file carries it (no spaces, upper case), or undefined when it is not a valid IBAN. */
export function normalIban(iban: string): string | undefined {
  const e = electronicFormatIBAN(iban) ?? '';
  return isValidIBAN(e) ? e : undefined;
}

export const validBic = (bic: string) => isValidBIC(bic);

/** The smallest and largest amount of one SEPA credit transfer, in cents. */
const MIN_AMOUNT = 1;
const MAX_AMOUNT = 99_999_999_999;

/** Euro cents as the file writes them: `1234` -> `12.34`. Throws outside what one transfer may carry. */
export function sepaAmount(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < MIN_AMOUNT || cents > MAX_AMOUNT)
    throw new RangeError(`a SEPA credit transfer carries 0.01 to 999999999.99 EUR, not ${cents} cents`);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** An amount in euros as an operator types it (`25`, `25.5`, `25.50`) in cents, or undefined. */
export function parseEuros(text: string): number | undefined {
  const m = /^([0-9]{1,9})(?:\.([0-9]{1,2}))?$/.exec(text.trim());
  return m ? Number(m[1]) * 100 + Number((m[2] ?? '0').padEnd(2, '0')) : undefined;
}

/**
 * An id of the file (MsgId, PmtInfId, EndToEndId): a prefix and a UUID's 32 hex digits, at most
 * 35 characters of [A-Za-z0-9], so it never starts or ends with `/` nor holds `//`.
 */
export function sepaId(prefix: string, uuid: string): string {
  const id = `${prefix}${uuid.replace(/-/g, '').toUpperCase()}`;
  if (!/^[A-Za-z0-9]{1,35}$/.test(id)) throw new RangeError(`${id} is not a SEPA id of at most 35 letters and digits`);
  return id;
}

export interface Party {
  name: string;
  iban: string;
  bic?: string;
}

export interface CreditTransfer {
  end_to_end_id: string;
  cents: number;
  creditor: Party;
  /** the remittance line the merchant's bank shows (at most 140 characters) */
  reference: string;
}

export interface TransferFile {
  msg_id: string;
  pmt_inf_id: string;
  created: Date;
  /** the requested execution date, YYYY-MM-DD */
  execution: string;
  debtor: Party;
  transfers: CreditTransfer[];
}

const field = (text: string, max: number, what: string) => {
  const s = sepaText(text, max);
  if (!s) throw new RangeError(`${what} has no character SEPA can carry`);
  return s;
};

/** The pain.001.001.09 document: one payment information block, one credit transfer per payout, each booked apart. */
export function pain001(f: TransferFile): string {
  if (!f.transfers.length) throw new RangeError('a transfer file holds at least one credit transfer');
  const total = f.transfers.reduce((s, t) => s + t.cents, 0);
  const sum = (Math.floor(total / 100) + '.' + String(total % 100).padStart(2, '0')).toString();
  const created = f.created.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const doc = create({ version: '1.0', encoding: 'UTF-8' })
    .ele('urn:iso:std:iso:20022:tech:xsd:pain.001.001.09', 'Document')
    .ele('CstmrCdtTrfInitn');
  const hdr = doc.ele('GrpHdr');
  hdr.ele('MsgId').txt(f.msg_id);
  hdr.ele('CreDtTm').txt(created);
  hdr.ele('NbOfTxs').txt(String(f.transfers.length));
  hdr.ele('CtrlSum').txt(sum);
  hdr
    .ele('InitgPty')
    .ele('Nm')
    .txt(field(f.debtor.name, NAME_MAX, "the debtor's name"));
  const inf = doc.ele('PmtInf');
  inf.ele('PmtInfId').txt(f.pmt_inf_id);
  inf.ele('PmtMtd').txt('TRF');
  inf.ele('BtchBookg').txt('false');
  inf.ele('NbOfTxs').txt(String(f.transfers.length));
  inf.ele('CtrlSum').txt(sum);
  inf.ele('PmtTpInf').ele('SvcLvl').ele('Cd').txt('SEPA');
  inf.ele('ReqdExctnDt').ele('Dt').txt(f.execution);
  inf
    .ele('Dbtr')
    .ele('Nm')
    .txt(field(f.debtor.name, NAME_MAX, "the debtor's name"));
  inf.ele('DbtrAcct').ele('Id').ele('IBAN').txt(f.debtor.iban);
  const agent = inf.ele('DbtrAgt').ele('FinInstnId');
  if (f.debtor.bic) agent.ele('BICFI').txt(f.debtor.bic);
  else agent.ele('Othr').ele('Id').txt('NOTPROVIDED');
  inf.ele('ChrgBr').txt('SLEV');
  for (const t of f.transfers) {
    const tx = inf.ele('CdtTrfTxInf');
    tx.ele('PmtId').ele('EndToEndId').txt(t.end_to_end_id);
    tx.ele('Amt').ele('InstdAmt', { Ccy: 'EUR' }).txt(sepaAmount(t.cents));
    tx.ele('Cdtr')
      .ele('Nm')
      .txt(field(t.creditor.name, NAME_MAX, "the creditor's name"));
    tx.ele('CdtrAcct').ele('Id').ele('IBAN').txt(t.creditor.iban);
    tx.ele('RmtInf')
      .ele('Ustrd')
      .txt(field(t.reference, 140, 'the remittance information'));
  }
  return doc.end({ prettyPrint: true }) + '\n';
}
