import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { privateDir } from '../../store/db/lock.ts';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { Ctx } from '../platform/context.ts';

/**
 * The platform's risk key (docs/risk.md "The card fingerprint"): TENDER_RISK_KEY (64 hex chars or
 * base64 of 32 bytes), kept like the master key and apart from it and from the projects' data keys;
 * or, for a laptop, one generated once into the data directory (0600). Every node of one Tender
 * must have the same key, or their counts of one card or address do not meet.
 */
function loadRiskKey(config: Pick<Config, 'riskKey' | 'dataDir'>, log?: Logger): Buffer {
  if (config.riskKey) return parseRiskKey(config.riskKey);
  const path = join(config.dataDir, 'risk.key');
  if (!existsSync(path)) {
    privateDir(config.dataDir);
    writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    log?.warn({ path }, 'TENDER_RISK_KEY is not set: generated a risk key in the data directory. Set TENDER_RISK_KEY in production.');
  }
  if (statSync(path).mode & 0o077) chmodSync(path, 0o600);
  return parseRiskKey(readFileSync(path, 'utf8').trim());
}

function parseRiskKey(text: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error('TENDER_RISK_KEY must be 32 bytes, as 64 hex characters or base64');
  return key;
}

/** The two keys derived from the risk key: one for card fingerprints, one for counter buckets. */
export interface RiskKeys {
  fingerprint: Buffer;
  bucket: Buffer;
}

const derive = (key: Buffer, info: string) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32));

const riskKeys = (key: Buffer): RiskKeys => ({
  fingerprint: derive(key, 'tender/card-fingerprint/v1'),
  bucket: derive(key, 'tender/risk-bucket/v1'),
});

/**
 * A card's fingerprint: an HMAC-SHA256 of its number under the risk key. The same card gives the
 * same fingerprint at every merchant and project; without the key nobody can compute it from a
 * number or learn the number from it.
 */
export const cardFingerprint = (keys: RiskKeys, pan: string) => createHmac('sha256', keys.fingerprint).update(pan).digest('base64url');

/** A counter's bucket: the subject's kind, its scope (a project, or the platform) and its value, keyed. */
export const bucketOf = (keys: RiskKeys, subject: string, scope: string, value: string) =>
  createHmac('sha256', keys.bucket).update(`${subject}\n${scope}\n${value}`).digest('base64url');

const keysOf = new WeakMap<object, RiskKeys>();
/** The risk keys of this service (loaded once per configuration). */
export function keys(ctx: Pick<Ctx, 'config' | 'log'>): RiskKeys {
  let k = keysOf.get(ctx.config);
  if (!k) keysOf.set(ctx.config, (k = riskKeys(loadRiskKey(ctx.config, ctx.log))));
  return k;
}
