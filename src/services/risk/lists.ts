import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Ctx } from '../platform/context.ts';
import { invalid, notFound } from '../../domain/errors.ts';
import { isUuid } from '../../domain/ids.ts';
import { parseBinTable, TEST_BINS, type BinTable } from '../../domain/risk/bins.ts';
import {
  isListKind,
  isListName,
  LIST_KINDS,
  LISTS,
  parseEntry,
  parseExpiry,
  parseNote,
  paymentKeys,
  type ListName,
} from '../../domain/risk/lists.ts';
import { addEntry, cardOfTransaction, entriesOf, listHits, removeEntry, type Audit, type ListRow } from '../../store/risk/lists.ts';
import { existingDataKey } from '../platform/crypto-envelope.ts';
import { openCard } from '../vault/cards.ts';
import { findProject } from '../../store/platform/projects.ts';
import { cardFingerprint, keys } from './key.ts';

/**
 * Blocklists and allowlists (docs/risk.md "Lists"): the screening's lookup, and their changes
 * from the portal (a project's, by its owners) and the CLI (a project's, or the platform's), each
 * audited in the statement that makes it.
 */

const tables = new WeakMap<object, BinTable>();
/** The BIN table: the test cards', and RISK_BIN_TABLE's lines over them (read once per configuration). */
export function binTable(ctx: Pick<Ctx, 'config'>): BinTable {
  let t = tables.get(ctx.config);
  if (!t) {
    t = parseBinTable(TEST_BINS);
    if (ctx.config.riskBinTable) parseBinTable(readFileSync(ctx.config.riskBinTable, 'utf8'), t);
    tables.set(ctx.config, t);
  }
  return t;
}

/** The list entries a card attempt matches, its project's and the platform's: one statement. */
export function screenLists(
  ctx: Ctx,
  projectId: string,
  card: { fingerprint: string; pan: string; country: string | undefined },
  address: unknown,
  email: unknown,
) {
  return listHits(ctx.db, projectId, paymentKeys(card.fingerprint, card.pan, card.country, address, email), new Date());
}

/** Who changes a list: a portal user, or the CLI (an operator on the server). */
export type Changer = { user: { id: string; email: string; merchant_id: string }; address: string } | 'cli';

/** A project's lists (`project`), or the platform's (`platform`). */
export type Scope = { project: string } | 'platform';

const actorOf = (c: Changer) => (c === 'cli' ? 'cli' : c.user.email);

/** The project of a scope, checked: NotFound when it does not exist. */
async function projectOf(ctx: Ctx, scope: Scope) {
  if (scope === 'platform') return undefined;
  const p = isUuid(scope.project) ? await findProject(ctx.db, scope.project) : undefined;
  if (!p) throw notFound('project');
  return p;
}

function auditOf(changer: Changer, merchantId: string | undefined, action: string): Audit {
  return {
    id: randomUUID(),
    merchant_id: merchantId,
    user_id: changer === 'cli' ? null : changer.user.id,
    actor: actorOf(changer),
    address: changer === 'cli' ? null : changer.address,
    action,
    detail: changer === 'cli' ? { by: 'cli' } : {},
  };
}

export interface Entry {
  id: string;
  list: ListName;
  kind: string;
  value: string;
  created: string;
  created_by: string | null;
  /** when it stops matching; null: never */
  expires_at: string | null;
  /** its expiry has passed: it matches no payment (listed until removed, or added again) */
  expired: boolean;
  note: string | null;
}
const view = (r: ListRow, now = Date.now()): Entry => ({
  id: r.id,
  list: r.list,
  kind: r.kind,
  value: r.value,
  created: new Date(r.created).toISOString(),
  created_by: r.created_by,
  expires_at: r.expires_at ? new Date(r.expires_at).toISOString() : null,
  expired: r.expires_at !== null && new Date(r.expires_at).getTime() <= now,
  note: r.note,
});

/** What is added to a list: the value, and optionally when it expires (parseExpiry) and a note. */
export interface ListInput {
  list: unknown;
  kind: unknown;
  value: unknown;
  expires_at?: unknown;
  note?: unknown;
}

/**
 * Adds `value` to a list. A card is given as its number and kept only as its fingerprint (and
 * its last 4 digits, to be recognised). Adding what is already listed changes nothing; adding
 * again what has expired renews it.
 */
export async function addToList(ctx: Ctx, scope: Scope, input: ListInput, changer: Changer): Promise<{ added: boolean; entry: Entry }> {
  if (!isListName(input.list)) throw invalid('list', `list must be one of ${LISTS.join(', ')}`);
  if (!isListKind(input.kind)) throw invalid('kind', `kind must be one of ${LIST_KINDS.join(', ')}`);
  if (typeof input.value !== 'string' || !input.value.trim() || input.value.length > 300) throw invalid('value', 'value is required');
  const now = new Date();
  const expires = parseExpiry(input.expires_at, now);
  const note = parseNote(input.note);
  const project = await projectOf(ctx, scope);
  const parsed = parseEntry(input.kind, input.value, (pan) => cardFingerprint(keys(ctx), pan));
  const { added, entry } = await addEntry(
    ctx.db,
    project?.id ?? null,
    { ...parsed, id: randomUUID(), list: input.list, created_by: actorOf(changer), expires_at: expires, note, now },
    auditOf(changer, project?.merchant_id, 'risk_list_added'),
  );
  return { added, entry: view(entry) };
}

/** Removes an entry by its id; NotFound when the list has none. */
export async function removeFromList(ctx: Ctx, scope: Scope, id: unknown, changer: Changer): Promise<Entry> {
  const project = await projectOf(ctx, scope);
  if (typeof id !== 'string' || !isUuid(id)) throw notFound('list entry');
  const row = await removeEntry(ctx.db, project?.id ?? null, id.toLowerCase(), auditOf(changer, project?.merchant_id, 'risk_list_removed'));
  if (!row) throw notFound('list entry');
  return view(row);
}

/** Every entry of a project's lists, or the platform's. */
export async function showLists(ctx: Ctx, scope: Scope): Promise<Entry[]> {
  const project = await projectOf(ctx, scope);
  const now = Date.now();
  return (await entriesOf(ctx.db, project?.id ?? null)).map((r) => view(r, now));
}

/**
 * "Block this card" on an order's page: the card of one of the order's card transactions is added
 * to the project's blocklist, by its fingerprint under the risk key, as screening computes it
 * (key.ts). The number is opened from the vault for the moment it takes and kept nowhere; the
 * entry's note names the order. NotFound when the transaction is not the order's or has no card.
 */
export async function blockTransactionCard(
  ctx: Ctx,
  project: { id: string },
  orderId: unknown,
  transactionId: unknown,
  changer: Changer,
): Promise<{ added: boolean; entry: Entry }> {
  if (typeof orderId !== 'string' || !isUuid(orderId) || typeof transactionId !== 'string' || !isUuid(transactionId))
    throw notFound('card');
  const row = await cardOfTransaction(ctx.db, project.id, orderId.toLowerCase(), transactionId.toLowerCase());
  const dk = row && (await existingDataKey(ctx.db, ctx.masterKey, project.id));
  if (!row || !dk) throw notFound('card');
  // eslint-disable-next-line no-control-regex -- a note is one line: a merchant_order_id's control characters are dropped
  const note = `order ${row.merchant_order_id ?? orderId}`.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 200);
  return addToList(ctx, { project: project.id }, { list: 'block', kind: 'card', value: openCard(dk, row).pan, note }, changer);
}
