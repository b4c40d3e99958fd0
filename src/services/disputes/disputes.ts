import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ctx } from '../platform/context.ts';
import { nowFor } from '../platform/context.ts';
import * as store from '../../store/disputes/disputes.ts';
import { chargeback, reverseChargeback, type IssuerHook } from '../payments/chargebacks.ts';
import { checkAnswer, checkEvidence, deadlineOf, type EvidenceFile } from '../../domain/disputes.ts';
import { DomainError, notFound } from '../../domain/errors.ts';
import { isUuid, newId, type OrderId } from '../../domain/ids.ts';
import type { ProjectRow } from '../../domain/entities.ts';

/** Disputes as records (docs/payouts.md "Disputes"): the API's and portal's views, the merchant's answer, the operator's evidence. */

export interface DisputeView {
  id: string;
  order_id: string;
  source: 'acquirer' | 'test';
  host_dispute_id?: string;
  reason_code?: string;
  currency: string;
  amount: number;
  state: string;
  deadline: string;
  defence?: string;
  answered?: string;
  stages: Array<{ stage: string; amount: number; reason_code?: string; date: string; order_id?: string }>;
  evidence: Array<{ name: string; content_type: string; size: number }>;
  created: string;
  modified: string;
}

const iso = (d: Date | string) => new Date(d).toISOString();

async function viewsOf(ctx: Pick<Ctx, 'db'>, projectId: string, rows: store.DisputeRow[], withEvidence = false): Promise<DisputeView[]> {
  const stages = rows.length
    ? await store.stagesOf(
        ctx.db,
        projectId,
        rows.map((r) => r.id),
      )
    : [];
  const out: DisputeView[] = [];
  for (const r of rows)
    out.push({
      id: r.id,
      order_id: r.order_id,
      source: r.source,
      ...(r.host_dispute_id ? { host_dispute_id: r.host_dispute_id } : {}),
      ...(r.reason_code ? { reason_code: r.reason_code } : {}),
      currency: r.currency,
      amount: Number(r.amount),
      state: r.state,
      deadline: iso(r.deadline),
      ...(r.defence ? { defence: r.defence } : {}),
      ...(r.answered ? { answered: iso(r.answered) } : {}),
      stages: stages
        .filter((s) => s.dispute_id === r.id)
        .map((s) => ({
          stage: s.stage,
          amount: Number(s.amount),
          ...(s.reason_code ? { reason_code: s.reason_code } : {}),
          date: s.file_date,
          ...(s.child_order_id ? { order_id: s.child_order_id } : {}),
        })),
      evidence: withEvidence
        ? (await store.evidenceOf(ctx.db, projectId, r.id)).map((e) => ({ name: e.name, content_type: e.content_type, size: e.size }))
        : [],
      created: iso(r.created),
      modified: iso(r.modified),
    });
  return out;
}

/** GET /v1/disputes/: the project's disputes, newest first. */
export async function listDisputes(ctx: Pick<Ctx, 'db'>, project: ProjectRow) {
  return { disputes: await viewsOf(ctx, project.id, await store.listDisputes(ctx.db, [project.id])) };
}

/** GET /v1/disputes/{id}/: one, with its stages and the evidence's names. */
export async function getDispute(ctx: Pick<Ctx, 'db'>, project: ProjectRow, id: string) {
  const row = isUuid(id) ? await store.findDispute(ctx.db, project.id, id) : undefined;
  if (!row) throw notFound('dispute');
  return (await viewsOf(ctx, project.id, [row], true))[0];
}

/** The merchant accepts (the money stays with the cardholder) or defends (a text and files for the operator to send on). */
export async function answerDispute(
  ctx: Ctx,
  project: ProjectRow,
  id: string,
  a: { accept: true; by: string } | { accept: false; by: string; text: string; files: EvidenceFile[] },
) {
  const names = a.accept ? [] : checkEvidence(a.text, a.files);
  if (!isUuid(id)) throw notFound('dispute');
  await ctx.db.tx(async (q) => {
    const d = await store.lockDispute(q, project.id, id);
    if (!d) throw notFound('dispute');
    const now = nowFor(project);
    checkAnswer(d.state, new Date(d.deadline), now);
    await store.saveAnswer(q, project.id, id, {
      state: a.accept ? 'accepted' : 'defended',
      defence: a.accept ? null : a.text,
      by: a.by,
      now,
    });
    if (!a.accept)
      for (const [i, f] of a.files.entries())
        await store.insertEvidence(q, {
          id: newId(),
          dispute_id: id,
          project_id: project.id,
          name: names[i],
          content_type: f.type,
          content: f.bytes,
          created: now,
        });
  });
  ctx.log.info({ project: project.id, dispute: id, answer: a.accept ? 'accepted' : 'defended' }, 'dispute answered');
  return getDispute(ctx, project, id);
}

/** `tender disputes list`: undecided disputes of every project, the nearest deadline first. */
export async function operatorList(ctx: Pick<Ctx, 'db'>) {
  return (await store.listUndecided(ctx.db)).map((r) => ({
    id: r.id,
    project_id: r.project_id,
    order_id: r.order_id,
    source: r.source,
    host_dispute_id: r.host_dispute_id,
    reason_code: r.reason_code,
    currency: r.currency,
    amount: Number(r.amount),
    state: r.state,
    deadline: iso(r.deadline),
  }));
}

/** `tender disputes evidence ID --out DIR`: the defence's text (defence.txt) and files into DIR/ID/. */
export async function exportEvidence(ctx: Pick<Ctx, 'db'>, id: string, out: string) {
  const d = isUuid(id) ? await store.findDisputeAnywhere(ctx.db, id) : undefined;
  if (!d) throw notFound('dispute');
  if (!d.defence) throw new DomainError('ValidationError', `dispute ${id} is ${d.state}: the merchant sent no defence`);
  const dir = join(out, d.id);
  mkdirSync(dir, { recursive: true });
  const lines = [
    `dispute ${d.id}${d.host_dispute_id ? ` (acquirer ${d.host_dispute_id})` : ''}, order ${d.order_id}`,
    `reason ${d.reason_code ?? '-'}, ${d.currency} ${d.amount} minor units, answered ${d.answered ? iso(d.answered) : '-'}`,
    '',
    d.defence,
  ];
  writeFileSync(join(dir, 'defence.txt'), lines.join('\n') + '\n');
  const files = ['defence.txt'];
  for (const f of await store.evidenceContent(ctx.db, d.project_id, d.id)) {
    writeFileSync(join(dir, f.name), Buffer.from(f.content));
    files.push(f.name);
  }
  return { dispute_id: d.id, dir, files };
}

/** POST /v1/test/orders/{id}/chargeback/: the test chargeback, with its dispute record (the portal's flow as live). */
export function testChargeback(ctx: Ctx, project: ProjectRow, orderId: OrderId, amount?: number) {
  const hook: IssuerHook = {
    async also(q, made, payment, now) {
      const id = newId();
      await store.insertDispute(q, {
        id,
        project_id: project.id,
        order_id: payment.order_id,
        transaction_id: payment.id,
        source: 'test',
        host_dispute_id: null,
        reason_code: 'test',
        currency: payment.currency,
        amount: made.txn.amount,
        state: 'open',
        deadline: deadlineOf(now),
        created: now,
        modified: now,
      });
      await store.insertStage(q, id, project.id, stage('chargeback', made, now));
    },
  };
  return chargeback(ctx, project, orderId, amount, hook).then((v) => v!);
}

/** POST /v1/test/orders/{id}/reversal/: the test reversal wins the order's newest undecided dispute (as a second presentment). */
export function testReversal(ctx: Ctx, project: ProjectRow, orderId: OrderId, amount?: number) {
  const hook: IssuerHook = {
    async also(q, made, payment, now) {
      const d = await store.latestOpenOfOrder(q, project.id, payment.order_id);
      if (!d) return;
      await store.setState(q, project.id, d.id, 'won', now);
      await store.insertStage(q, d.id, project.id, stage('second_presentment', made, now));
    },
  };
  return reverseChargeback(ctx, project, orderId, amount, hook).then((v) => v!);
}

const stage = (s: 'chargeback' | 'second_presentment', made: { order: { id: string }; txn: { amount: number } }, now: Date) => ({
  stage: s,
  amount: made.txn.amount,
  reason_code: null,
  file_date: now.toISOString().slice(0, 10),
  child_order_id: made.order.id,
  created: now,
});
