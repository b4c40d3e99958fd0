// The capacity figures of `npm run test:cluster`: CPU seconds per card payment, read from
// /proc for the Tender nodes, PgBouncer and the primary's PostgreSQL processes while a bounded
// load pays orders. CPU time per payment is steadier than a rate on a shared machine: a rate
// measures the neighbours too, CPU time mostly our own work.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TICK = 100; // USER_HZ on Linux

function stat(pid: number): { ppid: number; cpu: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12])) / TICK };
  } catch {
    return undefined;
  }
}

/** CPU seconds so far of these processes and (deep) their children still alive. */
function cpuOf(roots: number[]): number {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const children = new Map<number, number[]>();
  const cpu = new Map<number, number>();
  for (const pid of all) {
    const s = stat(pid);
    if (!s) continue;
    cpu.set(pid, s.cpu);
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
  let total = 0;
  const seen = new Set<number>();
  const walk = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    total += cpu.get(pid) ?? 0;
    for (const c of children.get(pid) ?? []) walk(c);
  };
  roots.forEach(walk);
  return total;
}

export const postmasterPid = (pgdata: string) => Number(readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);

export interface Capacity {
  payments: number;
  requests: number;
  seconds: number;
  /** CPU seconds per payment */
  tender: number;
  database: number;
  bouncer: number;
  /** database growth (tables, indexes, TOAST) per payment, in bytes */
  bytesPerPayment?: number;
}

/** Measures CPU per payment while `run` pays orders for `ms`. */
export async function measure(
  groups: { tender: number[]; database: number[]; bouncer: number[] },
  run: (ms: number) => Promise<{ payments: number; requests: number }>,
  ms: number,
): Promise<Capacity> {
  const before = { tender: cpuOf(groups.tender), database: cpuOf(groups.database), bouncer: cpuOf(groups.bouncer) };
  const t0 = Date.now();
  const { payments, requests } = await run(ms);
  const seconds = (Date.now() - t0) / 1000;
  const per = (now: number, then: number) => (now - then) / Math.max(1, payments);
  return {
    payments,
    requests,
    seconds,
    tender: per(cpuOf(groups.tender), before.tender),
    database: per(cpuOf(groups.database), before.database),
    bouncer: per(cpuOf(groups.bouncer), before.bouncer),
  };
}
