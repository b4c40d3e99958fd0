// CPU time from /proc, steadier than throughput on a shared machine (Linux; 0 elsewhere).
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

const ticksOf = (pid: string, children: boolean) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0); // utime stime (cutime cstime)
};

/** CPU time (ms) a process has used so far. */
export function processCpuMs(pid: number): number {
  try {
    return ticksOf(String(pid), false) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * CPU time (ms) so far of each PostgreSQL backend connected to `database` (its command line names
 * it), so other work on the same server is left out. Per process, so that a turn's time is taken
 * from the backends that lived through it (postgresCpuSince): a pool closing an idle connection
 * during a turn would otherwise take its whole past off the sum.
 */
export function postgresBackendsCpuMs(database: string): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const pid of existsSync('/proc') ? readdirSync('/proc').filter((d) => /^\d+$/.test(d)) : []) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      cpu.set(pid, ticksOf(pid, false) * TICK_MS);
    } catch {
      // the process ended meanwhile
    }
  }
  return cpu;
}

/** The CPU time (ms) the backends of `database` spent since `before` (a backend that ended meanwhile is not counted). */
export function postgresCpuSince(database: string, before: Map<string, number>): number {
  let ms = 0;
  for (const [pid, now] of postgresBackendsCpuMs(database)) ms += now - (before.get(pid) ?? 0);
  return ms;
}
