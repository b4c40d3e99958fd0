import type { Ctx } from './context.ts';
import { rateLimited } from '../../domain/errors.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * Fair shares of what all merchants share (docs/security.md "Fair shares"), counted in this
 * node's memory:
 * - reports: at most `reportsPerProject` of one project at a time; one more is refused at once
 *   with 429 (a report holds its slot for minutes, a wait would not help);
 * - searches: at most `searchesPerProject` of one project at a time, and a budget of search time
 *   per second (`searchMsPerSecond`, a burst of ten seconds of it). A search over either waits in
 *   line for up to `searchWaitMs`, then is refused with 429: a client that repeats its searches
 *   back to back waits instead of spinning, and the time it may keep the database and this
 *   process busy is its share, whatever it sends. The time budget holds only while another
 *   project is at work on the node (work-conserving): a merchant alone may walk all its orders
 *   at full speed.
 */
type ShareKind = 'search' | 'report';

interface Slots {
  used: number;
  /** searches waiting for a slot, first come first served */
  waiting: Array<() => void>;
}
interface Budget {
  /** search time left, in ms (negative: owed) */
  left: number;
  at: number;
}
interface Shares {
  slots: Map<string, Slots>;
  budgets: Map<ProjectId, Budget>;
  /** when each project last sent an API request to this node */
  active: Map<ProjectId, number>;
}

const sharesOf = new WeakMap<object, Shares>();
const BURST_SECONDS = 10;
/** a project that sent an API request this recently is at work beside the others */
const ACTIVE_MS = 5000;

function shares(ctx: Ctx): Shares {
  let s = sharesOf.get(ctx.db);
  if (!s) sharesOf.set(ctx.db, (s = { slots: new Map(), budgets: new Map(), active: new Map() }));
  return s;
}

const busy = (kind: ShareKind, used: number, limit: number) =>
  rateLimited(
    kind === 'search'
      ? `this project already has ${used} searches running: at most ${limit} at a time; retry when one has finished`
      : `this project already has ${used} CSV reports running: at most ${limit} at a time; retry when one has finished`,
    1,
  );

/** The release of one slot (idempotent): hands it to the first search waiting, else frees it. */
function releaser(all: Map<string, Slots>, key: string, slots: Slots): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = slots.waiting.shift();
    if (next) return next();
    if (--slots.used <= 0) all.delete(key);
  };
}

function slotsOf(ctx: Ctx, kind: ShareKind, projectId: ProjectId) {
  const all = shares(ctx).slots;
  const key = `${kind}\n${projectId}`;
  let slots = all.get(key);
  if (!slots) all.set(key, (slots = { used: 0, waiting: [] }));
  return { all, key, slots };
}

/** Takes one of the project's report slots at once; answers its release (idempotent). Throws 429 when none is free. */
export function takeReportShare(ctx: Ctx, projectId: ProjectId): () => void {
  const limit = ctx.config.limits.reportsPerProject;
  if (limit <= 0) return () => {};
  const { all, key, slots } = slotsOf(ctx, 'report', projectId);
  if (slots.used >= limit) throw busy('report', slots.used, limit);
  slots.used++;
  return releaser(all, key, slots);
}

/**
 * A search's share: one of the project's search slots and its search time, waiting in line for
 * up to searchWaitMs for both (429 beyond, or at once when `signal` aborts). Answers the release,
 * which gives the slot on and charges the time the search took to the project's budget.
 */
export async function takeSearchShare(ctx: Ctx, projectId: ProjectId, signal?: AbortSignal): Promise<() => void> {
  const { searchesPerProject: limit, searchWaitMs, searchMsPerSecond: rate } = ctx.config.limits;
  const until = Date.now() + searchWaitMs;
  let release = () => {};
  if (limit > 0) {
    const { all, key, slots } = slotsOf(ctx, 'search', projectId);
    if (slots.used < limit) slots.used++;
    else await waitInLine(slots, until, signal, () => busy('search', slots.used, limit));
    release = releaser(all, key, slots);
  }
  if (rate <= 0) return release;
  try {
    const budget = budgetOf(ctx, projectId, rate);
    if (budget.left < 0 && othersActive(ctx, projectId)) {
      const wait = Math.ceil((-budget.left * 1000) / rate);
      if (Date.now() + wait > until)
        throw rateLimited(
          `this project has used its search time (${rate} ms a second, up to ${BURST_SECONDS} s at once); retry in ${Math.ceil(wait / 1000)} s`,
          Math.ceil(wait / 1000),
        );
      await pause(wait, signal);
    }
  } catch (err) {
    release();
    throw err;
  }
  const started = Date.now();
  return () => {
    const budget = budgetOf(ctx, projectId, rate);
    // at most one burst owed: a project that searched alone is not locked out when another comes
    budget.left = Math.max(-rate * BURST_SECONDS, budget.left - (Date.now() - started));
    shares(ctx).budgets.set(projectId, budget);
    release();
  };
}

/** Notes that a project is at work on this node (an authenticated API request). */
export function noteActive(ctx: Ctx, projectId: ProjectId): void {
  shares(ctx).active.set(projectId, Date.now());
}

/** Whether a project other than this one has been at work on this node within ACTIVE_MS; forgets the idle ones. */
function othersActive(ctx: Ctx, projectId: ProjectId): boolean {
  const since = Date.now() - ACTIVE_MS;
  const active = shares(ctx).active;
  let others = false;
  for (const [id, at] of active) {
    if (at < since) active.delete(id);
    else if (id !== projectId) others = true;
  }
  return others;
}

/** The project's search-time budget, refilled for the time since it was last read. */
function budgetOf(ctx: Ctx, projectId: ProjectId, rate: number): Budget {
  const budgets = shares(ctx).budgets;
  const now = Date.now();
  const cap = rate * BURST_SECONDS;
  let b = budgets.get(projectId);
  if (!b) budgets.set(projectId, (b = { left: cap, at: now }));
  b.left = Math.min(cap, b.left + ((now - b.at) * rate) / 1000);
  b.at = now;
  // a full budget is the default: forget it, so idle projects take no memory
  if (b.left >= cap) budgets.delete(projectId);
  return b;
}

/** Waits for a slot handed on by releaser(); throws refused() when `until` passes or `signal` aborts first. */
function waitInLine(slots: Slots, until: number, signal: AbortSignal | undefined, refused: () => Error): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const turn = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', giveUp);
      resolve();
    };
    const giveUp = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', giveUp);
      const i = slots.waiting.indexOf(turn);
      if (i >= 0) slots.waiting.splice(i, 1);
      reject(refused());
    };
    const timer = setTimeout(giveUp, Math.max(0, until - Date.now()));
    signal?.addEventListener('abort', giveUp, { once: true });
    slots.waiting.push(turn);
    if (signal?.aborted) giveUp();
  });
}

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
