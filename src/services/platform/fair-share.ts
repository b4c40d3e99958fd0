import type { Ctx } from './context.ts';
import { rateLimited } from '../../domain/errors.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * Fair shares of what all merchants share (docs/security.md "Fair shares"): at most `limit`
 * searches, or reports, of one project at a time on this node. One more is refused at once
 * with 429 RateLimitExceeded (Retry-After: 1) instead of queueing for connections every
 * merchant needs; the other projects' work never waits behind it.
 */
type ShareKind = 'search' | 'report';

const inUse = new WeakMap<object, Map<string, number>>();

/** Takes one of the project's slots of this kind; answers its release (idempotent). Throws 429 when none is free. */
export function takeShare(ctx: Ctx, kind: ShareKind, projectId: ProjectId): () => void {
  const limit = kind === 'search' ? ctx.config.limits.searchesPerProject : ctx.config.limits.reportsPerProject;
  if (limit <= 0) return () => {};
  let counts = inUse.get(ctx.db);
  if (!counts) inUse.set(ctx.db, (counts = new Map()));
  const key = `${kind}\n${projectId}`;
  const n = counts.get(key) ?? 0;
  if (n >= limit)
    throw rateLimited(
      kind === 'search'
        ? `this project already has ${n} searches running: at most ${limit} at a time; retry when one has finished`
        : `this project already has ${n} CSV reports running: at most ${limit} at a time; retry when one has finished`,
      1,
    );
  counts.set(key, n + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };
}
