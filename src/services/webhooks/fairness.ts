import type { Config } from '../../config.ts';
import type { ProjectRow } from '../../domain/entities.ts';

/**
 * Webhook delivery slots shared fairly between projects (docs/security.md "Fair shares"), and a
 * circuit breaker per endpoint. A project has at most WEBHOOK_CONCURRENCY_PER_PROJECT POSTs in
 * flight; a delivery of a project at its share waits a moment for one of its own, and is put
 * back when none comes (a slow endpoint), so a dead endpoint slows only its own project's
 * deliveries. The WEBHOOK_CONCURRENCY slots all projects share are taken in turn.
 */
class FairSlots {
  private used = 0;
  /** POSTs of each project reserved: waiting for a slot or in flight */
  private readonly byProject = new Map<string, number>();
  private waiting: Array<() => void> = [];

  constructor(
    private readonly size: number,
    private readonly perProject: number,
  ) {}

  private readonly queued = new Map<string, Array<(ok: boolean) => void>>();

  /**
   * Takes one of the project's share; when it is all in use, waits up to `waitMs` for one of the
   * project's own POSTs to end (a fast receiver frees it in moments). Answers false when none
   * came: the delivery is then put back, holding no worker slot while a slow endpoint keeps them.
   */
  async reserve(project: string, waitMs: number): Promise<boolean> {
    const n = this.byProject.get(project) ?? 0;
    if (n < this.perProject) {
      this.byProject.set(project, n + 1);
      return true;
    }
    if (waitMs <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const line = this.queued.get(project) ?? [];
      this.queued.set(project, line);
      const take = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      line.push(take);
      const timer = setTimeout(() => {
        const i = line.indexOf(take);
        if (i >= 0) line.splice(i, 1);
        if (!line.length) this.queued.delete(project);
        resolve(false);
      }, waitMs);
      timer.unref();
    });
  }

  /** Gives back a reservation: to the project's next delivery waiting for one, else to the share. */
  unreserve(project: string) {
    const line = this.queued.get(project);
    const next = line?.shift();
    if (line && !line.length) this.queued.delete(project);
    if (next) return next(true);
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
 * attempts in a row it opens for `openMs`, and the endpoint's deliveries meanwhile wait for it to
 * close, with no attempt counted (each of WEBHOOK_MAX_ATTEMPTS is a request the endpoint got or
 * could not be reached for). When it has been open long enough, one attempt goes through: a
 * success closes it, a failure opens it again. Times are the caller's clock: a test project's
 * breaker is its own (`scope`, the project) and runs on that project's clock, so advancing one
 * project's clock neither opens nor closes another's breaker, nor a live endpoint's.
 */
class Breakers {
  private readonly state = new Map<string, { fails: number; openUntil: number }>();
  constructor(
    private readonly failures: number,
    private readonly openMs: number,
  ) {}

  private key(url: string, scope: string) {
    try {
      return `${scope} ${new URL(url).origin}`;
    } catch {
      return `${scope} ${url}`;
    }
  }

  /** When the endpoint's breaker is open: until when (ms, the caller's clock), else undefined (the attempt may go). */
  openUntil(url: string, scope: string, now: number): number | undefined {
    if (this.failures <= 0) return undefined;
    const s = this.state.get(this.key(url, scope));
    if (!s || s.openUntil <= now) return undefined;
    return s.openUntil;
  }

  record(url: string, scope: string, ok: boolean, now: number) {
    if (this.failures <= 0) return;
    const k = this.key(url, scope);
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

/** Whose breaker an endpoint's deliveries of this project share: every live project's, or a test project's own. */
export const breakerScope = (project: Pick<ProjectRow, 'id' | 'mode'>) => (project.mode === 'test' ? project.id : 'live');
