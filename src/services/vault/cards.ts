import { randomUUID } from 'node:crypto';
import { isUuid, type ProjectId, type TransactionId } from '../../domain/ids.ts';
import { EXPIRY_PATTERN, PAN_PATTERN, type CardInput, type VaultCard } from '../../domain/schemas/card.ts';
import * as vault from '../../store/vault/cards.ts';
import type { VaultCardRow } from '../../store/vault/cards.ts';
import { vaultTarget, type VaultTarget } from '../../store/vault/cards.ts';
import { WriteSet } from '../../store/db/writes.ts';
import { nowFor, type Ctx } from '../platform/context.ts';
import { DomainError, invalid, type ErrorKind } from '../../domain/errors.ts';
import { detectBrands, luhnValid, truncatePan } from '../../domain/card.ts';
import { checkDataKey, dataKeyFor, fingerprint, openField, sealField, type DataKey } from '../platform/crypto-envelope.ts';
import type { CardData } from '../../acquirer/connector.ts';
import type { ProjectRow } from '../../domain/entities.ts';

/**
 * The card vault: stores a PAN against a transaction's one-use setup_token and answers a
 * vault_token. PAN, cardholder name and CVC are stored only sealed (crypto-envelope.ts).
 */

const PAN = new RegExp(PAN_PATTERN);
const EXPIRY = new RegExp(EXPIRY_PATTERN);

/** Every rule of a card; the HTTP schema checks the shape first, the hosted page relies on this. */
function checkCardInput(input: CardInput) {
  if (typeof input.pan !== 'string' || !PAN.test(input.pan)) throw invalid('pan', 'pan must be 12 to 19 digits');
  if (!luhnValid(input.pan)) throw invalid('pan', 'pan is not a valid card number (check digit)');
  const brands = detectBrands(input.pan);
  if (!brands) throw invalid('pan', 'pan is not a card number of a supported brand');
  if (typeof input.expiry !== 'string' || !EXPIRY.test(input.expiry)) throw invalid('expiry', 'expiry must be MMYYYY');
  if (input.name !== undefined && (typeof input.name !== 'string' || input.name.length < 1 || input.name.length > 120))
    throw invalid('name', 'name must be 1 to 120 characters');
  if (typeof input.setup_token !== 'string' || !isUuid(input.setup_token)) throw invalid('setup_token', 'setup_token must be a uuid');
  return brands;
}

const tokenError = (message: string, kind: ErrorKind = 'invalid') => new DomainError('ValidationError', message, 'setup_token', kind);
const unknownToken = () => tokenError('setup_token is not known');

export interface StoreOptions {
  /** the project of the caller's API key: a setup_token of another project is unknown */
  projectId?: string;
  /** that project, when the caller has it: the card is then stored in one round trip when all is well */
  project?: ProjectRow;
  /** the hosted page's transaction: a setup_token of another transaction is unknown */
  transactionId?: string;
}

/**
 * Stores a card. The setup_token is single use, valid `setupTokenTtlSeconds` after its
 * transaction was created (with the order, or when started later) in the project's clock,
 * and only for its own transaction and project. Nothing is stored when a rule fails.
 */
export async function storeCard(ctx: Ctx, input: CardInput, opts: StoreOptions = {}): Promise<VaultCard> {
  const { brand, brands } = checkCardInput(input);
  const once = opts.project && (await storeOnce(ctx, input, opts.project, brand, brands));
  if (once) return { vault_token: once, truncated_pan: truncatePan(input.pan), brand, brands };
  // Two round trips: one read, one statement that writes the card only while the token is unused.
  const found = await vaultTarget(ctx.db, input.setup_token);
  if (!found || (opts.projectId && found.txn.project_id !== opts.projectId) || (opts.transactionId && found.txn.id !== opts.transactionId))
    throw unknownToken();
  const { txn, project } = found;
  const now = nowFor(project);
  checkToken(ctx, txn, now);
  const dk = await dataKeyFor(ctx, project.id);
  const id = randomUUID();
  const w = new WriteSet();
  // The condition makes the single use hold when two requests race with one token.
  w.guard('transactions', txn.id, { setup_token_used: now }, { setup_token: input.setup_token, setup_token_used: null, status: 'new' });
  w.insert('vault_cards', { ...sealedCard(dk, id, project.id, input, brand, brands, now), transaction_id: txn.id });
  if (!(await w.run(ctx.db))) {
    // another request used the token (or the transaction moved) since the read: say which
    const again = await vaultTarget(ctx.db, input.setup_token);
    if (!again) throw unknownToken();
    checkToken(ctx, again.txn, now);
    throw tokenError('setup_token has already been used', 'conflict');
  }
  return { vault_token: id, truncated_pan: truncatePan(input.pan), brand, brands };
}

/**
 * The card stored in one round trip, for a caller whose project is known (the API key's): the
 * statement writes only when the token is the project's, unused, unexpired and its transaction
 * new. Answers the vault_token, or undefined when nothing was written: the caller then reads
 * the token's transaction and says why (or, when it finds nothing wrong, stores the card).
 */
async function storeOnce(ctx: Ctx, input: CardInput, project: ProjectRow, brand: string, brands: string[]): Promise<string | undefined> {
  const dk = await dataKeyFor(ctx, project.id);
  const now = nowFor(project);
  const id = randomUUID();
  const cutoff = new Date(now.getTime() - ctx.config.setupTokenTtlSeconds * 1000);
  const stored = await vault.storeCardOnce(
    ctx.db,
    { token: input.setup_token, projectId: project.id, now, cutoff },
    sealedCard(dk, id, project.id, input, brand, brands, now),
  );
  return stored ? id : undefined;
}

/** A new card's row: PAN and name sealed with the project's data key, the PAN's fingerprint. */
const sealedCard = (
  dk: DataKey,
  id: string,
  projectId: ProjectId,
  input: CardInput,
  brand: string,
  brands: string[],
  now: Date,
): Omit<VaultCardRow, 'cvc_ct' | 'transaction_id'> => ({
  id,
  project_id: projectId,
  data_key_id: dk.id,
  pan_ct: sealField(dk, id, 'pan', input.pan),
  name_ct: input.name !== undefined ? sealField(dk, id, 'name', input.name) : null,
  fingerprint: fingerprint(dk, input.pan),
  expiry: input.expiry,
  truncated_pan: truncatePan(input.pan),
  brand,
  brands,
  created: now,
});

/** Why a setup_token can no longer store a card, if it cannot. */
function checkToken(ctx: Ctx, txn: VaultTarget['txn'], now: Date) {
  if (txn.setup_token_used) throw tokenError('setup_token has already been used', 'conflict');
  if (now.getTime() - new Date(txn.created).getTime() > ctx.config.setupTokenTtlSeconds * 1000)
    throw tokenError(`setup_token expired: it is valid ${ctx.config.setupTokenTtlSeconds} seconds after the order was created`);
  if (txn.status !== 'new') throw tokenError(`setup_token can no longer be used: the transaction is ${txn.status}`, 'conflict');
}

/** For the hosted card form: the setup_token must be the one of this transaction. No API key. */
export const storeCardForTransaction = (ctx: Ctx, transactionId: TransactionId, input: CardInput) =>
  storeCard(ctx, input, { transactionId });

/** The card in clear, for the connector only. Never logged, never returned. */
export function openCard(dk: DataKey, row: VaultCardRow): CardData & { name?: string } {
  checkDataKey(dk, row.data_key_id);
  const card: CardData = { pan: openField(dk, row.id, 'pan', row.pan_ct), expiry: row.expiry, brand: row.brand };
  if (row.name_ct) card.name = openField(dk, row.id, 'name', row.name_ct);
  if (row.cvc_ct) card.cvc = openField(dk, row.id, 'cvc', row.cvc_ct);
  return card;
}

export const cvcSealed = (dk: DataKey, row: Pick<VaultCardRow, 'id'>, cvc: string) => sealField(dk, row.id, 'cvc', cvc);
