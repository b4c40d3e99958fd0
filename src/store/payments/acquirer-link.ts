import type { Queryable } from '../db/db.ts';
import { PROJECTS_CHANNEL } from '../platform/projects.ts';
import type { JournalEntry } from '../../domain/link-journal.ts';

/**
 * The ISO 8583 link's rows (migration 210): STANs per terminal and day, the journal of
 * financial messages, and the acquirer binding kept in a project's settings. The journal's
 * statements run around every live payment's message: prepared once per connection.
 */

/** A row of the journal of financial messages. */
export type LinkMessageRow = JournalEntry;

/**
 * Reserves `count` STANs of a terminal on a day in one atomic upsert and returns the last: every
 * node sharing the terminal draws disjoint blocks from the same row. Past 999999 it fails.
 */
export async function reserveStans(q: Queryable, terminal: string, day: string, count = 1): Promise<number> {
  const [row] = await q.query<{ last: number }>(
    `INSERT INTO acquirer_link_stans (terminal_id, day, last) VALUES ($1, $2::date, $3)
     ON CONFLICT (terminal_id, day) DO UPDATE SET last = acquirer_link_stans.last + $3
     RETURNING last`,
    [terminal, day, count],
    { prepare: true },
  );
  return Number(row.last);
}

const COLUMNS = `operation_id, project_id, transaction_id, acquirer, terminal_id, to_char(day, 'YYYY-MM-DD') AS day, stan, rrn, mti,
  transmission, kind, amount::float8 AS amount, currency, original_rrn, original_kind, original_data, response_code, authorization_code`;

export async function findLinkMessage(q: Queryable, projectId: string, operationId: string): Promise<LinkMessageRow | undefined> {
  const [row] = await q.query<LinkMessageRow>(
    `SELECT ${COLUMNS} FROM acquirer_link_messages WHERE operation_id = $1 AND project_id = $2`,
    [operationId, projectId],
    { prepare: true },
  );
  return row;
}

/** Writes a message's row; when the operation has one already, that row is kept and returned (a second round trip). */
export async function insertLinkMessage(q: Queryable, e: LinkMessageRow, now: Date): Promise<LinkMessageRow> {
  const [row] = await q.query<LinkMessageRow>(
    `INSERT INTO acquirer_link_messages (operation_id, project_id, transaction_id, acquirer, terminal_id, day, stan, rrn, mti,
       transmission, kind, amount, currency, original_rrn, original_kind, original_data, response_code, authorization_code, created)
     VALUES ($1, $2, $3, $4, $5, $6::date, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (operation_id, project_id) DO NOTHING
     RETURNING ${COLUMNS}`,
    [
      e.operation_id,
      e.project_id,
      e.transaction_id,
      e.acquirer,
      e.terminal_id,
      e.day,
      e.stan,
      e.rrn,
      e.mti,
      e.transmission,
      e.kind,
      e.amount,
      e.currency,
      e.original_rrn,
      e.original_kind,
      e.original_data,
      e.response_code,
      e.authorization_code,
      now,
    ],
    { prepare: true },
  );
  return row ?? (await findLinkMessage(q, e.project_id, e.operation_id))!;
}

export async function answerLinkMessage(
  q: Queryable,
  projectId: string,
  operationId: string,
  code: string,
  authCode: string | null,
  now: Date,
) {
  await q.query(
    `UPDATE acquirer_link_messages SET response_code = $3, authorization_code = $4, answered = $5
     WHERE operation_id = $1 AND project_id = $2 AND answered IS NULL`,
    [operationId, projectId, code, authCode, now],
    { prepare: true },
  );
}

/** Tender's side of a reconciliation: every message of the given days (YYYY-MM-DD). */
export async function linkMessagesOfDays(q: Queryable, days: string[]): Promise<LinkMessageRow[]> {
  return q.query<LinkMessageRow>(`SELECT ${COLUMNS} FROM acquirer_link_messages WHERE day = ANY($1::date[]) ORDER BY created, stan`, [
    days,
  ]);
}

/** Sets (or, with null, removes) a project's acquirer binding; every node's key cache hears of it. */
export async function setProjectAcquirer(
  q: Queryable,
  projectId: string,
  binding: Record<string, unknown> | null,
  merchantCountry?: string,
): Promise<boolean> {
  const rows = await q.query(
    binding && merchantCountry
      ? `UPDATE projects SET settings = jsonb_set(jsonb_set(settings, '{acquirer}', $2::jsonb), '{merchant_country}', to_jsonb($3::text))
         WHERE id = $1 RETURNING id`
      : binding
        ? `UPDATE projects SET settings = jsonb_set(settings, '{acquirer}', $2::jsonb) WHERE id = $1 RETURNING id`
        : `UPDATE projects SET settings = settings - 'acquirer' WHERE id = $1 AND $2::jsonb IS NULL RETURNING id`,
    binding && merchantCountry
      ? [projectId, JSON.stringify(binding), merchantCountry]
      : [projectId, binding ? JSON.stringify(binding) : null],
  );
  if (rows.length) await q.query(`SELECT pg_notify('${PROJECTS_CHANNEL}', $1)`, [projectId]);
  return rows.length > 0;
}
