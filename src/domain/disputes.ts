import { DomainError } from './errors.ts';

/**
 * Disputes (docs/payouts.md "Disputes"): a chargeback's stages as the acquirer reports them and
 * the merchant's answer. Money follows the acquirer's stages only (a chargeback and a
 * pre-arbitration debit, a second presentment credits back); the merchant's accept or defence
 * is recorded and handed to the operator, who answers the acquirer.
 */

export type DisputeState = 'open' | 'accepted' | 'defended' | 'won' | 'lost';
export const DISPUTE_STATES: DisputeState[] = ['open', 'accepted', 'defended', 'won', 'lost'];
export type Stage = 'chargeback' | 'second_presentment' | 'pre_arbitration';

/** Days the merchant has to accept or defend a chargeback (the schemes give the acquirer about 30; it needs time to answer). */
const RESPONSE_DAYS = 14;

export const deadlineOf = (created: Date) => new Date(created.getTime() + RESPONSE_DAYS * 86_400_000);

/** The stage each stage follows: a stage out of order matches nothing. */
export const AFTER: Record<Stage, Stage | undefined> = {
  chargeback: undefined,
  second_presentment: 'chargeback',
  pre_arbitration: 'second_presentment',
};

/** The state a stage leaves the dispute in: the acquirer's defence won it, the issuer's second try lost it. */
export const stateAfter = (stage: Stage): DisputeState =>
  stage === 'chargeback' ? 'open' : stage === 'second_presentment' ? 'won' : 'lost';

/** The merchant's answer: only to an open dispute, before its deadline. */
export function checkAnswer(state: DisputeState, deadline: Date, now: Date) {
  if (state !== 'open') throw new DomainError('ValidationError', `the dispute is ${state}: it was answered or decided already`);
  if (now.getTime() > deadline.getTime()) throw new DomainError('ValidationError', 'the deadline to answer this dispute has passed');
}

/** Evidence limits: what the acquirer takes (documents and pictures), small enough to keep in the database. */
export const EVIDENCE = {
  maxFiles: 5,
  maxBytes: 2 * 1024 * 1024,
  maxTextChars: 5000,
  types: { 'application/pdf': 'pdf', 'image/png': 'png', 'image/jpeg': 'jpg', 'text/plain': 'txt' } as Record<string, string>,
};

/** The first bytes each type starts with (text has none): a file named .pdf that is not one is refused. */
const MAGIC: Record<string, number[]> = {
  'application/pdf': [0x25, 0x50, 0x44, 0x46],
  'image/png': [0x89, 0x50, 0x4e, 0x47],
  'image/jpeg': [0xff, 0xd8, 0xff],
};

export interface EvidenceFile {
  name: string;
  type: string;
  bytes: Uint8Array;
}

/** Checks a defence's text and files; answers the file name each is kept under. */
export function checkEvidence(text: string, files: EvidenceFile[]): string[] {
  const field = (f: string, m: string) => new DomainError('ValidationError', m, f);
  if (!text.trim()) throw field('text', 'say why the chargeback is wrong');
  if (text.length > EVIDENCE.maxTextChars) throw field('text', `at most ${EVIDENCE.maxTextChars} characters`);
  if (files.length > EVIDENCE.maxFiles) throw field('files', `at most ${EVIDENCE.maxFiles} files`);
  return files.map((f, i) => {
    const ext = EVIDENCE.types[f.type];
    if (!ext) throw field('files', `${f.name}: only PDF, PNG, JPEG or plain text files`);
    if (!f.bytes.length) throw field('files', `${f.name}: the file is empty`);
    if (f.bytes.length > EVIDENCE.maxBytes) throw field('files', `${f.name}: at most ${EVIDENCE.maxBytes / 1024 / 1024} MB a file`);
    const magic = MAGIC[f.type];
    if (magic && !magic.every((b, j) => f.bytes[j] === b)) throw field('files', `${f.name}: the file is not a ${ext.toUpperCase()}`);
    // a name safe on every file system: the operator's copy is evidence-N.ext
    return `evidence-${i + 1}.${ext}`;
  });
}
