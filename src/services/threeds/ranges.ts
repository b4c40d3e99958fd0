import type { Authenticator, DirectoryServer } from '../../acquirer/authenticator.ts';
import type { CardData, ThreeDsResult } from '../../acquirer/connector.ts';
import { VERSION } from '../../acquirer/threeds/messages.ts';
import { eciFor } from '../../domain/card.ts';
import { RANGES_REFRESH_MS, RANGES_RETRY_MS, rangeOf, speaks, type CardRange, type RangeAnswer } from '../../domain/card-ranges.ts';
import { newId } from '../../domain/ids.ts';
import type { ProjectRow } from '../../domain/entities.ts';
import type { Db } from '../../store/db/db.ts';
import { schedule } from '../../store/platform/jobs.ts';
import { findProject } from '../../store/platform/projects.ts';
import {
  claimRefresh,
  directoryStates,
  ensureRefreshJob,
  keepPres,
  nextRefresh,
  rangesOf,
  refreshFailed,
} from '../../store/threeds/ranges.ts';
import { nowFor, type Ctx } from '../platform/context.ts';

/**
 * The card ranges of a live project's directory servers (docs/three-d-secure.md "Card ranges"):
 * a PReq to each DS at first use, then daily (a project's `threeds_card_ranges` job, and any
 * lookup that finds the refresh due), never more than hourly, by one node at a time (the DS
 * row's lease). The PRes is kept in the store with its serialNum, sent back on the next PReq so
 * the DS answers only the changes. Before an AReq, the card's range decides: a PAN in no range
 * (or in one whose ACS does not speak 2.2.0) is not sent an AReq, the unauthenticated fallback
 * applies at once. While no ranges of a DS are known (its first PReq failed), every PAN is asked.
 */

export const RANGES_JOB = 'threeds_card_ranges';
/** how long a node holds a refresh before another may take it over (a PReq is bounded by THREEDS_TIMEOUT_MS) */
const LEASE_MS = 60_000;

/** Each store's ranges as this node last read them, by DS URL and the row's version. */
const copies = new WeakMap<Db, Map<string, { version: string; ranges: CardRange[] }>>();
/** The projects whose daily job this node has made sure of. */
const jobsMade = new WeakMap<Db, Set<string>>();

/**
 * One refresh of `ds`, when it is due and no other node holds it: the PReq (no database
 * transaction open) and its PRes kept, or the failure noted (the next try in an hour). Returns
 * whether this node made it (false: not due, another node's, or a transaction is held).
 */
export async function refreshDirectory(ctx: Ctx, ds: DirectoryServer): Promise<boolean> {
  // never a network call with a transaction held (an idempotent request's): a later lookup refreshes
  if (ctx.db.holding()) return false;
  const claim = await claimRefresh(ctx.db, ds.url, LEASE_MS);
  if (!claim) return false;
  const id = newId();
  try {
    const pres = await ds.preq(claim.serial_num ?? undefined, id);
    await keepPres(ctx.db, ds.url, pres, RANGES_REFRESH_MS);
    ctx.log.info(
      { directory_server: ds.url, serial_num: pres.serialNum, full: pres.full, ranges: pres.ranges.length, skipped: pres.skipped },
      '3-D Secure: card ranges refreshed',
    );
  } catch (err) {
    await refreshFailed(ctx.db, ds.url, (err as Error).message, RANGES_RETRY_MS);
    ctx.log.warn({ directory_server: ds.url, preq: id, err: (err as Error).message }, '3-D Secure: the PReq got no good PRes; ranges kept');
  }
  return true;
}

/**
 * Before a live card payment's lookup: the ranges of the project's directory servers, fetched at
 * first use (waited for, within THREEDS_TIMEOUT_MS) and refreshed in the background when due;
 * the project's daily job made once per node. Nothing for an authenticator with no DS.
 */
export async function prepareCardRanges(ctx: Ctx, project: ProjectRow, authenticator: Authenticator): Promise<void> {
  const dirs = authenticator.directories?.() ?? [];
  if (!dirs.length) return;
  const states = await directoryStates(
    ctx.db,
    dirs.map((d) => d.url),
  );
  const first: DirectoryServer[] = [];
  for (const d of dirs) {
    const s = states.find((x) => x.url === d.url);
    if (!s?.refreshed_at) first.push(d);
    else if (s.due)
      void refreshDirectory(ctx, d).catch((err: Error) =>
        ctx.log.warn({ directory_server: d.url, err: err.message }, '3-D Secure: refreshing card ranges'),
      );
  }
  await Promise.all(first.map((d) => refreshDirectory(ctx, d)));
  const made = jobsMade.get(ctx.db) ?? new Set<string>();
  jobsMade.set(ctx.db, made);
  if (!made.has(project.id)) {
    await ensureRefreshJob(ctx.db, RANGES_JOB, project.id, new Date(nowFor(project).getTime() + RANGES_REFRESH_MS));
    made.add(project.id);
  }
}

/** What the kept ranges say of `card` (RangeAnswer): read from this node's copy, read again when the DS's version moved. */
export async function cardRangeFor(ctx: Ctx, authenticator: Authenticator, card: Pick<CardData, 'pan' | 'brand'>): Promise<RangeAnswer> {
  const ds = authenticator.directoryFor?.(card.brand);
  if (!ds) return { known: false };
  const [state] = await directoryStates(ctx.db, [ds.url]);
  if (!state?.refreshed_at) return { known: false };
  const mine = copies.get(ctx.db) ?? new Map<string, { version: string; ranges: CardRange[] }>();
  copies.set(ctx.db, mine);
  let copy = mine.get(ds.url);
  if (copy?.version !== state.version) {
    copy = { version: state.version, ranges: await rangesOf(ctx.db, ds.url) };
    mine.set(ds.url, copy);
  }
  // a DS that listed no range at all is asked about every card, as before its first PRes
  if (!copy.ranges.length) return { known: false };
  const range = rangeOf(copy.ranges, card.pan);
  return range && speaks(range, VERSION) ? { known: true, range } : { known: true };
}

/**
 * The lookup's result when the card's range rules out an AReq: U with the brand's ECI, no
 * liability shift (the binding's fallback decides); undefined when the AReq is to be sent.
 */
export async function outsideCardRanges(
  ctx: Ctx,
  authenticator: Authenticator,
  card: Pick<CardData, 'pan' | 'brand'>,
  attemptId: string,
): Promise<ThreeDsResult | undefined> {
  const answer = await cardRangeFor(ctx, authenticator, card);
  if (!answer.known || answer.range) return undefined;
  ctx.log.info({ attempt: attemptId }, '3-D Secure: the card is in no range of the directory server; no AReq, unauthenticated fallback');
  return { trans_status: 'U', eci: eciFor(card.brand, 'U'), liability_shift: false };
}

/** The `threeds_card_ranges` job: the project's directory servers refreshed when due, and the job again at the next due time. */
export async function refreshProjectRanges(ctx: Ctx, projectId: string): Promise<void> {
  const project = await findProject(ctx.db, projectId);
  if (!project || project.mode !== 'live') return;
  const dirs = ctx.authenticators.live(project).directories?.() ?? [];
  if (!dirs.length) return; // no directory server bound any more: the job ends
  for (const d of dirs) await refreshDirectory(ctx, d);
  const next = await nextRefresh(
    ctx.db,
    dirs.map((d) => d.url),
  );
  const now = nowFor(project).getTime();
  const at = Math.max(now + 60_000, (next?.getTime() ?? now + RANGES_REFRESH_MS) + 1000);
  await schedule(ctx.db, { project_id: project.id, kind: RANGES_JOB, ref_id: project.id, run_at: new Date(at) });
}
