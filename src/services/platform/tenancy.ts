import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Ctx } from './context.ts';
import * as projects from '../../store/platform/projects.ts';
import { defaultSettings } from '../../domain/project.ts';
import { DomainError } from '../../domain/errors.ts';
import type { ProjectId } from '../../domain/ids.ts';

const hashKey = (key: string) => createHash('sha256').update(key).digest('hex');

export function newKey(mode: 'test' | 'live') {
  const key = `${mode}_${randomBytes(32).toString('base64url')}`;
  // the portal shows the hint: the prefix and the last four characters
  return { key, hash: hashKey(key), hint: `${key.slice(0, 9)}…${key.slice(-4)}` };
}

export interface CreatedProject {
  merchant_id: string;
  project_id: string;
  api_key: string;
  /** the webhook signing secret, shown only here (added by the webhooks hook) */
  webhook_secret?: string;
}

/** Creates a project (and its merchant unless one is named) with a first API key, shown only here. */
export async function createProject(
  ctx: Ctx,
  input: { name: string; mode: 'test' | 'live'; merchantId?: string },
): Promise<CreatedProject> {
  const projectId = randomUUID();
  const k = newKey(input.mode);
  const merchantId = input.merchantId ?? randomUUID();
  await ctx.db.tx(async (q) => {
    if (input.merchantId) {
      if (!(await projects.merchantExists(q, input.merchantId)))
        throw new DomainError('NotFound', `merchant ${input.merchantId} not found`);
    } else {
      await projects.insertMerchant(q, merchantId, input.name);
    }
    const settings = defaultSettings({
      defaultExpiration: ctx.config.defaultExpiration,
      captureWindow: ctx.config.captureWindow,
      mode: input.mode,
    });
    await projects.insertProject(q, { id: projectId, merchant_id: merchantId, name: input.name, mode: input.mode, settings });
    await projects.insertApiKey(q, { id: randomUUID(), project_id: projectId, key_hash: k.hash, hint: k.hint });
  });
  const shown: Record<string, unknown> = {};
  for (const hook of ctx.hooks.projectCreated) Object.assign(shown, await hook(ctx, projectId));
  return { merchant_id: merchantId, project_id: projectId, api_key: k.key, ...shown };
}

/** Issues a new key and revokes every older one of the project. */
export async function rotateKey(ctx: Ctx, projectId: ProjectId): Promise<{ project_id: string; api_key: string }> {
  const rotated = await ctx.db.tx(async (q) => {
    const p = await projects.findProject(q, projectId);
    if (!p) throw new DomainError('NotFound', `project ${projectId} not found`);
    const k = newKey(p.mode);
    const id = randomUUID();
    await projects.insertApiKey(q, { id, project_id: projectId, key_hash: k.hash, hint: k.hint });
    await projects.revokeKeys(q, projectId, id);
    return { project_id: projectId, api_key: k.key };
  });
  ctx.keyCache?.clear(); // the old key stops working now, not at the cache's TTL
  return rotated;
}

/**
 * Parses `Authorization: Basic base64(key:)` to the key, strictly (RFC 7617): one space after the
 * scheme, canonical padded base64 and nothing after it, valid UTF-8, the key as user id and an
 * empty password (or the bare key). Anything else is no credentials at all.
 */
function keyFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!m || m[1].length % 4 !== 0) return undefined;
  const bytes = Buffer.from(m[1], 'base64');
  if (bytes.toString('base64') !== m[1]) return undefined; // junk bits or bytes the decoder would skip
  const decoded = bytes.toString('utf8');
  if (Buffer.from(decoded, 'utf8').compare(bytes) !== 0) return undefined; // not UTF-8
  const colon = decoded.indexOf(':');
  if (colon === -1) return decoded || undefined; // the bare key, as some clients send it
  if (colon === 0 || colon !== decoded.length - 1) return undefined; // no key, or a password
  return decoded.slice(0, colon);
}

export async function authenticate(ctx: Ctx, header: string | undefined) {
  const key = keyFromAuthorization(header);
  // a key read from the database (not the cache) notes its use, for "last used" in the portal
  const load = async (hash: string) => {
    const p = await projects.projectByKeyHash(ctx.db, hash);
    if (p) await projects.touchKey(ctx.db, hash);
    return p;
  };
  const hash = key && hashKey(key);
  const project = hash ? await (ctx.keyCache ? ctx.keyCache.get(hash, () => load(hash)) : load(hash)) : undefined;
  if (!project)
    throw new DomainError(
      'Unauthorized',
      key ? 'API key is not valid' : 'API key missing: use HTTP Basic authentication with the key as username',
    );
  return project;
}

/** Moves a test project's clock forward by `ms`; returns its new offset. Cached projects are dropped at once. */
export async function advanceTestClock(ctx: Ctx, projectId: ProjectId, ms: number): Promise<number> {
  const offset = await projects.advanceClock(ctx.db, projectId, ms);
  ctx.keyCache?.clear();
  return offset;
}
