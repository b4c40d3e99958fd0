import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ctx } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import { invalid, notFound } from '../../domain/errors.ts';
import { isUuid, newId } from '../../domain/ids.ts';
import { payoutLegs } from '../../domain/ledger.ts';
import { duePeriod, isTimeZone, nextLocalMidnight, parseEvery } from '../../domain/payouts/schedule.ts';
import { schedule as scheduleJob } from '../../store/platform/jobs.ts';
import { NAME_MAX, normalIban, pain001, sepaId, sepaText, type Party } from '../../domain/payouts/sepa.ts';
import * as store from '../../store/payouts/payouts.ts';
import { merchantExists } from '../../store/platform/projects.ts';
import * as statements from '../../store/payouts/statements.ts';
import { payoutStatement, statementCsv } from './statements.ts';

/** The available balance of each project the entries are of (non-zero ones), in project order. */
function byProject(entries: Array<{ project_id: string; amount: number }>) {
  const sums = new Map<string, number>();
  for (const e of entries) sums.set(e.project_id, (sums.get(e.project_id) ?? 0) - Number(e.amount));
  return [...sums].filter(([, v]) => v !== 0).map(([project_id, available]) => ({ project_id, available }));
}

/** The debtor of test payouts when PAYOUT_DEBTOR_* is unset: a made-up account, never meant for a bank (docs/payouts.md). */
export const TEST_DEBTOR: Party = { name: 'Tender test payouts', iban: 'NL91ABNA0417164300', bic: 'ABNANL2A' };

/** A changed IBAN holds the next payout this long, so every owner can see the change first. */
const IBAN_HOLD_MS = 86_400_000;

export interface ScheduleInput {
  merchant: string;
  iban: string;
  name: string;
  every: string;
  /** in cents */
  minimum?: number;
  time_zone?: string;
}

/** `tender payouts schedule` and the portal's settings: a merchant's payout schedule, checked. */
export async function scheduleMerchant(ctx: Ctx, input: ScheduleInput, now = new Date()) {
  if (!isUuid(input.merchant) || !(await merchantExists(ctx.db, input.merchant))) throw notFound('merchant');
  const iban = normalIban(String(input.iban ?? ''));
  if (!iban) throw invalid('iban', 'iban is not a valid IBAN');
  const name = sepaText(String(input.name ?? ''), NAME_MAX);
  if (!name || String(input.name).trim().length > NAME_MAX)
    throw invalid('name', `name must hold 1 to ${NAME_MAX} characters a SEPA transfer can carry`);
  const every = parseEvery(String(input.every ?? ''));
  if (typeof every === 'string') throw invalid('every', every);
  const minimum = input.minimum ?? 0;
  if (!Number.isSafeInteger(minimum) || minimum < 0) throw invalid('minimum', 'minimum must be a whole amount in cents, 0 or more');
  const zone = input.time_zone ?? 'UTC';
  if (!isTimeZone(zone)) throw invalid('time_zone', 'time_zone is not a known IANA time zone');
  return ctx.db.tx(async (q) => {
    const before = await store.lockSchedule(q, input.merchant);
    const changed = before !== undefined && before.iban !== iban;
    const held_until = changed ? new Date(now.getTime() + IBAN_HOLD_MS) : (before?.held_until ?? null);
    const row = await store.saveSchedule(
      q,
      { merchant_id: input.merchant, iban, name, every: String(input.every), minimum, time_zone: zone, held_until },
      now,
    );
    await planNextRun(q, row, now);
    return { ...row, iban_changed: changed };
  });
}

/** The worker's `payouts` job of a merchant: at the start of each local day, it looks at the schedule. */
async function planNextRun(q: Queryable, s: store.ScheduleRow, now: Date) {
  const project = await store.jobProjectOf(q, s.merchant_id);
  if (project)
    await scheduleJob(q, { project_id: project, kind: 'payouts', ref_id: s.merchant_id, run_at: nextLocalMidnight(now, s.time_zone) });
}

/** Job `payouts`: pays one merchant if its schedule is due, writing the files to PAYOUT_DIR, and plans the next look. */
export async function runMerchantPayouts(ctx: Ctx, merchantId: string) {
  const now = new Date();
  const result = await runPayouts(ctx, { merchant: merchantId, now });
  await ctx.db.tx(async (q) => {
    const s = await store.findSchedule(q, merchantId);
    if (s) await planNextRun(q, s, now);
  });
  return result;
}

export interface RunResult {
  files: Array<{ path: string; mode: 'test' | 'live'; msg_id: string; payouts: number; amount: number }>;
  payouts: Array<{ id: string; merchant_id: string; mode: string; currency: string; amount: number; end_to_end_id: string }>;
}

const ISO_DATE = (d: Date) => d.toISOString().slice(0, 10);

/**
 * `tender payouts run` and the worker's `payouts` job: every merchant whose schedule is due takes
 * its available euro balance of each mode into one payout, once per period (the unique period
 * and the schedule's lock: a second run, a second node or a run after a crash pays nothing
 * twice), then every file not yet on disk is written, the same bytes each time.
 */
export async function runPayouts(ctx: Ctx, opts: { out?: string; now?: Date; merchant?: string } = {}): Promise<RunResult> {
  const now = opts.now ?? new Date();
  const made: RunResult['payouts'] = [];
  const files = new Map<'test' | 'live', string>();
  const debtorOf = (mode: 'test' | 'live') => ctx.config.payouts.debtor ?? (mode === 'test' ? TEST_DEBTOR : undefined);
  for (const schedule of await store.listSchedules(ctx.db, opts.merchant)) {
    const every = parseEvery(schedule.every);
    if (typeof every === 'string') continue;
    const period = duePeriod(every, now, schedule.time_zone);
    if (!period || (schedule.held_until && schedule.held_until.getTime() > now.getTime())) continue;
    for (const mode of ['live', 'test'] as const) {
      const debtor = debtorOf(mode);
      if (!debtor) continue; // live payouts wait for the operator's account (PAYOUT_DEBTOR_*)
      const payout = await ctx.db.tx(async (q) => {
        const locked = await store.lockSchedule(q, schedule.merchant_id);
        // read again under the lock: an IBAN changed since the list holds this payout too
        if (!locked || (locked.held_until && locked.held_until.getTime() > now.getTime())) return undefined;
        // SEPA pays euros: other currencies stay on the balance. What no payout took yet is the
        // available balance; the payout takes exactly those entries (its statement: payout_entries)
        const entries = await statements.unpaidEntries(q, schedule.merchant_id, mode, 'EUR');
        const parts = byProject(entries);
        const amount = parts.reduce((s, p) => s + p.available, 0);
        if (amount <= 0 || amount < Number(locked.minimum)) return undefined;
        let fileId = files.get(mode);
        if (!fileId) {
          fileId = newId();
          await store.insertFile(q, {
            id: fileId,
            mode,
            msg_id: sepaId(mode === 'test' ? 'TST' : 'TND', fileId),
            pmt_inf_id: sepaId(mode === 'test' ? 'TSP' : 'TNP', fileId),
            execution: ISO_DATE(now),
            debtor_name: debtor.name,
            debtor_iban: debtor.iban,
            debtor_bic: debtor.bic ?? null,
            created: now,
            written: null,
          });
        }
        const id = newId();
        const row = await store.insertPayout(q, {
          id,
          merchant_id: schedule.merchant_id,
          mode,
          currency: 'EUR',
          amount,
          period,
          state: 'scheduled',
          iban: locked.iban,
          name: locked.name,
          end_to_end_id: sepaId(mode === 'test' ? 'TSE' : 'TNE', id),
          file_id: fileId,
          created: now,
        });
        if (!row) return { fileId };
        // the whole available balance of each project, negative ones too: what the merchant is owed in all
        const legs = parts.flatMap((p) => payoutLegs(Number(p.available), 'payout').map((l) => ({ ...l, project_id: p.project_id })));
        await store.insertPayoutJournal(q, id, 'EUR', now, legs);
        await statements.linkEntries(q, id, [...entries, ...(await statements.ownLegs(q, id))]);
        return { fileId, row };
      });
      if (payout) files.set(mode, payout.fileId);
      if (payout?.row) ctx.log.info({ payout: payout.row.id, mode, amount: Number(payout.row.amount) }, 'payout made');
      if (payout?.row)
        made.push({
          id: payout.row.id,
          merchant_id: payout.row.merchant_id,
          mode,
          currency: 'EUR',
          amount: Number(payout.row.amount),
          end_to_end_id: payout.row.end_to_end_id,
        });
    }
  }
  if (files.size) await ctx.db.tx((q) => store.dropEmptyFiles(q, [...files.values()]));
  return { files: await writeFiles(ctx, opts.out ?? ctx.config.payouts.dir, now), payouts: made };
}

/** The file name: the mode first, so a test file is never taken for a bank's. */
const fileName = (f: store.FileRow) => `${f.mode === 'test' ? 'TEST-simulation' : 'live'}-pain.001-${f.execution}-${f.msg_id}.xml`;

/** Writes every file not yet on disk (written to a temporary name, then renamed), then marks its payouts sent. */
async function writeFiles(ctx: Ctx, dir: string, now: Date): Promise<RunResult['files']> {
  const out: RunResult['files'] = [];
  mkdirSync(dir, { recursive: true });
  for (const f of await store.unwrittenFiles(ctx.db)) {
    const payouts = await store.payoutsOfFile(ctx.db, f.id);
    const xml = pain001({
      msg_id: f.msg_id,
      pmt_inf_id: f.pmt_inf_id,
      created: f.created,
      execution: f.execution,
      debtor: { name: f.debtor_name, iban: f.debtor_iban, ...(f.debtor_bic ? { bic: f.debtor_bic } : {}) },
      transfers: payouts.map((p) => ({
        end_to_end_id: p.end_to_end_id,
        cents: Number(p.amount),
        creditor: { name: p.name, iban: p.iban },
        reference: `${f.mode === 'test' ? 'TEST ' : ''}Tender payout ${p.period} ${p.end_to_end_id}`,
      })),
    });
    const path = join(dir, fileName(f));
    ctx.log.info({ file: f.id, mode: f.mode, transfers: payouts.length }, 'writing payout file');
    // one temporary name per file: a run that stopped mid-write leaves it, the next one writes it anew
    const temp = `${path}.tmp`;
    writeFileSync(temp, xml);
    renameSync(temp, path);
    await ctx.db.tx((q) => store.markWritten(q, f.id, now));
    out.push({ path, mode: f.mode, msg_id: f.msg_id, payouts: payouts.length, amount: payouts.reduce((s, p) => s + Number(p.amount), 0) });
  }
  return out;
}

/** A payout as the API and the CLI show it. */
export const payoutView = (p: store.PayoutRow) => ({
  id: p.id,
  mode: p.mode,
  currency: p.currency,
  amount: Number(p.amount),
  state: p.state,
  period: p.period,
  iban: p.iban,
  name: p.name,
  end_to_end_id: p.end_to_end_id,
  ...(p.return_reason ? { return_reason: p.return_reason } : {}),
  created: new Date(p.created).toISOString(),
  modified: new Date(p.modified).toISOString(),
});

/** GET /v1/payouts/: the payouts of the key's merchant in the project's mode, newest first. */
export async function listPayouts(ctx: Ctx, project: { merchant_id: string; mode: string }, limit = 50) {
  return { payouts: (await store.listPayouts(ctx.db, project.merchant_id, project.mode, limit)).map(payoutView) };
}

/** GET /v1/payouts/{id}/: one payout, with what it took from the key's project, line by line (services/payouts/statements.ts). */
export async function getPayout(ctx: Ctx, project: { id: string; merchant_id: string; mode: string }, id: string) {
  const { payout, lines } = await payoutStatement(
    ctx,
    { merchant_id: project.merchant_id, mode: project.mode, project_id: project.id },
    id,
  );
  return {
    ...payoutView(payout),
    lines: lines.map((l) => ({
      type: l.type,
      amount: l.amount,
      currency: l.currency,
      created: l.created,
      ...(l.order_id ? { order_id: l.order_id } : {}),
      ...(l.reference ? { merchant_order_id: l.reference } : {}),
      ...(l.transaction_id ? { transaction_id: l.transaction_id } : {}),
      ...(l.payout_id ? { payout_id: l.payout_id } : {}),
    })),
  };
}

/** GET /v1/payouts/{id}/lines.csv: the same lines as CSV, times in the project's zone. */
export async function payoutCsv(ctx: Ctx, project: { id: string; merchant_id: string; mode: string }, id: string, zone: string) {
  const { payout, lines } = await payoutStatement(
    ctx,
    { merchant_id: project.merchant_id, mode: project.mode, project_id: project.id },
    id,
  );
  return { name: `payout-${payout.period}-${payout.id}.csv`, csv: statementCsv(lines, zone) };
}
