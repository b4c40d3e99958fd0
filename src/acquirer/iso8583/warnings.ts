/**
 * Repeated warnings of one link, counted instead of written one by one: a host that sent 20,000
 * junk answers wrote 20,000 lines (4.6 MB). The first warning of each kind (its message) is
 * written at once; the others of that kind are counted, and when the window ends one line says
 * how many more there were, with the fields of the last one. A kind still repeating keeps being
 * summarised, a line per window; one that went quiet starts afresh.
 */
export type WarningWriter = (msg: string, fields: Record<string, unknown>) => void;

interface Kind {
  more: number;
  last: Record<string, unknown>;
  since: number;
}

export class WarningTally {
  private kinds = new Map<string, Kind>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly write: WarningWriter,
    private readonly windowMs = 10_000,
  ) {}

  warn(msg: string, fields: Record<string, unknown>) {
    const kind = this.kinds.get(msg);
    if (kind) {
      kind.more++;
      kind.last = fields;
      return;
    }
    this.kinds.set(msg, { more: 0, last: fields, since: Date.now() });
    this.write(msg, fields);
    this.timer ??= setTimeout(() => this.flush(), this.windowMs).unref();
  }

  /** Writes the summary of each kind that repeated; those still repeating go on being counted. */
  flush() {
    clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    for (const [msg, kind] of this.kinds) {
      if (kind.more === 0) {
        this.kinds.delete(msg);
        continue;
      }
      const seconds = Math.max(1, Math.round((now - kind.since) / 1000));
      this.write(`${msg}: ${kind.more} more like it in the last ${seconds} s`, { ...kind.last, repeated: kind.more, seconds });
      Object.assign(kind, { more: 0, since: now });
    }
    if (this.kinds.size) this.timer = setTimeout(() => this.flush(), this.windowMs).unref();
  }

  /** The link closes: what was counted is written, nothing more is kept. */
  close() {
    this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.kinds.clear();
  }
}
