import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Message } from '../codec.ts';
import type { HostEntry, SettledLine } from './book.ts';
import type { DisputeEntry } from './disputes.ts';
export type { HostEntry } from './book.ts';

/**
 * The simulated host's journal, `host-journal.jsonl` in its settlement directory: one line per
 * financial request it received after sign-on, with its answer, what became of it (decided, a
 * retransmission answered as before, a collision on a STAN already used) and the settlement
 * lines it made. It is written before the settlement lines and read back at start, so a host
 * killed and restarted remembers what it held and answered, as a real acquirer does. The PAN is
 * kept masked (first six, last four). A dispute stage the admin port raised is a line too
 * (DisputeEntry), with no request.
 */

const HOST_JOURNAL = 'host-journal.jsonl';

const masked = (m: Message): Message =>
  m.fields[2]
    ? {
        ...m,
        fields: { ...m.fields, 2: `${m.fields[2].slice(0, 6)}${'*'.repeat(Math.max(0, m.fields[2].length - 10))}${m.fields[2].slice(-4)}` },
      }
    : m;

export function appendHostJournal(dir: string, e: HostEntry | DisputeEntry) {
  appendFileSync(join(dir, HOST_JOURNAL), JSON.stringify('request' in e ? { ...e, request: masked(e.request) } : e) + '\n');
}

/** The requests' entries only (what tools that read the journal look at). */
export const readHostJournal = (dir: string): HostEntry[] => readJournal(dir).filter((e): e is HostEntry => 'request' in e);

/** The journal's entries; a last line torn by a kill mid-write is left out (its request was never answered). */
export function readJournal(dir: string): Array<HostEntry | DisputeEntry> {
  const file = join(dir, HOST_JOURNAL);
  if (!existsSync(file)) return [];
  const out: Array<HostEntry | DisputeEntry> = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as HostEntry | DisputeEntry);
    } catch {
      /* torn by a kill: that request got no answer and made no line */
    }
  }
  return out;
}

/**
 * The settlement lines the journal made that a file lacks (the host was killed between the two
 * writes): appended, in order. Lines go to each file in journal order, so what is missing is a tail.
 */
export function repairSettlement(
  dir: string,
  entries: Array<HostEntry | DisputeEntry>,
  header: string,
  row: (l: SettledLine) => string,
): number {
  const byFile = new Map<string, SettledLine[]>();
  for (const l of entries.flatMap((e) => e.settled)) {
    const f = join(dir, `settlement-${l.date}.csv`);
    byFile.set(f, [...(byFile.get(f) ?? []), l]);
  }
  let added = 0;
  for (const [file, lines] of byFile) {
    const have = existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((x) => x.trim()).length - 1
      : -1;
    const missing = lines.slice(Math.max(0, have));
    if (!missing.length) continue;
    appendFileSync(file, (have < 0 ? header + '\n' : '') + missing.map((l) => row(l) + '\n').join(''));
    added += missing.length;
  }
  return added;
}
