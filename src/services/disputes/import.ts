import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Ctx } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import { findProject } from '../../store/platform/projects.ts';
import { transactionById } from '../../store/payments/orders.ts';
import * as store from '../../store/disputes/disputes.ts';
import { chargeback, reverseChargeback, type IssuerHook } from '../payments/chargebacks.ts';
import { AFTER, deadlineOf, stateAfter } from '../../domain/disputes.ts';
import { isDispute, MAX_SETTLEMENT_FILE_BYTES, parseSettlementFile, type DisputeLine } from '../../domain/settlement-file.ts';
import { DomainError } from '../../domain/errors.ts';
import { newId, type OrderId } from '../../domain/ids.ts';
import type { ProjectRow, TransactionRow } from '../../domain/entities.ts';

/**
 * `tender disputes import FILE` and the settlement job (docs/payouts.md "Disputes"): the dispute
 * stages of a host's settlement file onto the payments they name. The whole file is checked
 * first (a bad line refuses it, nothing changes); then each line is applied in its own
 * transaction under its payment's lock, once: the stage's primary key is checked under that lock,
 * so a file read twice, or by two nodes at once, changes nothing the second time.
 */

export interface ImportedLine {
  line: number;
  host_dispute_id: string;
  stage: DisputeLine['type'];
  amount: number;
  currency: string;
  dispute_id?: string;
  project_id?: string;
  order_id?: string;
  /** the dispute's state after the line */
  state?: string;
}

export type UnmatchedReason = 'unknown_payment' | 'currency_mismatch' | 'no_earlier_stage' | 'refused';

export interface ImportResult {
  /** the file's dispute lines (its money lines are `tender reconcile`'s) */
  lines: number;
  applied: ImportedLine[];
  /** applied before: a file read again lands here */
  unchanged: ImportedLine[];
  unmatched: Array<ImportedLine & { reason: UnmatchedReason; detail: string }>;
}

/** Reads one settlement file's text; `projectId`: only that project's lines (the settlement job), the rest left for their own. */
export async function importDisputes(ctx: Ctx, text: string, opts: { projectId?: string } = {}): Promise<ImportResult> {
  const lines = parseSettlementFile(text).filter(isDispute);
  const result: ImportResult = { lines: lines.length, applied: [], unchanged: [], unmatched: [] };
  for (const l of lines) await importLine(ctx, l, result, opts.projectId);
  return result;
}

/** The settlement job's part: every settlement-*.csv in the directory, of the last 120 days, for one project. */
export async function importDisputeDir(ctx: Ctx, dir: string, projectId: string, now = new Date()) {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const since = new Date(now.getTime() - 120 * 86_400_000).toISOString().slice(0, 10);
  const files = names.filter((n) => /^settlement-\d{4}-\d{2}-\d{2}\.csv$/.test(n) && n.slice(11, 21) >= since).sort();
  const all: ImportResult = { lines: 0, applied: [], unchanged: [], unmatched: [] };
  for (const f of files) {
    const path = join(dir, f);
    if (statSync(path).size > MAX_SETTLEMENT_FILE_BYTES) continue;
    try {
      const r = await importDisputes(ctx, readFileSync(path, 'utf8'), { projectId });
      all.lines += r.lines;
      all.applied.push(...r.applied);
      all.unchanged.push(...r.unchanged);
      all.unmatched.push(...r.unmatched);
    } catch (err) {
      ctx.log.warn({ file: path, err: (err as Error).message }, 'settlement file refused');
    }
  }
  if (all.applied.length) ctx.log.info({ project: projectId, applied: all.applied.length }, 'dispute stages imported');
  return all;
}

async function importLine(ctx: Ctx, l: DisputeLine, result: ImportResult, only?: string) {
  const view: ImportedLine = { line: l.line, host_dispute_id: l.dispute_id, stage: l.type, amount: l.amount, currency: l.currency };
  const miss = (reason: UnmatchedReason, detail: string) => void result.unmatched.push({ ...view, reason, detail });
  const msg = await store.findSettledMessage(ctx.db, l.terminal, l.rrn);
  if (only && msg?.project_id !== only) return;
  if (!msg) return miss('unknown_payment', `no settled sale or completion has RRN ${l.rrn} on terminal ${l.terminal}`);
  const project = (await findProject(ctx.db, msg.project_id as ProjectRow['id']))!;
  const t = (await transactionById(ctx.db, msg.transaction_id))!;
  const payment = t.of_transaction_id ? (await transactionById(ctx.db, t.of_transaction_id))! : t;
  Object.assign(view, { project_id: project.id, order_id: payment.order_id });
  if (payment.currency !== l.currency) return miss('currency_mismatch', `the line is in ${l.currency}, the payment in ${payment.currency}`);
  const before = AFTER[l.type];
  const seen: { outcome: 'applied' | 'unchanged' | 'missing' } = { outcome: 'applied' };
  const hook: IssuerHook = {
    async skip(q) {
      const d = await store.findByHostId(q, project.id, l.dispute_id);
      if (d) view.dispute_id = d.id;
      const stages = d ? (await store.stagesOf(q, project.id, [d.id])).map((s) => s.stage) : [];
      if (stages.includes(l.type)) seen.outcome = 'unchanged';
      else if (before && !stages.includes(before)) seen.outcome = 'missing';
      if (d && seen.outcome !== 'applied') view.state = d.state;
      return seen.outcome !== 'applied';
    },
    also: (q, made, paid, now) => recordStage(q, project, paid, l, view, made.order.id, now),
  };
  const orderId = payment.order_id as OrderId;
  try {
    if (l.type === 'second_presentment') await reverseChargeback(ctx, project, orderId, l.amount, hook);
    else await chargeback(ctx, project, orderId, l.amount, hook);
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return miss('refused', err.message);
  }
  if (seen.outcome === 'missing') return miss('no_earlier_stage', `dispute ${l.dispute_id} has no ${before} in Tender yet`);
  (seen.outcome === 'unchanged' ? result.unchanged : result.applied).push(view);
}

/** The dispute (made by its chargeback) and its stage, beside the move's journal. */
async function recordStage(
  q: Queryable,
  project: ProjectRow,
  payment: TransactionRow,
  l: DisputeLine,
  view: ImportedLine,
  childOrderId: string,
  now: Date,
) {
  let d = await store.findByHostId(q, project.id, l.dispute_id);
  if (!d) {
    d = {
      id: newId(),
      project_id: project.id,
      order_id: payment.order_id,
      transaction_id: payment.id,
      source: 'acquirer',
      host_dispute_id: l.dispute_id,
      reason_code: l.reason_code,
      currency: l.currency,
      amount: l.amount,
      state: 'open',
      deadline: deadlineOf(now),
      defence: null,
      answered_by: null,
      answered: null,
      created: now,
      modified: now,
    };
    await store.insertDispute(q, d);
  } else await store.setState(q, project.id, d.id, stateAfter(l.type), now);
  await store.insertStage(q, d.id, project.id, {
    stage: l.type,
    amount: l.amount,
    reason_code: l.reason_code,
    file_date: l.date,
    child_order_id: childOrderId,
    created: now,
  });
  Object.assign(view, { dispute_id: d.id, state: stateAfter(l.type) });
}
