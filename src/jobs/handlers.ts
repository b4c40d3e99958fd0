import { registerJob } from './worker.ts';
import { deliverOrderWebhooks, deliveryJobOptions } from '../services/webhook-delivery.ts';
import { expireOrder, expireTransaction } from '../services/expiry.ts';
import { expirePaymentLink } from '../services/links.ts';
import { lateDecline } from '../services/payments.ts';
import { expireAuthorization, runDelayedCapture } from '../services/captures.ts';
import { runSettlement } from '../services/chargebacks.ts';
import { runIdempotencyCleanup } from '../http/idempotency.ts';

/** Every kind of due work, in one place. */
export function registerJobHandlers() {
  registerJob('expire_transaction', (ctx, job) => expireTransaction(ctx, job.ref_id));
  registerJob('expire_order', (ctx, job) => expireOrder(ctx, job.ref_id));
  registerJob('deliver_webhook', deliverOrderWebhooks, deliveryJobOptions);
  registerJob('expire_payment_link', (ctx, job) => expirePaymentLink(ctx, job.ref_id));
  registerJob('late_decline', (ctx, job) => lateDecline(ctx, job.ref_id));
  registerJob('delayed_capture', (ctx, job) => runDelayedCapture(ctx, job.ref_id));
  registerJob('authorization_expiry', (ctx, job) => expireAuthorization(ctx, job.ref_id));
  registerJob('settlement', (ctx, job) => runSettlement(ctx, job.ref_id, new Date(job.run_at)).then(() => {}));
  registerJob('idempotency_cleanup', (ctx, job) => runIdempotencyCleanup(ctx, job.ref_id));
}
