import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** the answer is a refusal by a limit on shared work (set by the error handlers) */
    refusedByLimit?: boolean;
  }
}

/**
 * The refusal brake (docs/security.md "Fair shares"). A refusal by a limit (429, a search over the
 * cost bound) is cheap, but a client that repeats it back to back still keeps this process busy
 * answering it: hundreds a second, every one authenticated, parsed and logged, on the CPU every
 * merchant shares. Once a project (or, where nobody is signed in, a client address) has had more
 * than `perSecond` such refusals in the current or the last second, each of its requests waits
 * `delayMs` before it is handled: a client that ignores Retry-After slows itself down, costing
 * a timer instead of the work. Counted per node, in memory; other projects and addresses are
 * never slowed.
 */
export function installRefusalBrake(
  app: FastifyInstance,
  limits: { refusalsPerSecond: number; refusalDelayMs: number },
  keyOf: (req: FastifyRequest) => string | undefined,
) {
  const { refusalsPerSecond: perSecond, refusalDelayMs: delayMs } = limits;
  if (perSecond <= 0 || delayMs <= 0) return;
  const counts = new RefusalCounts();
  app.addHook('onRequest', async (req: FastifyRequest) => {
    const key = keyOf(req);
    if (key && counts.over(key, perSecond)) await new Promise((r) => setTimeout(r, delayMs));
  });
  // counted as the answer is sent, not after: a client never sees a refusal not yet counted
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode === 429 || req.refusedByLimit) {
      const key = keyOf(req);
      if (key) counts.add(key);
    }
    return payload;
  });
}

interface Window {
  second: number;
  now: number;
  last: number;
}

/** Refusals per key in the current and the last whole second; stale keys are forgotten. */
export class RefusalCounts {
  private readonly windows = new Map<string, Window>();
  constructor(private readonly clock: () => number = Date.now) {}

  add(key: string): void {
    const w = this.windowOf(key, true)!;
    w.now++;
  }

  /** more than `limit` refusals of `key` in the current or the last second */
  over(key: string, limit: number): boolean {
    const w = this.windowOf(key, false);
    return w !== undefined && Math.max(w.now, w.last) > limit;
  }

  get size(): number {
    return this.windows.size;
  }

  private windowOf(key: string, create: boolean): Window | undefined {
    const second = Math.floor(this.clock() / 1000);
    let w = this.windows.get(key);
    if (w && w.second !== second) {
      w.last = w.second === second - 1 ? w.now : 0;
      w.now = 0;
      w.second = second;
      if (!w.last && !create) {
        this.windows.delete(key);
        return undefined;
      }
    }
    if (!w && create) {
      if (this.windows.size >= 10_000) this.forgetStale(second);
      this.windows.set(key, (w = { second, now: 0, last: 0 }));
    }
    return w;
  }

  private forgetStale(second: number) {
    for (const [key, w] of this.windows) if (w.second < second - 1) this.windows.delete(key);
  }
}
