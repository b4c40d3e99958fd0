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
 * CPU time (ms) of the PostgreSQL processes on this machine; with `database`, only the backends
 * connected to it (their command line names it), so other work on the same server is left out.
 * Without it, the exited children the postmaster reaped count too.
 */
export function postgresCpuMs(database?: string): number {
  let ticks = 0;
  for (const pid of existsSync('/proc') ? readdirSync('/proc').filter((d) => /^\d+$/.test(d)) : []) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      if (database && !readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      ticks += ticksOf(pid, !database);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * TICK_MS;
}
