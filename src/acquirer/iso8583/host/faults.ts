/**
 * The host's fault switches, for tests: set at start (flags) and at run time (admin lines).
 * Counts apply to the next financial answers (0110, 0210, 0230, 0410); rates to each of them.
 */
export interface Faults {
  /** ms before each financial answer */
  delayMs: number;
  /** the next N answers are never sent (the request is still decided and settled) */
  drop: number;
  /** the next N answers are sent twice */
  duplicate: number;
  /** the next N requests close the connection after being decided, without an answer */
  cut: number;
  /** sign-ons are answered 91 */
  refuseSignOn: boolean;
  /** probabilities (0..1) applied to every financial answer, for long runs */
  dropRate: number;
  duplicateRate: number;
  cutRate: number;
}

export const noFaults = (): Faults => ({
  delayMs: 0,
  drop: 0,
  duplicate: 0,
  cut: 0,
  refuseSignOn: false,
  dropRate: 0,
  duplicateRate: 0,
  cutRate: 0,
});

const NAMES: Record<string, keyof Faults> = {
  delay: 'delayMs',
  drop: 'drop',
  duplicate: 'duplicate',
  cut: 'cut',
  'refuse-sign-on': 'refuseSignOn',
  'drop-rate': 'dropRate',
  'duplicate-rate': 'duplicateRate',
  'cut-rate': 'cutRate',
};

/** Applies one admin line (`drop 3`, `delay 25000`, `refuse-sign-on on`, `clear`); answers what it did or why not. */
export function applyFaultLine(f: Faults, line: string): string {
  const [word, value] = line.trim().split(/\s+/);
  if (word === 'clear') {
    Object.assign(f, noFaults());
    return 'ok';
  }
  const key = NAMES[word];
  if (!key) return `error unknown switch ${JSON.stringify(word)}; known: ${Object.keys(NAMES).join(', ')}, clear, stats`;
  if (key === 'refuseSignOn') {
    if (value !== 'on' && value !== 'off') return 'error refuse-sign-on takes on or off';
    f.refuseSignOn = value === 'on';
    return 'ok';
  }
  const n = Number(value);
  const rate = key.endsWith('Rate');
  if (!value || !Number.isFinite(n) || n < 0 || (rate ? n > 1 : !Number.isInteger(n)))
    return `error ${word} takes ${rate ? 'a probability 0..1' : 'a whole number >= 0'}`;
  (f[key] as number) = n;
  return 'ok';
}

/** Takes one from a counter or rolls a rate: whether this answer gets the fault. */
export function take(f: Faults, counter: 'drop' | 'duplicate' | 'cut'): boolean {
  if (f[counter] > 0) {
    f[counter]--;
    return true;
  }
  return Math.random() < f[`${counter}Rate`];
}
