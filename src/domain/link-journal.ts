/**
 * One financial message of the ISO 8583 link as the journal keeps it (migration 210): written
 * before the message goes out, answered when the host answers. The connector (acquirer/iso8583)
 * and the store (store/payments/acquirer-link.ts) share this one shape.
 */
export type MessageKind = 'preauth' | 'sale' | 'completion' | 'refund' | 'reversal';

export interface JournalEntry {
  operation_id: string;
  project_id: string;
  transaction_id: string;
  /** the host's address */
  acquirer: string;
  terminal_id: string;
  /** UTC day of the STAN, YYYY-MM-DD */
  day: string;
  stan: string;
  rrn: string;
  mti: string;
  transmission: string;
  kind: MessageKind;
  amount: number;
  currency: string;
  original_rrn: string | null;
  original_kind: MessageKind | null;
  original_data: string | null;
  response_code: string | null;
  authorization_code: string | null;
}
