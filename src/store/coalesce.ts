import { connectionLost } from './db.ts';
import { ApiError } from '../domain/errors.ts';

/**
 * Group writes: items run in batches, one statement each, with at most `maxInFlight` batches
 * running at once. An item that arrives while that many run waits, and goes with whatever else
 * queued meanwhile. With light load every item runs alone at once, so nothing waits on a timer;
 * under load the per-statement cost (executor start, triggers, commit and its WAL flush, one round
 * trip) is shared by the batch.
 *
 * A batch is one statement, so it commits or fails whole. When a batch of several fails, each of
 * its items is run again alone, one after another: a bad item fails only its own caller. Not when
 * the database connection was lost (a 503): that is no item's fault, and each caller answers the
 * 503 its client retries, rather than waiting on a database that may still be away.
 */
export interface CoalesceOptions {
  maxInFlight: number;
  maxBatch: number;
}

/** A lost connection, raw or already the 503 ApiError (store/db.ts). */
const unavailable = (err: unknown) => connectionLost(err) || (err instanceof ApiError && err.type === 'ServiceUnavailable');

export function coalescer<T>(run: (items: T[]) => Promise<void>, { maxInFlight, maxBatch }: CoalesceOptions): (item: T) => Promise<void> {
  const queue: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  let inFlight = 0;

  const pump = () => {
    while (inFlight < maxInFlight && queue.length) {
      const batch = queue.splice(0, maxBatch);
      inFlight++;
      run(batch.map((b) => b.item))
        .then(
          () => batch.forEach((b) => b.resolve()),
          async (err) => {
            if (batch.length === 1 || unavailable(err)) return batch.forEach((b) => b.reject(err));
            for (const b of batch) await run([b.item]).then(b.resolve, b.reject);
          },
        )
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };

  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      pump();
    });
}
