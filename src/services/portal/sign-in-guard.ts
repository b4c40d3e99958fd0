import { randomUUID } from 'node:crypto';
import type { Ctx } from '../platform/context.ts';
import * as store from '../../store/portal/sign-in-throttle.ts';
import { insertAudit } from '../../store/portal/merchants.ts';
import { DomainError } from '../../domain/errors.ts';

/**
 * Sign-in throttling (docs/security.md "Portal sign-in"). Every attempt, password or second-factor
 * code, is counted per scope before it is checked, by one atomic statement: twenty parallel
 * guesses are twenty counts, and those past the limit are refused unchecked (429, a second to
 * wait). An attempt gives its count back when it was right, or refused unchecked, so the count
 * is of wrong ones and of those still being checked; only a wrong one that reaches the limit
 * locks (eight parallel sign-ins with the right password locked the account). Each lock of a
 * scope is twice as long as the one before (up to a ceiling), so a flood of guesses costs the
 * attacker more and more while the owner waits at most the ceiling; an owner with a second
 * factor is not kept out by a locked account at all (see signIn). Failures and locks go to the
 * audit log of the account's merchant.
 */

/** 429 with the seconds to wait (Retry-After). */
export class ThrottledError extends DomainError {
  constructor(readonly retryAfter: number) {
    super('RateLimitExceeded', `too many failed sign-ins: try again in ${retryAfter} seconds`);
  }
}

const WINDOW_MS = 15 * 60 * 1000;
/** a scope whose last lock ended this long ago starts again at the base lock */
const FORGET_MS = 24 * 3_600_000;

/** Who is signing in, as far as known: audited failures need the account's merchant. */
export interface Who {
  user?: { id: string; merchant_id: string; email: string };
  address: string;
}

export interface Counted {
  scope: string;
  max: number;
  /** this attempt's number in the window */
  n: number;
  /** seconds the scope is locked for, or to wait when refused unchecked; 0: this attempt may be checked */
  wait: number;
  /** past the limit while earlier attempts are being checked: refused unchecked, its count given back */
  unchecked?: true;
}

const secondsUntil = (at: Date | null | undefined, now: Date) => (at ? Math.max(0, Math.ceil((at.getTime() - now.getTime()) / 1000)) : 0);

export class SignInGuard {
  readonly now = new Date();
  constructor(
    private readonly ctx: Ctx,
    private readonly who: Who,
  ) {}

  /**
   * Counts one attempt. One past the limit (only parallel ones get there: a wrong one at the
   * limit locks) is refused unchecked and gives its count back, so it locks nothing: the ones
   * being checked decide, a wrong one at the limit locking, right ones giving their counts back.
   */
  async attempt(scope: string, max: number): Promise<Counted> {
    const row = await store.countAttempt(this.ctx.db, scope, this.now, new Date(this.now.getTime() - WINDOW_MS));
    const wait = secondsUntil(row.locked_until, this.now);
    if (wait > 0) return { scope, max, n: row.failures, wait };
    if (row.failures > max) {
      await store.uncount(this.ctx.db, scope);
      return { scope, max, n: row.failures, wait: 1, unchecked: true };
    }
    return { scope, max, n: row.failures, wait: 0 };
  }

  /** The counted attempt failed: audited; the one that reached the limit locks. Seconds locked, or 0. */
  async failed(c: Counted): Promise<number> {
    if (c.wait > 0) return c.wait;
    return c.n >= c.max ? this.lock(c.scope) : 0;
  }

  /** One audit entry for a failed password or code (the account known). */
  async audit(action: 'sign_in_failed' | 'sign_in_locked', detail: Record<string, unknown>) {
    const { user, address } = this.who;
    this.ctx.log.warn({ action, ...detail }, 'portal sign-in refused');
    if (!user) return;
    await insertAudit(this.ctx.db, {
      id: randomUUID(),
      merchant_id: user.merchant_id,
      user_id: user.id,
      email: user.email,
      project_id: null,
      action,
      detail,
      address,
    });
  }

  private async lock(scope: string): Promise<number> {
    const p = this.ctx.config.portal;
    const until = await store.lock(this.ctx.db, scope, this.now, {
      baseSeconds: p.lockSeconds,
      maxSeconds: Math.max(p.lockSeconds, p.maxLockSeconds),
      forgetBefore: new Date(this.now.getTime() - FORGET_MS),
    });
    if (until) {
      const seconds = secondsUntil(until, this.now);
      await this.audit('sign_in_locked', { scope: scope.slice(0, scope.indexOf(':')), seconds });
      return seconds;
    }
    // another request locked it first
    return Math.max(1, secondsUntil(await store.lockOf(this.ctx.db, scope), this.now));
  }

  /** The checked attempt succeeded (or a later scope refused it unchecked): its count is given back. */
  succeeded = (c: Counted) => store.uncount(this.ctx.db, c.scope);
  /** The owner proved who they are: the scope starts afresh. */
  cleared = (c: Counted) => store.clear(this.ctx.db, c.scope);
}

/** Refuses with the longest wait of the scopes, if any is locked. */
export function refuseIfLocked(...waits: number[]) {
  const wait = Math.max(0, ...waits);
  if (wait > 0) throw new ThrottledError(wait);
}
