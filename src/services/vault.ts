import { randomUUID } from 'node:crypto';
import type { Queryable } from '../store/db.ts';
import * as orders from '../store/orders.ts';
import { findProject } from '../store/projects.ts';
import { nowFor } from './context.ts';
import { ApiError, invalid } from '../domain/errors.ts';
import { detectBrands, luhnValid, truncatePan } from '../domain/card.ts';
import { checkDataKey, dataKeyFor, fingerprint, openField, sealField, type DataKey, type KeyedCtx } from './crypto-envelope.ts';
import type { CardData } from '../acquirer/connector.ts';

/**
 * The card vault: stores a PAN against a transaction's one-use setup_token and answers a
 * vault_token. PAN, cardholder name and CVC are stored only sealed (crypto-envelope.ts).
 */

export interface CardInput {
  pan: string;
  /** MMYYYY */
  expiry: string;
  name?: string;
  setup_token: string;
}

export interface VaultCard {
  vault_token: string;
  truncated_pan: string;
  brand: string;
  brands: string[];
}

export interface VaultCardRow {
  id: string;
  project_id: string;
  transaction_id: string;
  data_key_id: string;
  pan_ct: string;
  name_ct: string | null;
  fingerprint: string;
  expiry: string;
  truncated_pan: string;
  brand: string;
  brands: string[];
  cvc_ct: string | null;
  created: Date;
}

export const PAN_PATTERN = /^[0-9]{12,19}$/;
export const EXPIRY_PATTERN = /^(0[1-9]|1[0-2])[0-9]{4}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every rule of a card; the HTTP schema checks the shape first, the hosted page relies on this. */
export function checkCardInput(input: CardInput) {
  if (typeof input.pan !== 'string' || !PAN_PATTERN.test(input.pan)) throw invalid('pan', 'pan must be 12 to 19 digits');
  if (!luhnValid(input.pan)) throw invalid('pan', 'pan is not a valid card number (check digit)');
  const brands = detectBrands(input.pan);
  if (!brands) throw invalid('pan', 'pan is not a card number of a supported brand');
  if (typeof input.expiry !== 'string' || !EXPIRY_PATTERN.test(input.expiry)) throw invalid('expiry', 'expiry must be MMYYYY');
  if (input.name !== undefined && (typeof input.name !== 'string' || input.name.length < 1 || input.name.length > 120))
    throw invalid('name', 'name must be 1 to 120 characters');
  if (typeof input.setup_token !== 'string' || !UUID.test(input.setup_token)) throw invalid('setup_token', 'setup_token must be a uuid');
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
export async function storeCard(ctx: KeyedCtx, input: CardInput, opts: StoreOptions = {}): Promise<VaultCard> {
  const { brand, brands } = checkCardInput(input);
  const found = (await ctx.db.query<{ id: string; project_id: string }>('SELECT id, project_id FROM transactions WHERE setup_token = $1', [input.setup_token]))[0];
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
    await q.query(
      `INSERT INTO vault_cards (id, project_id, transaction_id, data_key_id, pan_ct, name_ct, fingerprint, expiry, truncated_pan, brand, brands, created)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        id, project.id, txn.id, dk.id,
        sealField(dk, id, 'pan', input.pan),
        input.name !== undefined ? sealField(dk, id, 'name', input.name) : null,
        fingerprint(dk, input.pan),
        input.expiry, truncatePan(input.pan), brand, brands, now,
      ],
    );
    await q.query('UPDATE transactions SET setup_token_used = $2 WHERE id = $1', [txn.id, now]);
  });
  return { vault_token: id, truncated_pan: truncatePan(input.pan), brand, brands };
}

/** For the hosted card form: the setup_token must be the one of this transaction. No API key. */
export const storeCardForTransaction = (ctx: KeyedCtx, transactionId: string, input: CardInput) => storeCard(ctx, input, { transactionId });

/** The stored card of a transaction, locked when asked. */
export async function findVaultCard(q: Queryable, projectId: string, vaultToken: string, lock = false): Promise<VaultCardRow | undefined> {
  return (await q.query<VaultCardRow>(`SELECT * FROM vault_cards WHERE project_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [projectId, vaultToken]))[0];
}

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
  await q.query('UPDATE vault_cards SET cvc_ct = $2 WHERE id = $1', [row.id, sealField(dk, row.id, 'cvc', cvc)]);
}

export async function deleteCvc(q: Queryable, projectId: string, transactionIds: string[]) {
  if (!transactionIds.length) return;
  await q.query('UPDATE vault_cards SET cvc_ct = NULL WHERE project_id = $1 AND transaction_id = ANY($2::uuid[]) AND cvc_ct IS NOT NULL', [projectId, transactionIds]);
}
