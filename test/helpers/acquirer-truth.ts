import type { Queryable } from '../../src/store/db/db.ts';
import type { Recorded } from '../../src/acquirer/faults.ts';

/**
 * What the acquirer behind `withFaults` did (its record per operation id, the ground truth)
 * compared with what Tender recorded (acquirer_attempts and the payments' counters), for the
 * fault tests (docs/reliability.md "The acquirer over a network"). Answers each disagreement as a
 * sentence, so a test asserts the list is empty and a failure names the operation.
 */

const MONEY = ['authorization', 'capture', 'void', 'refund'] as const;

interface Attempt {
  id: string;
  transaction_id: string;
  kind: (typeof MONEY)[number] | 'reversal' | 'inquiry' | 'three_ds';
  status: string;
  amount: number;
}

interface Payment {
  id: string;
  capture_mode: string | null;
  authorized_amount: number;
  captured_amount: number;
  voided_amount: number;
  refunded_amount: number;
}

export interface AcquirerComparison {
  /** every disagreement; empty when Tender recorded what the acquirer did */
  violations: string[];
  /** Tender's money attempts by kind (authorization, capture, void, refund) */
  attempts: Record<string, number>;
  /** attempts still in flight (processing, unknown) */
  inFlight: number;
  /** authorizations the acquirer accepted but whose answer Tender never had: reversed by recovery */
  reversed: number;
}

/** Compares the acquirer's record with the store (of one project, or all). */
export async function compareWithAcquirer(
  q: Queryable,
  acquirer: ReadonlyMap<string, Recorded>,
  projectId?: string,
): Promise<AcquirerComparison> {
  const where = projectId ? 'WHERE project_id = $1' : '';
  const params = projectId ? [projectId] : [];
  const all = (await q.query<Attempt>(`SELECT id, transaction_id, kind, status, amount FROM acquirer_attempts ${where}`, params)).map(
    (a) => ({ ...a, amount: Number(a.amount) }),
  );
  const violations: string[] = [];
  const byId = new Map(all.map((a) => [a.id, a]));
  const attempts: Record<string, number> = {};
  let reversed = 0;

  // Tender records an operation before it calls: anything the acquirer did is known to it
  for (const [id, did] of acquirer)
    if (!byId.has(id)) violations.push(`the acquirer did ${did.kind} ${id} (${did.outcome.status}), which Tender does not know`);
  const inFlight = all.filter((a) => a.status === 'processing' || a.status === 'unknown');
  for (const a of inFlight) violations.push(`${a.kind} ${a.id} is still ${a.status}`);

  // per operation: succeeded exactly when the acquirer accepted it and did not reverse it, the same amount
  for (const a of all) {
    if (!MONEY.includes(a.kind as (typeof MONEY)[number])) continue;
    attempts[a.kind] = (attempts[a.kind] ?? 0) + 1;
    const did = acquirer.get(a.id);
    if (did?.reversed) reversed++;
    const moved = did?.outcome.status === 'accepted' && !did.reversed;
    if ((a.status === 'succeeded') !== moved)
      violations.push(
        `${a.kind} ${a.id}: Tender says ${a.status}, the acquirer ${did?.outcome.status ?? 'never saw it'}${did?.reversed ? ' (reversed)' : ''}`,
      );
    if (did && did.amount !== a.amount) violations.push(`${a.kind} ${a.id}: Tender's amount ${a.amount}, the acquirer's ${did.amount}`);
  }

  // per payment: the money the acquirer moved (accepted, not reversed), whatever the operation
  // ids, adds up to Tender's counters and never to more than was authorized or captured: an
  // operation that moved money twice (under two ids) shows here
  const moved = new Map<string, Record<string, number>>();
  for (const [id, did] of acquirer) {
    const a = byId.get(id);
    if (!a || did.outcome.status !== 'accepted' || did.reversed) continue;
    const sums = moved.get(a.transaction_id) ?? {};
    sums[did.kind] = (sums[did.kind] ?? 0) + did.amount;
    moved.set(a.transaction_id, sums);
  }
  const ids = [...new Set(all.filter((a) => a.kind === 'authorization').map((a) => a.transaction_id))];
  const payments = ids.length
    ? await q.query<Payment>(
        `SELECT id, capture_mode, authorized_amount, captured_amount, voided_amount, refunded_amount
           FROM transactions WHERE id = ANY($1::uuid[])`,
        [ids],
      )
    : [];
  for (const p of payments) {
    const s = moved.get(p.id) ?? {};
    const [auth, cap, voids, refunds] = [s.authorization ?? 0, s.capture ?? 0, s.void ?? 0, s.refund ?? 0];
    // a sale is captured by its authorization
    const captured = p.capture_mode ? cap : auth;
    const tender = { captured: Number(p.captured_amount), voided: Number(p.voided_amount), refunded: Number(p.refunded_amount) };
    const acq = { captured, voided: voids, refunded: refunds };
    if (JSON.stringify(tender) !== JSON.stringify(acq))
      violations.push(`payment ${p.id}: Tender's counters ${JSON.stringify(tender)}, the acquirer moved ${JSON.stringify(acq)}`);
    if (cap + voids > auth) violations.push(`payment ${p.id}: the acquirer captured ${cap} and voided ${voids} of ${auth} authorized`);
    if (refunds > captured) violations.push(`payment ${p.id}: the acquirer refunded ${refunds} of ${captured} captured`);
  }
  return { violations, attempts, inFlight: inFlight.length, reversed };
}
