import type { Db } from '../../store/db/db.ts';
import type { LinkJournal } from '../../acquirer/iso8583/journal.ts';
import { parseHostUrl } from '../../acquirer/iso8583/link.ts';
import * as store from '../../store/payments/acquirer-link.ts';
import { findProject } from '../../store/platform/projects.ts';
import { ApiError } from '../../domain/errors.ts';
import type { Ctx } from '../platform/context.ts';
import { createProject, type CreatedProject } from '../platform/tenancy.ts';

/**
 * STANs a node reserves at once per terminal and day. One upsert per message put a round trip
 * and a lock on the terminal's one row in front of every live payment; a block keeps STANs
 * unique across nodes (each draws disjoint blocks) and restarts (a restarted node reserves after
 * what was reserved), and leaves a gap of what a node did not use (a STAN need only be unique).
 */
const STAN_BLOCK = 100;

/** The next STAN of each terminal and day from this node's block, reserving the next block when it is used up. */
function stanBlocks(db: Db) {
  const blocks = new Map<string, { next: number; last: number }>();
  const refills = new Map<string, Promise<void>>();
  const refill = async (key: string, terminal: string, day: string) => {
    // a block that would pass 999999 fails (CHECK): the day's last STANs are drawn one at a time
    const last = await store.reserveStans(db, terminal, day, STAN_BLOCK).catch(() => undefined);
    const one = last === undefined ? await store.reserveStans(db, terminal, day, 1) : 0;
    const block = last === undefined ? { next: one, last: one } : { next: last - STAN_BLOCK + 1, last };
    for (const k of blocks.keys()) if (k.startsWith(`${terminal}|`)) blocks.delete(k); // an earlier day's rest
    blocks.set(key, block);
  };
  return async (terminal: string, day: string): Promise<number> => {
    const key = `${terminal}|${day}`;
    for (;;) {
      const b = blocks.get(key);
      if (b && b.next <= b.last) return b.next++;
      let r = refills.get(key);
      if (!r) {
        r = refill(key, terminal, day).finally(() => refills.delete(key));
        refills.set(key, r);
      }
      await r;
    }
  };
}

/** The journal the ISO 8583 connector writes, on the primary database, one statement at a time (no transaction is open around a call). */
export function linkJournal(db: Db): LinkJournal {
  return {
    nextStan: stanBlocks(db),
    find: (projectId, operationId) => store.findLinkMessage(db, projectId, operationId),
    record: (e, now) => store.insertLinkMessage(db, e, now),
    answered: (projectId, operationId, code, authCode, now) => store.answerLinkMessage(db, projectId, operationId, code, authCode, now),
  };
}

export interface AcquirerBindingInput {
  acquirer?: string;
  terminalId?: string;
  cardAcceptorId?: string;
  refuseUnauthenticated?: boolean;
}

/** Checks a binding as an operator typed it; every problem is a clear 400. */
export function checkBinding(input: AcquirerBindingInput) {
  const { acquirer, terminalId, cardAcceptorId } = input;
  if (!acquirer || !terminalId || !cardAcceptorId)
    throw new ApiError('ValidationError', 'a binding needs --acquirer iso8583://HOST:PORT, --terminal-id and --card-acceptor-id');
  try {
    parseHostUrl(acquirer);
  } catch (err) {
    throw new ApiError('ValidationError', (err as Error).message);
  }
  // fields 41 (ans 8) and 42 (ans 15): printable ASCII, no longer than the field
  if (!/^[\x21-\x7e][\x20-\x7e]{0,7}$/.test(terminalId))
    throw new ApiError('ValidationError', 'terminal id: 1 to 8 printable ASCII characters');
  if (!/^[\x21-\x7e][\x20-\x7e]{0,14}$/.test(cardAcceptorId))
    throw new ApiError('ValidationError', 'card acceptor id: 1 to 15 printable ASCII characters');
  return {
    acquirer,
    terminal_id: terminalId,
    card_acceptor_id: cardAcceptorId,
    refuse_unauthenticated: input.refuseUnauthenticated === true,
  };
}

/** Binds a live project to an acquiring host (or changes its binding). */
export async function setAcquirer(ctx: Pick<Ctx, 'db' | 'keyCache'>, projectId: string, input: AcquirerBindingInput) {
  const binding = checkBinding(input);
  const project = await findProject(ctx.db, projectId);
  if (!project) throw new ApiError('NotFound', `project ${projectId} not found`);
  if (project.mode !== 'live')
    throw new ApiError('ValidationError', 'only live projects take an acquirer binding; test projects use the simulator');
  await store.setProjectAcquirer(ctx.db, projectId, binding);
  ctx.keyCache?.clear(); // this node sees the binding at once; others hear the notification
  return { project_id: projectId, ...binding };
}

/**
 * `tender project create` with an acquirer binding: the binding is checked before the project is
 * made, so a bad one creates nothing.
 */
export async function createBoundProject(
  ctx: Ctx,
  input: { name: string; mode: 'test' | 'live'; merchantId?: string } & AcquirerBindingInput,
): Promise<CreatedProject & { acquirer?: ReturnType<typeof checkBinding> }> {
  const wanted = input.acquirer !== undefined || input.terminalId !== undefined || input.cardAcceptorId !== undefined;
  if (!wanted) return createProject(ctx, input);
  if (input.mode !== 'live') throw new ApiError('ValidationError', 'only live projects take an acquirer binding (--mode live)');
  const binding = checkBinding(input);
  const created = await createProject(ctx, input);
  await store.setProjectAcquirer(ctx.db, created.project_id, binding);
  return { ...created, acquirer: binding };
}
