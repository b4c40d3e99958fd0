import { randomUUID } from 'node:crypto';
import { isUuid } from '../domain/ids.ts';
import { EXPIRY_PATTERN, PAN_PATTERN, type CardInput, type VaultCard } from '../domain/schemas/card.ts';
import type { Queryable } from '../store/db.ts';
import * as orders from '../store/orders.ts';
import * as vault from '../store/vault.ts';
import type { VaultCardRow } from '../store/vault.ts';
import { findProject } from '../store/projects.ts';
import { nowFor, type Ctx } from './context.ts';
import { ApiError, invalid } from '../domain/errors.ts';
import { detectBrands, luhnValid, truncatePan } from '../domain/card.ts';
import { checkDataKey, dataKeyFor, fingerprint, openField, sealField, type DataKey } from './crypto-envelope.ts';
import type { CardData } from '../acquirer/connector.ts';

/**
 * The card vault: stores a PAN against a transaction's one-use setup_token and answers a
 * vault_token. PAN, cardholder name and CVC are stored only sealed (crypto-envelope.ts).
 */

const PAN = new RegExp(PAN_PATTERN);
const EXPIRY = new RegExp(EXPIRY_PATTERN);

/** Every rule of a card; the HTTP schema checks the shape first, the hosted page relies on this. */
export function checkCardInput(input: CardInput) {
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

const tokenError = (message: string, status = 400) => new ApiError('ValidationError', message, 'setup_token', status);
const unknownToken = () => tokenError('setup_token is not known');

export interface StoreOptions {
  /** the project of the caller's API key: a setup_token of another project is unknown */
  projectId?: string;
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
  const found = await orders.transactionBySetupToken(ctx.db, input.setup_token);
  if (!found || (opts.projectId && found.project_id !== opts.projectId) || (opts.transactionId && found.id !== opts.transactionId)) throw unknownToken();
  const project = await findProject(ctx.db, found.project_id);
  if (!project) throw unknownToken();
  const dk = await dataKeyFor(ctx, project.id);
  const id = randomUUID();
  await ctx.db.tx(async (q) => {
    // The row lock makes the single use hold when two requests race with one token.
    const txn = await orders.transactionById(q, found.id, true);
    if (!txn || txn.setup_token !== input.setup_token) throw unknownToken();
    if (txn.setup_token_used) throw tokenError('setup_token has already been used', 409);
    const now = nowFor(project);
    if (now.getTime() - new Date(txn.created).getTime() > ctx.config.setupTokenTtlSeconds * 1000)
      throw tokenError(`setup_token expired: it is valid ${ctx.config.setupTokenTtlSeconds} seconds after the order was created`);
    if (txn.status !== 'new') throw tokenError(`setup_token can no longer be used: the transaction is ${txn.status}`, 409);
    await vault.insertVaultCard(q, {
      id,
      project_id: project.id,
      transaction_id: txn.id,
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
    await orders.markSetupTokenUsed(q, txn.id, now);
  });
  return { vault_token: id, truncated_pan: truncatePan(input.pan), brand, brands };
}

/** For the hosted card form: the setup_token must be the one of this transaction. No API key. */
export const storeCardForTransaction = (ctx: Ctx, transactionId: string, input: CardInput) => storeCard(ctx, input, { transactionId });

/** The card in clear, for the connector only. Never logged, never returned. */
export function openCard(dk: DataKey, row: VaultCardRow): CardData & { name?: string } {
  checkDataKey(dk, row.data_key_id);
  const card: CardData = { pan: openField(dk, row.id, 'pan', row.pan_ct), expiry: row.expiry, brand: row.brand };
  if (row.name_ct) card.name = openField(dk, row.id, 'name', row.name_ct);
  if (row.cvc_ct) card.cvc = openField(dk, row.id, 'cvc', row.cvc_ct);
  return card;
}

/** Keeps the CVC sealed until the authorization (docs/design.md "Secrets and the vault": then it is deleted). */
export async function storeCvc(q: Queryable, dk: DataKey, row: VaultCardRow, cvc: string) {
  await vault.setSealedCvc(q, row.id, sealField(dk, row.id, 'cvc', cvc));
}

export async function deleteCvc(q: Queryable, projectId: string, transactionIds: string[]) {
  if (!transactionIds.length) return;
  await vault.deleteCvcOfTransactions(q, projectId, transactionIds);
}
