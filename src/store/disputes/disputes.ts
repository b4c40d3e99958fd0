import type { Queryable } from '../db/db.ts';
import type { DisputeState, Stage } from '../../domain/disputes.ts';

/** Disputes, their stages and evidence (migration 305). */

export interface DisputeRow {
  id: string;
  project_id: string;
  order_id: string;
  transaction_id: string;
  source: 'acquirer' | 'test';
  host_dispute_id: string | null;
  reason_code: string | null;
  currency: string;
  amount: number;
  state: DisputeState;
  deadline: Date;
  defence: string | null;
  answered_by: string | null;
  answered: Date | null;
  created: Date;
  modified: Date;
}

export interface StageRow {
  stage: Stage;
  amount: number;
  reason_code: string | null;
  file_date: string;
  child_order_id: string | null;
  created: Date;
}

export interface EvidenceRow {
  id: string;
  name: string;
  content_type: string;
  size: number;
  created: Date;
}

const COLS = `id, project_id, order_id, transaction_id, source, host_dispute_id, reason_code, currency, amount::float8 AS amount,
  state, deadline, defence, answered_by, answered, created, modified`;

/** The settled sale or completion a dispute line names; its project and transaction. */
export async function findSettledMessage(q: Queryable, terminal: string, rrn: string) {
  const [row] = await q.query<{ project_id: string; transaction_id: string; currency: string }>(
    `SELECT project_id, transaction_id, currency FROM acquirer_link_messages
      WHERE terminal_id = $1 AND rrn = $2 AND kind IN ('sale', 'completion') AND response_code IN ('00', '10')
      ORDER BY created LIMIT 1`,
    [terminal, rrn],
  );
  return row;
}

export async function findByHostId(q: Queryable, projectId: string, hostId: string): Promise<DisputeRow | undefined> {
  const [row] = await q.query<DisputeRow>(`SELECT ${COLS} FROM disputes WHERE project_id = $1 AND host_dispute_id = $2`, [
    projectId,
    hostId,
  ]);
  return row;
}

export async function findDispute(q: Queryable, projectId: string, id: string): Promise<DisputeRow | undefined> {
  const [row] = await q.query<DisputeRow>(`SELECT ${COLS} FROM disputes WHERE project_id = $1 AND id = $2`, [projectId, id]);
  return row;
}

/** A dispute by id alone (the operator's CLI, across projects). */
export async function findDisputeAnywhere(q: Queryable, id: string): Promise<DisputeRow | undefined> {
  const [row] = await q.query<DisputeRow>(`SELECT ${COLS} FROM disputes WHERE id = $1`, [id]);
  return row;
}

/** The newest undecided dispute of an order (a test reversal wins it). */
export async function latestOpenOfOrder(q: Queryable, projectId: string, orderId: string): Promise<DisputeRow | undefined> {
  const [row] = await q.query<DisputeRow>(
    `SELECT ${COLS} FROM disputes WHERE project_id = $1 AND order_id = $2 AND state IN ('open', 'accepted', 'defended')
      ORDER BY created DESC, id DESC LIMIT 1`,
    [projectId, orderId],
  );
  return row;
}

export async function listDisputes(q: Queryable, projectIds: string[], limit = 200): Promise<DisputeRow[]> {
  return q.query<DisputeRow>(`SELECT ${COLS} FROM disputes WHERE project_id = ANY($1) ORDER BY created DESC, id DESC LIMIT $2`, [
    projectIds,
    limit,
  ]);
}

/** Undecided disputes of every project (the operator's list), the nearest deadline first. */
export async function listUndecided(q: Queryable, limit = 500): Promise<DisputeRow[]> {
  return q.query<DisputeRow>(`SELECT ${COLS} FROM disputes WHERE state IN ('open', 'defended') ORDER BY deadline, id LIMIT $1`, [limit]);
}

export async function insertDispute(q: Queryable, d: Omit<DisputeRow, 'defence' | 'answered_by' | 'answered'>) {
  await q.query(
    `INSERT INTO disputes (id, project_id, order_id, transaction_id, source, host_dispute_id, reason_code, currency, amount, state,
       deadline, created, modified)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [
      d.id,
      d.project_id,
      d.order_id,
      d.transaction_id,
      d.source,
      d.host_dispute_id,
      d.reason_code,
      d.currency,
      d.amount,
      d.state,
      d.deadline,
      d.created,
      d.modified,
    ],
  );
}

export async function insertStage(q: Queryable, disputeId: string, projectId: string, s: StageRow) {
  await q.query(
    `INSERT INTO dispute_stages (dispute_id, project_id, stage, amount, reason_code, file_date, child_order_id, created)
     VALUES ($1, $2, $3, $4, $5, $6::date, $7, $8)`,
    [disputeId, projectId, s.stage, s.amount, s.reason_code, s.file_date, s.child_order_id, s.created],
  );
}

export async function stagesOf(q: Queryable, projectId: string, disputeIds: string[]) {
  return q.query<StageRow & { dispute_id: string }>(
    `SELECT dispute_id, stage, amount::float8 AS amount, reason_code, to_char(file_date, 'YYYY-MM-DD') AS file_date, child_order_id, created
       FROM dispute_stages WHERE project_id = $1 AND dispute_id = ANY($2) ORDER BY created, stage`,
    [projectId, disputeIds],
  );
}

export async function setState(q: Queryable, projectId: string, id: string, state: DisputeState, now: Date) {
  await q.query('UPDATE disputes SET state = $3, modified = $4 WHERE project_id = $1 AND id = $2', [projectId, id, state, now]);
}

/** Locks a dispute for the merchant's answer. */
export async function lockDispute(q: Queryable, projectId: string, id: string): Promise<DisputeRow | undefined> {
  const [row] = await q.query<DisputeRow>(`SELECT ${COLS} FROM disputes WHERE project_id = $1 AND id = $2 FOR UPDATE`, [projectId, id]);
  return row;
}

export async function saveAnswer(
  q: Queryable,
  projectId: string,
  id: string,
  a: { state: DisputeState; defence: string | null; by: string; now: Date },
) {
  await q.query(
    'UPDATE disputes SET state = $3, defence = $4, answered_by = $5, answered = $6, modified = $6 WHERE project_id = $1 AND id = $2',
    [projectId, id, a.state, a.defence, a.by, a.now],
  );
}

export async function insertEvidence(
  q: Queryable,
  e: { id: string; dispute_id: string; project_id: string; name: string; content_type: string; content: Uint8Array; created: Date },
) {
  await q.query(
    `INSERT INTO dispute_evidence (id, dispute_id, project_id, name, content_type, size, content, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [e.id, e.dispute_id, e.project_id, e.name, e.content_type, e.content.length, e.content, e.created],
  );
}

export async function evidenceOf(q: Queryable, projectId: string, disputeId: string): Promise<EvidenceRow[]> {
  return q.query<EvidenceRow>(
    `SELECT id, name, content_type, size, created FROM dispute_evidence WHERE project_id = $1 AND dispute_id = $2 ORDER BY name`,
    [projectId, disputeId],
  );
}

export async function evidenceContent(q: Queryable, projectId: string, disputeId: string) {
  return q.query<{ name: string; content: Uint8Array }>(
    'SELECT name, content FROM dispute_evidence WHERE project_id = $1 AND dispute_id = $2 ORDER BY name',
    [projectId, disputeId],
  );
}
