import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import type { OperationKind } from '../../acquirer/connector.ts';

/*
 * The acquirer attempt of a request sent with an Idempotency-Key takes its id from the key
 * (docs/money.md "Idempotency-Key around an acquirer call"). Such a request commits its work step
 * by step around the acquirer call, so a crash can leave the attempt recorded, even answered,
 * with no response stored for the key. The retry with the same key derives the same attempt id,
 * finds that attempt, and answers its result: the acquirer is never asked twice for one key.
 */

const scope = new AsyncLocalStorage<string>();

/** Runs fn (and all it starts) as the request of an Idempotency-Key of a project. */
export function withOperationKey<T>(projectId: string, key: string, fn: () => T): T {
  return scope.run(`${projectId}\n${key}`, fn);
}

/**
 * The id of the attempt of `kind` the current request records, when it runs under an
 * Idempotency-Key: a UUID (version 8, RFC 9562) from a SHA-256 of the project, the key and the
 * kind. A request records at most one attempt of each kind.
 */
export function keyedAttemptId(kind: OperationKind): string | undefined {
  const seed = scope.getStore();
  if (seed === undefined) return undefined;
  const h = createHash('sha256').update(`${seed}\n${kind}`).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
