import { createHash } from 'node:crypto';
import type { Ctx } from '../platform/context.ts';
import * as store from '../../store/portal/merchants.ts';
import { DomainError } from '../../domain/errors.ts';

/**
 * A portal form that creates something runs once per one-time token (the form's hidden `once`
 * field, fresh on every page): a double click or a resent form makes one link, one key. The
 * claim, the work and its result commit together, as orderAction does, so a failed attempt
 * leaves the token free for the corrected form; a second send waits for the first to commit
 * and answers `again` with where the first led.
 */
export async function runOnce<T>(
  ctx: Ctx,
  userId: string,
  purpose: string,
  token: string,
  work: () => Promise<{ value: T; shown: string }>,
): Promise<{ done: T } | { again: string }> {
  if (!/^[A-Za-z0-9_-]{16,64}$/.test(token))
    throw new DomainError('ValidationError', 'this form has expired: reload the page and send it again', 'once');
  // one token serves every creating form of a page: the claim is per form (purpose) too
  const key = createHash('sha256').update(`${purpose}\n${token}`).digest('base64url');
  const open = await ctx.db.begin();
  try {
    const claim = await store.claimAction(open.q, key, userId);
    if (claim !== true) {
      await open.rollback();
      if (claim.result === null) throw new DomainError('IdempotencyError', 'this form is still being processed', 'once', 'conflict');
      return { again: claim.result };
    }
    const value = await ctx.db.within(open, async () => {
      const r = await work();
      await store.finishAction(ctx.db, key, r.shown);
      return r.value;
    });
    await open.commit();
    return { done: value };
  } catch (err) {
    await open.rollback();
    throw err;
  }
}
