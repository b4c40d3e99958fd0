/**
 * What the ISO 8583 connector keeps in the database (store/payments/acquirer-link.ts implements
 * it, main.ts wires it): STANs per terminal and day, and one row per financial message.
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

export interface LinkJournal {
  /** The next STAN (1..999999) of a terminal on a UTC day, unique across every node. */
  nextStan(terminal: string, day: string): Promise<number>;
  find(projectId: string, operationId: string): Promise<JournalEntry | undefined>;
  /** Writes the row before the message goes out; a row already there for the operation wins and is returned. */
  record(e: JournalEntry, now: Date): Promise<JournalEntry>;
  answered(projectId: string, operationId: string, responseCode: string, authorizationCode: string | null, now: Date): Promise<void>;
}
