import type { Config } from '../../config.ts';

/**
 * Webhook delivery slots shared fairly between projects (docs/security.md "Fair shares"), and a
 * circuit breaker per endpoint. A project has at most WEBHOOK_CONCURRENCY_PER_PROJECT POSTs in
 * flight; a delivery of a project at its share does not wait in line (holding a worker's job)
 * but is put back a moment, so a dead endpoint slows only its own project's deliveries.
 * When every slot is busy, a freed one goes to the project waiting longest among those under
 * their share.
 */
export class FairSlots {
  private used = 0;
  /** POSTs of each project reserved: waiting for a slot or in flight */
  private readonly byProject = new Map<string, number>();
  private waiting: Array<() => void> = [];

  constructor(
    private readonly size: number,
    private readonly perProject: number,
  ) {}

  /** Takes one of the project's share, or answers false when it is all in use (then put the delivery back). */
  reserve(project: string): boolean {
    const n = this.byProject.get(project) ?? 0;
    if (n >= this.perProject) return false;
    this.byProject.set(project, n + 1);
    return true;
  }

  /** Gives back a reservation that was not used for a POST. */
  unreserve(project: string) {
    const left = (this.byProject.get(project) ?? 1) - 1;
    if (left > 0) this.byProject.set(project, left);
    else this.byProject.delete(project);
  }

  /** Runs a reserved POST in one of the slots all projects share (in turn when all are busy); then gives the reservation back. */
  async run<T>(project: string, fn: () => Promise<T>): Promise<T> {
    if (this.used < this.size) this.used++;
    else await new Promise<void>((go) => this.waiting.push(go)); // the freed slot passes straight to it
    try {
      return await fn();
    } finally {
      this.unreserve(project);
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    }
  }
}

const slots = new WeakMap<Config['webhook'], FairSlots>();
export function slotsFor(config: Config): FairSlots {
  let s = slots.get(config.webhook);
  if (!s)
    slots.set(
      config.webhook,
      (s = new FairSlots(
        Math.max(1, config.webhook.concurrency),
        Math.max(1, Math.min(config.limits.webhooksPerProject, config.webhook.concurrency)),
      )),
    );
  return s;
}

/**
 * A circuit breaker per endpoint (scheme, host and port of the URL): after `failures` failed
 * attempts in a row it opens for `openMs`, and attempts meanwhile are written in the delivery log
 * as held back by the breaker instead of waiting on a receiver that does not answer. When it has
 * been open long enough, one attempt goes through: a success closes it, a failure opens it again.
 */
export class Breakers {
  private readonly state = new Map<string, { fails: number; openUntil: number }>();
  constructor(
    private readonly failures: number,
    private readonly openMs: number,
  ) {}

  private key(url: string) {
    try {
      return new URL(url).origin;
    } catch {
      return url;
    }
  }

  /** When the endpoint's breaker is open: until when (ms), else undefined (the attempt may go). */
  openUntil(url: string, now = Date.now()): number | undefined {
    if (this.failures <= 0) return undefined;
    const s = this.state.get(this.key(url));
    if (!s || s.openUntil <= now) return undefined;
    return s.openUntil;
  }

  record(url: string, ok: boolean, now = Date.now()) {
    if (this.failures <= 0) return;
    const k = this.key(url);
    if (ok) return void this.state.delete(k);
    const s = this.state.get(k) ?? { fails: 0, openUntil: 0 };
    s.fails++;
    if (s.fails >= this.failures) s.openUntil = now + this.openMs;
    this.state.set(k, s);
    if (this.state.size > 10_000) this.state.delete(this.state.keys().next().value!);
  }
}

const breakers = new WeakMap<Config['webhook'], Breakers>();
export function breakersFor(config: Config): Breakers {
  let b = breakers.get(config.webhook);
  if (!b) breakers.set(config.webhook, (b = new Breakers(config.limits.breakerFailures, config.limits.breakerOpenMs)));
  return b;
}
