import { connectionLost } from './db.ts';
import { DomainError } from '../../domain/errors.ts';

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

/** A lost connection, raw or already the 503 DomainError (store/db/db.ts). */
const unavailable = (err: unknown) => connectionLost(err) || (err instanceof DomainError && err.type === 'ServiceUnavailable');

export function coalescer<T>(run: (items: T[]) => Promise<void>, opts: CoalesceOptions): (item: T) => Promise<void> {
  return batches<T, void>(
    async (items) => {
      await run(items);
      return []; // nothing to answer: each caller's promise resolves with undefined
    },
    opts,
    false,
  );
}

/**
 * Like coalescer, for statements that answer each item (`run` returns one result per item, in
 * order), and the first item waits one turn of the event loop (setImmediate) so that what its
 * callers start together (the jobs of one claimed batch) goes out as one statement. Meant to be
 * made per unit of work (one batch of jobs), so one statement never mixes the items of callers
 * in different transactions (Db.within).
 */
export function batcher<T, R>(run: (items: T[]) => Promise<R[]>, opts: CoalesceOptions): (item: T) => Promise<R> {
  return batches(run, opts, true);
}

/** The one queue behind both: `waitATurn`, the first item of a batch waits a turn of the event loop. */
function batches<T, R>(
  run: (items: T[]) => Promise<R[]>,
  { maxInFlight, maxBatch }: CoalesceOptions,
  waitATurn: boolean,
): (item: T) => Promise<R> {
  const queue: Array<{ item: T; resolve: (r: R) => void; reject: (err: unknown) => void }> = [];
  let inFlight = 0;
  let scheduled = false;

  const send = (batch: typeof queue) => run(batch.map((b) => b.item)).then((results) => batch.forEach((b, i) => b.resolve(results[i])));

  const pump = () => {
    scheduled = false;
    while (inFlight < maxInFlight && queue.length) {
      const batch = queue.splice(0, maxBatch);
      inFlight++;
      send(batch)
        .catch(async (err) => {
          if (batch.length === 1 || unavailable(err)) return batch.forEach((b) => b.reject(err));
          for (const b of batch) await send([b]).catch(b.reject);
        })
        .finally(() => {
          inFlight--;
          pump();
        });
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!waitATurn) return pump();
      if (!scheduled && inFlight < maxInFlight) {
        scheduled = true;
        setImmediate(pump);
      }
    });
}
