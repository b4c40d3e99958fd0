import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { Ctx } from './context.ts';
import * as dataKeys from '../../store/platform/keys.ts';
import type { Queryable } from '../../store/db/db.ts';
import type { DataKeyRow } from '../../store/platform/keys.ts';
import type { ProjectId } from '../../domain/ids.ts';

/**
 * Envelope encryption of card data (docs/design.md "Secrets and the vault").
 *
 * Each project has one random 256-bit data key. It is stored only wrapped (AES-256-GCM) by the
 * master key, in `data_keys.wraps` under the master key's id. Card fields are sealed with
 * AES-256-GCM under a key derived from the data key, with the project, record and field as
 * associated data, so a ciphertext copied to another row or field does not open. The PAN
 * fingerprint is an HMAC under a second derived key.
 */

/** Use cases that touch card data need the master key besides the store. */

export interface DataKey {
  id: string;
  projectId: ProjectId;
  sealKey: Buffer;
  macKey: Buffer;
}

const IV = 12;
const TAG = 16;

const derive = (key: Buffer, info: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32));

/** A short public id of a master key (an HMAC, so it reveals nothing of the key). */
const masterKeyId = (master: Buffer) => createHmac('sha256', master).update('tender/master-key-id/v1').digest('hex').slice(0, 16);

export function seal(key: Buffer, plaintext: Buffer, aad: string): string {
  const iv = randomBytes(IV);
  const c = createCipheriv('aes-256-gcm', key, iv);
  c.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), ct]).toString('base64');
}

export function open(key: Buffer, sealed: string, aad: string): Buffer {
  const raw = Buffer.from(sealed, 'base64');
  if (raw.length < IV + TAG) throw new Error('ciphertext too short');
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV));
  d.setAAD(Buffer.from(aad, 'utf8'));
  d.setAuthTag(raw.subarray(IV, IV + TAG));
  return Buffer.concat([d.update(raw.subarray(IV + TAG)), d.final()]);
}

const wrapAad = (projectId: ProjectId, id: string) => `tender/data-key/v1\n${projectId}\n${id}`;

function toDataKey(id: string, projectId: ProjectId, raw: Buffer): DataKey {
  return { id, projectId, sealKey: derive(raw, 'tender/vault/seal/v1'), macKey: derive(raw, 'tender/vault/fingerprint/v1') };
}

// Unwrapped keys per master key and project. A data key never changes (rotation re-wraps it),
// so entries stay valid for the life of the process.
const cache = new WeakMap<Buffer, Map<string, DataKey>>();

function unwrap(master: Buffer, row: DataKeyRow): Buffer {
  const wrapped = row.wraps[masterKeyId(master)];
  if (!wrapped)
    throw new Error(`the data key of project ${row.project_id} is not wrapped by the configured master key (see \`tender keys rewrap\`)`);
  return open(master, wrapped, wrapAad(row.project_id, row.id));
}

/**
 * The project's data key, created (and committed) on first use; safe when several requests race.
 * Call it before opening a database transaction: it uses its own statements on ctx.db, so a
 * rolled-back caller can never leave a cached key that the store does not have.
 */
export async function dataKeyFor(ctx: Ctx, projectId: ProjectId): Promise<DataKey> {
  const q = ctx.db;
  const keys = cacheOf(ctx.masterKey);
  const hit = keys.get(projectId);
  if (hit) return hit;
  let row = await dataKeys.findDataKey(q, projectId);
  if (!row) {
    const id = randomUUID();
    const raw = randomBytes(32);
    const wraps = { [masterKeyId(ctx.masterKey)]: seal(ctx.masterKey, raw, wrapAad(projectId, id)) };
    raw.fill(0);
    await dataKeys.insertDataKey(q, { id, project_id: projectId, wraps });
    row = (await dataKeys.findDataKey(q, projectId))!;
  }
  const raw = unwrap(ctx.masterKey, row);
  const dk = toDataKey(row.id, projectId, raw);
  raw.fill(0);
  keys.set(projectId, dk);
  return dk;
}

function cacheOf(master: Buffer) {
  let keys = cache.get(master);
  if (!keys) cache.set(master, (keys = new Map()));
  return keys;
}

/** The project's data key if it has one, read with `q` (so also inside a database transaction); never creates one. */
export async function existingDataKey(q: Queryable, master: Buffer, projectId: ProjectId): Promise<DataKey | undefined> {
  const keys = cacheOf(master);
  const hit = keys.get(projectId);
  if (hit) return hit;
  const row = await dataKeys.findDataKey(q, projectId);
  if (!row) return undefined;
  const raw = unwrap(master, row);
  const dk = toDataKey(row.id, projectId, raw);
  raw.fill(0);
  keys.set(projectId, dk);
  return dk;
}

/** Checks that a stored record was sealed by this data key (records keep the key's id). */
export function checkDataKey(dk: DataKey, id: string) {
  if (dk.id !== id) throw new Error(`record of project ${dk.projectId} is sealed by an unknown data key`);
}

const fieldAad = (dk: DataKey, recordId: string, field: string) => `tender/vault/v1\n${dk.projectId}\n${recordId}\n${field}`;

export const sealField = (dk: DataKey, recordId: string, field: string, value: string) =>
  seal(dk.sealKey, Buffer.from(value, 'utf8'), fieldAad(dk, recordId, field));
export const openField = (dk: DataKey, recordId: string, field: string, sealed: string) =>
  open(dk.sealKey, sealed, fieldAad(dk, recordId, field)).toString('utf8');

/** Keyed fingerprint of a PAN for de-duplication within a project. */
/** A new record's id with a secret sealed to it under the project's data key: the columns of a sealed key row. */
export async function sealedRecord(ctx: Ctx, projectId: ProjectId, field: string, secret: string) {
  const dk = await dataKeyFor(ctx, projectId);
  const id = randomUUID();
  return { id, project_id: projectId, data_key_id: dk.id, private_key_ct: sealField(dk, id, field, secret) };
}

export const fingerprint = (dk: DataKey, pan: string) => createHmac('sha256', dk.macKey).update(pan).digest('base64url');

export interface RewrapResult {
  master_key_id: string;
  new_master_key_id: string;
  data_keys: number;
  rewrapped: number;
  already_wrapped: number;
  pruned: number;
  /** data keys the current master key cannot open (wrapped by a third key): left as they are */
  unreadable: string[];
}

/**
 * Key rotation without downtime: adds a wrap of every data key under the new master key,
 * beside the current one, so nodes on the old key and nodes already on the new key both work.
 * Once every node runs with the new key, `prune` drops the other wraps. Idempotent.
 */
export async function rewrapDataKeys(ctx: Ctx, newMaster: Buffer, opts: { prune?: boolean } = {}): Promise<RewrapResult> {
  const oldId = masterKeyId(ctx.masterKey);
  const newId = masterKeyId(newMaster);
  const result: RewrapResult = {
    master_key_id: oldId,
    new_master_key_id: newId,
    data_keys: 0,
    rewrapped: 0,
    already_wrapped: 0,
    pruned: 0,
    unreadable: [],
  };
  await ctx.db.tx(async (q) => {
    const rows = await dataKeys.lockAllDataKeys(q);
    result.data_keys = rows.length;
    for (const row of rows) {
      const wraps = { ...row.wraps };
      if (wraps[newId]) {
        result.already_wrapped++;
      } else if (wraps[oldId]) {
        const raw = unwrap(ctx.masterKey, row);
        wraps[newId] = seal(newMaster, raw, wrapAad(row.project_id, row.id));
        raw.fill(0);
        result.rewrapped++;
      } else {
        result.unreadable.push(row.project_id);
        continue;
      }
      if (opts.prune) {
        for (const k of Object.keys(wraps)) {
          if (k === newId) continue;
          delete wraps[k];
          result.pruned++;
        }
      }
      await dataKeys.setWraps(q, row.id, wraps);
    }
  });
  return result;
}
