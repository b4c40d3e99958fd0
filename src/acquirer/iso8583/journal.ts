/**
 * What the ISO 8583 connector keeps in the database (store/payments/acquirer-link.ts implements
 * it, main.ts wires it): STANs per terminal and day, and one row per financial message.
 */

import type { JournalEntry } from '../../domain/link-journal.ts';
export type { JournalEntry, MessageKind } from '../../domain/link-journal.ts';

export interface LinkJournal {
  /** The next STAN (1..999999) of a terminal on a UTC day, unique across every node. */
  nextStan(terminal: string, day: string): Promise<number>;
  find(projectId: string, operationId: string): Promise<JournalEntry | undefined>;
  /** Writes the row before the message goes out; a row already there for the operation wins and is returned. */
  record(e: JournalEntry, now: Date): Promise<JournalEntry>;
  answered(projectId: string, operationId: string, responseCode: string, authorizationCode: string | null, now: Date): Promise<void>;
}
