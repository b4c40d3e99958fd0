import type { JournalEntry, LinkJournal } from './journal.ts';

/**
 * The journal as this branch's money core needs it: the core calls the connector inside its
 * database transaction, and on the embedded store (one connection) a write of the connector's
 * own would wait for that transaction forever. So STANs come from blocks reserved ahead (by a
 * timer, outside any transaction: disjoint blocks keep them unique across nodes and restarts),
 * and journal rows are written behind, in order, once the store is free. When the money core
 * calls connectors outside transactions (its operation-id contract), the plain journal is used.
 */

interface Block {
  next: number;
  last: number;
}

const dayOf = (d: Date) => d.toISOString().slice(0, 10);

export class BufferedJournal implements LinkJournal {
  private blocks = new Map<string, Block[]>();
  private refilling = new Map<string, Promise<void>>();
  private recent = new Map<string, JournalEntry>();
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout;

  constructor(
    private inner: LinkJournal,
    private opts: { blockSize?: number; warmMs?: number; waitMs?: number; onError?: (err: Error) => void } = {},
  ) {
    this.timer = setInterval(() => void this.warmAll(), opts.warmMs ?? 60_000);
    this.timer.unref();
    void this.warmAll();
  }

  private get size() {
    return this.opts.blockSize ?? 100;
  }

  private left(key: string) {
    return (this.blocks.get(key) ?? []).reduce((n, b) => n + b.last - b.next + 1, 0);
  }

  /** Reserves blocks for every bound terminal, today and (near midnight) tomorrow. */
  async warmAll(): Promise<void> {
    try {
      const terminals = (await this.inner.terminals?.()) ?? [];
      const now = new Date();
      const days = [dayOf(now), dayOf(new Date(now.getTime() + 15 * 60_000))];
      for (const t of terminals) for (const d of new Set(days)) if (this.left(`${t}|${d}`) < this.size / 2) await this.refill(t, d);
    } catch (err) {
      this.opts.onError?.(err as Error);
    }
  }

  private refill(terminal: string, day: string): Promise<void> {
    const key = `${terminal}|${day}`;
    let p = this.refilling.get(key);
    if (!p) {
      p = (async () => {
        const last = await (this.inner.reserve ?? ((t, d) => this.inner.nextStan(t, d)))(terminal, day, this.size);
        const count = this.inner.reserve ? this.size : 1;
        this.blocks.set(key, [...(this.blocks.get(key) ?? []), { next: last - count + 1, last }]);
      })().finally(() => this.refilling.delete(key));
      this.refilling.set(key, p);
    }
    return p;
  }

  async nextStan(terminal: string, day: string): Promise<number> {
    const key = `${terminal}|${day}`;
    if (this.left(key) < this.size / 2) void this.refill(terminal, day).catch((e: Error) => this.opts.onError?.(e));
    // nothing reserved yet (a terminal bound a moment ago), or others took the block first:
    // wait a little for a reservation, never forever
    const deadline = Date.now() + (this.opts.waitMs ?? 2_000);
    while (!this.left(key)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no STAN reserved for terminal ${terminal} yet`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.refill(terminal, day),
        new Promise<void>(
          (_, reject) => (timer = setTimeout(() => reject(new Error(`no STAN reserved for terminal ${terminal} yet`)), left)),
        ),
      ]).finally(() => clearTimeout(timer));
    }
    const list = this.blocks.get(key)!;
    const b = list[0];
    const stan = b.next++;
    if (b.next > b.last) list.shift();
    return stan;
  }

  /**
   * From memory only: reading the store could wait on the caller's transaction. This branch's
   * adapter makes a new operation id per call, so an id not in memory was never sent from here.
   */
  async find(projectId: string, operationId: string) {
    return this.recent.get(`${projectId}|${operationId}`);
  }

  private remember(e: JournalEntry) {
    this.recent.set(`${e.project_id}|${e.operation_id}`, e);
    if (this.recent.size > 10_000) this.recent.delete(this.recent.keys().next().value!);
  }

  private behind(write: () => Promise<unknown>) {
    this.chain = this.chain.then(write).then(
      () => {},
      (err: Error) => this.opts.onError?.(err),
    );
  }

  async record(e: JournalEntry, now: Date) {
    this.remember(e);
    this.behind(() => this.inner.record(e, now));
    return e;
  }

  async answered(projectId: string, operationId: string, code: string, authCode: string | null, now: Date) {
    const e = this.recent.get(`${projectId}|${operationId}`);
    if (e) this.remember({ ...e, response_code: code, authorization_code: authCode });
    this.behind(() => this.inner.answered(projectId, operationId, code, authCode, now));
  }

  /** Waits for every write queued so far. */
  flush(): Promise<void> {
    return this.chain;
  }

  close() {
    clearInterval(this.timer);
    return this.flush();
  }
}
