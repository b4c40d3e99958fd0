import type { Connector, OperationKind, Outcome } from './connector.ts';

/**
 * A fault-injecting wrapper around any connector, for tests (docs/reliability.md "The acquirer
 * over a network"): each call may be delayed, have its answer lost (the inner connector DID the
 * operation, the caller gets a throw), be answered twice (the inner connector is called again
 * with the same operation id, as a retrying network would), or fail before reaching the acquirer
 * (a throw, nothing done). Faults come by rule (a function of the call) or by probability, from a
 * seeded generator so a run can be repeated.
 *
 * The wrapper keeps its own record of what the acquirer answered per operation id: the ground
 * truth a test compares with what Tender recorded.
 */

export type Fault = 'none' | 'delay' | 'lost_answer' | 'duplicate' | 'error';

export interface FaultCall {
  method: 'authorize' | 'capture' | 'void' | 'refund' | 'inquire' | 'reverse';
  operation_id: string;
  amount?: number;
}

export interface FaultOptions {
  /** per fault, the probability of each call getting it (checked in this order: error, lost_answer, duplicate, delay) */
  probability?: Partial<Record<Exclude<Fault, 'none'>, number>>;
  /** decides a call's fault; wins over the probabilities when it answers one */
  rule?: (call: FaultCall) => Fault | undefined;
  /** how long a delayed call waits (ms) */
  delayMs?: number;
  /** seed of the generator (default 1) */
  seed?: number;
  /** which methods get faults (default all money operations and inquiries) */
  methods?: FaultCall['method'][];
}

/** What the acquirer behind the wrapper did with one operation: its last answer, and how often it was asked. */
export interface Recorded {
  kind: OperationKind;
  amount: number;
  outcome: Outcome;
  calls: number;
  /** an authorization undone by an accepted reversal */
  reversed?: boolean;
}

export type FaultyConnector = Connector & {
  /** operation id -> what the acquirer did (money operations only) */
  readonly acquirer: ReadonlyMap<string, Recorded>;
  /** how many calls got each fault */
  readonly injected: Readonly<Record<Fault, number>>;
};

/** Thrown for a fault: what a dropped connection or a timeout looks like to the caller. */
class InjectedFault extends Error {}

/** A small seeded generator (mulberry32): the same seed, the same faults. */
export function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const KIND: Record<FaultCall['method'], OperationKind> = {
  authorize: 'authorization',
  capture: 'capture',
  void: 'void',
  refund: 'refund',
  inquire: 'inquiry',
  reverse: 'reversal',
};

export function withFaults(inner: Connector, opts: FaultOptions = {}): FaultyConnector {
  const next = random(opts.seed ?? 1);
  const p = opts.probability ?? {};
  const methods = new Set(opts.methods ?? ['authorize', 'capture', 'void', 'refund', 'inquire', 'reverse']);
  const acquirer = new Map<string, Recorded>();
  const injected: Record<Fault, number> = { none: 0, delay: 0, lost_answer: 0, duplicate: 0, error: 0 };

  const pick = (call: FaultCall): Fault => {
    if (!methods.has(call.method)) return 'none';
    const ruled = opts.rule?.(call);
    if (ruled) return ruled;
    for (const f of ['error', 'lost_answer', 'duplicate', 'delay'] as const) if (next() < (p[f] ?? 0)) return f;
    return 'none';
  };
  const note = (call: FaultCall, outcome: Outcome) => {
    if (call.method === 'inquire') {
      const seen = acquirer.get(call.operation_id);
      // an inquiry tells the final answer of an operation: the record follows it
      if (seen && outcome.status !== 'not_found') seen.outcome = outcome;
      return;
    }
    const seen = acquirer.get(call.operation_id);
    if (seen) Object.assign(seen, { outcome, calls: seen.calls + 1 });
    else acquirer.set(call.operation_id, { kind: KIND[call.method], amount: call.amount ?? 0, outcome, calls: 1 });
  };
  async function run(call: FaultCall, send: () => Promise<Outcome>): Promise<Outcome> {
    const fault = pick(call);
    injected[fault]++;
    if (fault === 'error') throw new InjectedFault(`injected: connection refused before ${call.method} ${call.operation_id}`);
    if (fault === 'delay') await new Promise((r) => setTimeout(r, opts.delayMs ?? 50));
    const outcome = await send();
    note(call, outcome);
    if (fault === 'duplicate') note(call, await send());
    if (fault === 'lost_answer') throw new InjectedFault(`injected: the answer to ${call.method} ${call.operation_id} was lost`);
    return outcome;
  }
  return {
    name: `${inner.name}+faults`,
    capabilities: inner.capabilities,
    acquirer,
    injected,
    authorize: (req) => run({ method: 'authorize', operation_id: req.operation_id, amount: req.amount }, () => inner.authorize(req)),
    capture: (req) => run({ method: 'capture', operation_id: req.operation_id, amount: req.amount }, () => inner.capture(req)),
    void: (req) => run({ method: 'void', operation_id: req.operation_id, amount: req.amount }, () => inner.void(req)),
    refund: (req) => run({ method: 'refund', operation_id: req.operation_id, amount: req.amount }, () => inner.refund(req)),
    inquire: (req) => run({ method: 'inquire', operation_id: req.operation_id }, () => inner.inquire(req)),
    reverse: (req) =>
      run({ method: 'reverse', operation_id: req.operation_id, amount: req.amount }, async () => {
        const outcome = await inner.reverse(req);
        const original = acquirer.get(req.original_operation_id);
        if (outcome.status === 'accepted' && original) original.reversed = true;
        return outcome;
      }),
    ...(inner.notification ? { notification: inner.notification.bind(inner) } : {}),
  };
}
