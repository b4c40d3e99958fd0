import type { Queryable } from '../db/db.ts';
import type { Leg } from '../../domain/ledger.ts';
import { newId } from '../../domain/ids.ts';
import type { PayoutState } from '../../domain/payouts/states.ts';

export interface ScheduleRow {
  merchant_id: string;
  iban: string;
  name: string;
  every: string;
  minimum: number;
  time_zone: string;
  held_until: Date | null;
  created: Date;
  modified: Date;
}

export interface PayoutRow {
  id: string;
  merchant_id: string;
  mode: 'test' | 'live';
  currency: string;
  amount: number;
  period: string;
  state: PayoutState;
  iban: string;
  name: string;
  end_to_end_id: string;
  file_id: string;
  return_reason: string | null;
  created: Date;
  modified: Date;
}

export interface FileRow {
  id: string;
  mode: 'test' | 'live';
  msg_id: string;
  pmt_inf_id: string;
  execution: string;
  debtor_name: string;
  debtor_iban: string;
  debtor_bic: string | null;
  created: Date;
  written: Date | null;
}

export async function findSchedule(q: Queryable, merchantId: string): Promise<ScheduleRow | undefined> {
  return (await q.query<ScheduleRow>('SELECT * FROM payout_schedules WHERE merchant_id = $1', [merchantId]))[0];
}

/** Writes a merchant's schedule; `held_until` as given (the service decides a changed IBAN's hold). */
export async function saveSchedule(q: Queryable, s: Omit<ScheduleRow, 'created' | 'modified'>, now: Date): Promise<ScheduleRow> {
  const [row] = await q.query<ScheduleRow>(
    `INSERT INTO payout_schedules (merchant_id, iban, name, every, minimum, time_zone, held_until, created, modified)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (merchant_id) DO UPDATE SET iban = EXCLUDED.iban, name = EXCLUDED.name, every = EXCLUDED.every,
       minimum = EXCLUDED.minimum, time_zone = EXCLUDED.time_zone, held_until = EXCLUDED.held_until, modified = EXCLUDED.modified
     RETURNING *`,
    [s.merchant_id, s.iban, s.name, s.every, s.minimum, s.time_zone, s.held_until, now],
  );
  return row!;
}

/** Every schedule, or one merchant's. */
export async function listSchedules(q: Queryable, merchantId?: string): Promise<ScheduleRow[]> {
  return q.query<ScheduleRow>('SELECT * FROM payout_schedules WHERE ($1::uuid IS NULL OR merchant_id = $1::uuid) ORDER BY merchant_id', [
    merchantId ?? null,
  ]);
}

/** The project a merchant's `payouts` job belongs to (a job has one): its first live project, else its first. */
export async function jobProjectOf(q: Queryable, merchantId: string): Promise<string | undefined> {
  const rows = await q.query<{ id: string }>(
    "SELECT id FROM projects WHERE merchant_id = $1 ORDER BY (mode = 'live') DESC, created, id LIMIT 1",
    [merchantId],
  );
  return rows[0]?.id;
}

/** Locks a merchant's schedule: the payouts of one merchant are made one run at a time. */
export async function lockSchedule(q: Queryable, merchantId: string): Promise<ScheduleRow | undefined> {
  return (await q.query<ScheduleRow>('SELECT * FROM payout_schedules WHERE merchant_id = $1 FOR UPDATE', [merchantId]))[0];
}

/** The available balance of each of a merchant's projects of one mode in one currency (non-zero ones). */
export async function availableByProject(q: Queryable, merchantId: string, mode: string, currency: string) {
  return q.query<{ project_id: string; available: number }>(
    `SELECT e.project_id, (-SUM(e.amount))::bigint AS available
     FROM projects p JOIN ledger_entries e ON e.project_id = p.id
     WHERE p.merchant_id = $1 AND p.mode = $2 AND e.account = 'merchant_available' AND e.currency = $3
     GROUP BY e.project_id HAVING SUM(e.amount) <> 0 ORDER BY e.project_id`,
    [merchantId, mode, currency],
  );
}

export async function insertFile(q: Queryable, f: FileRow): Promise<void> {
  await q.query(
    `INSERT INTO payout_files (id, mode, msg_id, pmt_inf_id, execution, debtor_name, debtor_iban, debtor_bic, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [f.id, f.mode, f.msg_id, f.pmt_inf_id, f.execution, f.debtor_name, f.debtor_iban, f.debtor_bic, f.created],
  );
}

/** A payout, unless the merchant already has one for the period (then undefined: nothing is paid twice). */
export async function insertPayout(q: Queryable, p: Omit<PayoutRow, 'modified' | 'return_reason'>): Promise<PayoutRow | undefined> {
  const [row] = await q.query<PayoutRow>(
    `INSERT INTO payouts (id, merchant_id, mode, currency, amount, period, state, iban, name, end_to_end_id, file_id, created, modified)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
     ON CONFLICT (merchant_id, mode, currency, period) DO NOTHING RETURNING *`,
    [p.id, p.merchant_id, p.mode, p.currency, p.amount, p.period, p.state, p.iban, p.name, p.end_to_end_id, p.file_id, p.created],
  );
  return row;
}

/** A payout's journal: its legs per project, each naming the payout. */
export async function insertPayoutJournal(
  q: Queryable,
  payoutId: string,
  currency: string,
  created: Date,
  legs: Array<Leg & { project_id: string }>,
): Promise<void> {
  const journalId = newId();
  const params: unknown[] = [journalId, payoutId, currency, created];
  const rows = legs.map((l) => {
    params.push(l.project_id, l.account, l.amount, l.kind);
    const n = params.length;
    return `($${n - 3}::uuid, $1::uuid, $2::uuid, $${n - 2}, $3, $${n - 1}, $${n}, $4)`;
  });
  await q.query(
    `INSERT INTO ledger_entries (project_id, journal_id, payout_id, account, currency, amount, kind, created) VALUES ${rows.join(', ')}`,
    params,
  );
}

/** Files of a run that ended up holding nothing (the merchants' payouts were made by another run). */
export async function dropEmptyFiles(q: Queryable, ids: string[]): Promise<void> {
  await q.query('DELETE FROM payout_files f WHERE f.id = ANY($1::uuid[]) AND NOT EXISTS (SELECT 1 FROM payouts p WHERE p.file_id = f.id)', [
    ids,
  ]);
}

/** Files not yet on disk (of this run, or left by one that stopped), oldest first. */
export async function unwrittenFiles(q: Queryable): Promise<FileRow[]> {
  return q.query<FileRow>(
    `SELECT id, mode, msg_id, pmt_inf_id, to_char(execution, 'YYYY-MM-DD') AS execution, debtor_name, debtor_iban, debtor_bic, created, written
     FROM payout_files f WHERE written IS NULL AND EXISTS (SELECT 1 FROM payouts p WHERE p.file_id = f.id) ORDER BY created, id`,
  );
}

export async function payoutsOfFile(q: Queryable, fileId: string): Promise<PayoutRow[]> {
  return q.query<PayoutRow>('SELECT * FROM payouts WHERE file_id = $1 ORDER BY id', [fileId]);
}

/** The file is on disk: its payouts are sent. */
export async function markWritten(q: Queryable, fileId: string, now: Date): Promise<void> {
  await q.query('UPDATE payout_files SET written = $2 WHERE id = $1 AND written IS NULL', [fileId, now]);
  await q.query("UPDATE payouts SET state = 'sent', modified = $2 WHERE file_id = $1 AND state = 'scheduled'", [fileId, now]);
}

/** A merchant's payouts of one mode, newest first. */
export async function listPayouts(q: Queryable, merchantId: string, mode: string, limit: number): Promise<PayoutRow[]> {
  return q.query<PayoutRow>('SELECT * FROM payouts WHERE merchant_id = $1 AND mode = $2 ORDER BY created DESC, id LIMIT $3', [
    merchantId,
    mode,
    limit,
  ]);
}

export async function findPayout(q: Queryable, merchantId: string, mode: string, id: string): Promise<PayoutRow | undefined> {
  return (await q.query<PayoutRow>('SELECT * FROM payouts WHERE id = $1 AND merchant_id = $2 AND mode = $3', [id, merchantId, mode]))[0];
}

/** A payout with the file that carried it: what a bank file's line is matched against. */
export interface SentPayoutRow extends PayoutRow {
  msg_id: string;
  pmt_inf_id: string;
  debtor_iban: string;
}

const SENT_PAYOUT = `SELECT p.*, f.msg_id, f.pmt_inf_id, f.debtor_iban FROM payouts p JOIN payout_files f ON f.id = p.file_id`;

/** The payout of an EndToEndId, locked: a bank file's lines of one payout are applied one at a time. */
export async function lockPayoutByEndToEndId(q: Queryable, endToEndId: string): Promise<SentPayoutRow | undefined> {
  return (await q.query<SentPayoutRow>(`${SENT_PAYOUT} WHERE p.end_to_end_id = $1 FOR UPDATE OF p`, [endToEndId]))[0];
}

/** The payouts of one file (by its MsgId), locked, in the file's order. */
export async function lockPayoutsOfMessage(q: Queryable, msgId: string): Promise<SentPayoutRow[]> {
  return q.query<SentPayoutRow>(`${SENT_PAYOUT} WHERE f.msg_id = $1 ORDER BY p.id FOR UPDATE OF p`, [msgId]);
}

/** A payout's new state (the service checked the move: domain/payouts/states.ts), with the bank's reason when it came back. */
export async function setPayoutState(q: Queryable, id: string, state: PayoutState, reason: string | null, now: Date): Promise<void> {
  await q.query('UPDATE payouts SET state = $2, return_reason = COALESCE($3, return_reason), modified = $4 WHERE id = $1', [
    id,
    state,
    reason,
    now,
  ]);
}

/** What a payout took from each project's available balance (its `payout` legs), to give back. */
export async function payoutTakenByProject(q: Queryable, payoutId: string) {
  return q.query<{ project_id: string; amount: number }>(
    `SELECT project_id, SUM(amount)::bigint AS amount FROM ledger_entries
     WHERE payout_id = $1 AND account = 'merchant_available' AND kind = 'payout'
     GROUP BY project_id ORDER BY project_id`,
    [payoutId],
  );
}
