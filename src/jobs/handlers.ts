import { registerJob } from './worker.ts';
import { expireTransaction } from '../services/expiry.ts';

/** Every kind of due work, in one place. */
export function registerJobHandlers() {
  registerJob('expire_transaction', (ctx, job) => expireTransaction(ctx, job.ref_id));
}
