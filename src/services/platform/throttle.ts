import { createHash } from 'node:crypto';
import type { Ctx } from './context.ts';
import { nowFor } from './context.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import * as store from '../../store/platform/throttle.ts';
import { windowCounter, type WindowCounter } from '../../store/platform/window-counter.ts';
import { rateLimited } from '../../domain/errors.ts';
import type { TransactionId } from '../../domain/ids.ts';

/**
 * Limits on what anonymous clients can do (docs/security.md "Throttling"), counted in the
 * database so every node enforces one count: requests per client address and per resource in
 * fixed one-minute windows, and card-testing protection on the hosted pages.
 */

const WINDOW_MS = 60_000;

/**
 * The counter of the per-project (per API key) rate limit: per node in memory, or shared by the
 * nodes through Redis when `redisUrl` is set. It shares capacity between keyed merchants, so N
 * nodes allowing N times the limit is acceptable; anonymous clients are limited below.
 */
export const projectRequestCounter = (redisUrl?: string): WindowCounter => windowCounter(redisUrl);

const digest = (s: string) => createHash('sha256').update(s).digest('hex');

class Throttle {
  /** buckets this node saw over their limit, until their window ends: a flood costs no writes */
  private blocked = new Map<string, number>();
  private lastSweep = 0;

  constructor(private readonly ctx: Ctx) {}

  /**
   * Counts one request against each subject (a client address, an order id) of the named
   * limit; throws 429 RateLimitExceeded with Retry-After when one is over `perMinute`.
   * When the database cannot count, the request goes on (it needs the database anyway).
   */
  async limit(name: string, subjects: string[], perMinute: number): Promise<void> {
    if (perMinute <= 0) return;
    const now = Date.now();
    const start = now - (now % WINDOW_MS);
    const refuse = (until: number) => rateLimited(`too many requests: at most ${perMinute} a minute; retry later`, (until - now) / 1000);
    for (const subject of subjects) {
      const bucket = digest(`${name}\n${subject}`);
      const until = this.blocked.get(bucket);
      if (until !== undefined && until > now) throw refuse(until);
      let hits: number;
      try {
        hits = await store.hit(this.ctx.db, bucket, new Date(start));
      } catch (err) {
        this.ctx.log.warn({ err: (err as Error).message }, 'rate limit not counted');
        return;
      }
      if (hits > perMinute) {
        if (this.blocked.size >= 10_000) this.blocked.clear();
        this.blocked.set(bucket, start + WINDOW_MS);
        throw refuse(start + WINDOW_MS);
      }
    }
    this.sweep(now);
  }

  /** At most once a minute per node: forget ended windows and card attempts out of every window. */
  private sweep(now: number) {
    if (now - this.lastSweep < WINDOW_MS) return;
    this.lastSweep = now;
    for (const [bucket, until] of this.blocked) if (until <= now) this.blocked.delete(bucket);
    // card attempts: kept a day past the window, since test projects' clocks may run ahead
    const keep = (this.ctx.config.cardTesting.windowSeconds + 86_400) * 1000;
    store.forgetOld(this.ctx.db, new Date(now - 2 * WINDOW_MS), new Date(now - keep)).catch(() => {});
  }
}

const throttles = new WeakMap<object, Throttle>();
/** The throttle of this service (one per store, so its memory of blocked buckets is shared). */
export function throttleOf(ctx: Ctx): Throttle {
  let t = throttles.get(ctx.db);
  if (!t) throttles.set(ctx.db, (t = new Throttle(ctx)));
  return t;
}

/** A client's address as stored: hashed, never in clear. */
const clientId = (address: string) => digest(`client\n${address}`);

/**
 * Card-testing protection: refuses (429) a new card attempt from the hosted pages while this
 * client, or the payment link, has had CARD_TESTING_MAX_DECLINES declines within the last
 * CARD_TESTING_WINDOW_SECONDS (the project's clock); Retry-After says when the window passes.
 */
export async function checkCardTesting(ctx: Ctx, project: ProjectRow, by: { address: string; linkId?: string | null }): Promise<void> {
  const { maxDeclines, windowSeconds } = ctx.config.cardTesting;
  if (maxDeclines <= 0) return;
  const now = nowFor(project);
  const since = new Date(now.getTime() - windowSeconds * 1000);
  const subjects: Array<{ client: string } | { linkId: string }> = [{ client: clientId(by.address) }];
  if (by.linkId) subjects.push({ linkId: by.linkId });
  for (const subject of subjects) {
    const at = await store.declinedSince(ctx.db, subject, since, maxDeclines);
    if (at)
      throw rateLimited(
        `too many declined card payments ${'linkId' in subject ? 'through this payment link' : 'from this client'}; retry later`,
        (at.getTime() + windowSeconds * 1000 - now.getTime()) / 1000,
      );
  }
}

/** Remembers a card payment started from a hosted page, so its decline counts (checkCardTesting). */
export async function recordCardAttempt(
  ctx: Ctx,
  project: ProjectRow,
  a: { transactionId: TransactionId; linkId?: string | null; address: string },
) {
  await store.recordCardAttempt(ctx.db, {
    transaction_id: a.transactionId,
    project_id: project.id,
    payment_link_id: a.linkId ?? null,
    client: clientId(a.address),
    created: nowFor(project),
  });
}
