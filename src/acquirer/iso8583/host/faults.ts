/**
 * The host's fault switches, for tests: set at start (flags) and at run time (admin lines).
 * Counts apply to the next financial answers (0110, 0210, 0230, 0410; `partial` to the next
 * approvals of a sale or pre-authorization); rates to each of them,
 * rolled on a seeded generator when `seed` is set, so a long run's sequence of rolls can be
 * repeated (which request meets which roll still depends on the order requests arrive in).
 */
export interface Faults {
  /** ms before each financial answer (each with probability delayRate, when that is set) */
  delayMs: number;
  /** the next N answers are never sent (the request is still decided and settled) */
  drop: number;
  /** the next N answers are sent twice */
  duplicate: number;
  /** the next N requests close the connection after being decided, without an answer */
  cut: number;
  /** sign-ons are answered 91 */
  refuseSignOn: boolean;
  /** the next N approvals of a sale or pre-authorization are for half the amount: code 10, field 4 the part approved (and held or settled) */
  partial: number;
  /** the next N financial answers carry a field unlike the request's: amount (4), currency (49), RRN (37), original data (90) */
  wrongAmount: number;
  wrongCurrency: number;
  wrongRrn: number;
  wrongOriginal: number;
  /** probabilities (0..1) applied to every financial answer, for long runs */
  dropRate: number;
  duplicateRate: number;
  cutRate: number;
  /** 0: delayMs applies to every answer; else to each answer with this probability */
  delayRate: number;
  /** the generator's seed as last set (null: Math.random) */
  seed: number | null;
  /** how many answers each fault hit since the start */
  hits: Record<Counter | 'delay', number>;
}

/** The faults counted down per answer (take). */
export type Counter = 'drop' | 'duplicate' | 'cut' | 'partial' | 'wrongAmount' | 'wrongCurrency' | 'wrongRrn' | 'wrongOriginal';

export const noFaults = (): Faults => ({
  delayMs: 0,
  drop: 0,
  duplicate: 0,
  cut: 0,
  refuseSignOn: false,
  partial: 0,
  wrongAmount: 0,
  wrongCurrency: 0,
  wrongRrn: 0,
  wrongOriginal: 0,
  dropRate: 0,
  duplicateRate: 0,
  cutRate: 0,
  delayRate: 0,
  seed: null,
  hits: { drop: 0, duplicate: 0, cut: 0, delay: 0, partial: 0, wrongAmount: 0, wrongCurrency: 0, wrongRrn: 0, wrongOriginal: 0 },
});

const NAMES: Record<string, keyof Faults> = {
  delay: 'delayMs',
  drop: 'drop',
  duplicate: 'duplicate',
  cut: 'cut',
  'refuse-sign-on': 'refuseSignOn',
  partial: 'partial',
  'wrong-amount': 'wrongAmount',
  'wrong-currency': 'wrongCurrency',
  'wrong-rrn': 'wrongRrn',
  'wrong-original': 'wrongOriginal',
  'drop-rate': 'dropRate',
  'duplicate-rate': 'duplicateRate',
  'cut-rate': 'cutRate',
  'delay-rate': 'delayRate',
  seed: 'seed',
};

/** mulberry32: a small, good enough generator whose whole state is one 32-bit number. */
const generators = new WeakMap<Faults, () => number>();
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The next roll of the host's generator (seeded or Math.random). */
function roll(f: Faults): number {
  if (f.seed === null) return Math.random();
  let g = generators.get(f);
  if (!g) generators.set(f, (g = seeded(f.seed)));
  return g();
}

/** Applies one admin line (`drop 3`, `delay 25000`, `seed 42`, `refuse-sign-on on`, `clear`); answers what it did or why not. */
export function applyFaultLine(f: Faults, line: string): string {
  const [word, value] = line.trim().split(/\s+/);
  if (word === 'clear') {
    // every switch off; the counts of hits stay (they are figures of the run)
    const { hits } = f;
    Object.assign(f, noFaults(), { hits });
    generators.delete(f);
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
  if (key === 'seed') {
    f.seed = n;
    generators.set(f, seeded(n));
    return 'ok';
  }
  (f[key] as number) = n;
  return 'ok';
}

/** Takes one from a counter or rolls a rate: whether this answer gets the fault. */
export function take(f: Faults, counter: Counter): boolean {
  let hit = false;
  if (f[counter] > 0) {
    f[counter]--;
    hit = true;
  } else if (counter === 'drop' || counter === 'duplicate' || counter === 'cut')
    hit = f[`${counter}Rate`] > 0 && roll(f) < f[`${counter}Rate`];
  if (hit) f.hits[counter]++;
  return hit;
}

/** The delay of this answer: delayMs for every answer, or for a share delayRate of them. */
export function delayOf(f: Faults): number {
  if (f.delayMs <= 0) return 0;
  if (f.delayRate > 0 && roll(f) >= f.delayRate) return 0;
  f.hits.delay++;
  return f.delayMs;
}
