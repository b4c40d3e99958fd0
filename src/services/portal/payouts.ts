import type { Ctx } from '../platform/context.ts';
import { merchantBalances } from '../../store/payouts/balances.ts';
import { findSchedule } from '../../store/payouts/payouts.ts';
import { audit, type Actor } from './actions.ts';
import { scheduleMerchant } from '../payouts/payouts.ts';

/** The portal's home: what Tender owes the merchant, per mode and currency, over all its projects. */
export async function balancesOfMerchant(ctx: Ctx, merchantId: string) {
  return (await merchantBalances(ctx.db, merchantId)).map((b) => ({
    mode: b.mode,
    currency: b.currency,
    pending: Number(b.pending),
    available: Number(b.available),
    reserved: Number(b.reserved),
  }));
}

/** The merchant's payout schedule, if it has one. */
export async function scheduleOf(ctx: Ctx, merchantId: string) {
  return findSchedule(ctx.db, merchantId);
}

/** An IBAN as the audit log and the notices show it: country, check digits and the last four. */
export const maskedIban = (iban: string) => (iban.length > 8 ? `${iban.slice(0, 4)}…${iban.slice(-4)}` : iban);

/**
 * Settings > Payouts (owners only: domain/roles.ts): the merchant's schedule and account, checked
 * as `tender payouts schedule` checks them, in the time zone the portal shows, and audited. A new
 * IBAN holds the next payout for a day (services/payouts/payouts.ts) and is shown to every owner.
 */
export async function savePayoutSettings(
  ctx: Ctx,
  actor: Actor,
  projectId: string,
  input: { iban: string; name: string; every: string; minimum: number; time_zone: string },
) {
  const saved = await scheduleMerchant(ctx, { merchant: actor.user.merchant_id, ...input });
  await audit(ctx, actor, saved.iban_changed ? 'payout_account_changed' : 'payout_schedule_set', projectId, {
    iban: maskedIban(saved.iban),
    every: saved.every,
    minimum: Number(saved.minimum),
    ...(saved.held_until && saved.iban_changed ? { held_until: saved.held_until.toISOString() } : {}),
  });
  return saved;
}
