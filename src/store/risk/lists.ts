import type { Queryable } from '../db/db.ts';
import type { VaultCardRow } from '../vault/cards.ts';
import type { ListHitRow, ListKind, ListName, ParsedEntry, PaymentKeys } from '../../domain/risk/lists.ts';

/**
 * The blocklists and allowlists (docs/risk.md "Lists"): a project's (risk_lists) and the
 * platform's (platform_risk_lists). Every change writes its audit row in the same statement.
 */

export interface ListRow {
  id: string;
  list: ListName;
  kind: ListKind;
  value: string;
  created: Date;
  created_by: string | null;
  /** when it stops matching (docs/risk.md "Lists"); null: never */
  expires_at: Date | null;
  note: string | null;
}

/** Who changed a list, as its audit row names them. */
export interface Audit {
  id: string;
  /** a project's change: its merchant's portal_audit row; a platform change: platform_audit's */
  merchant_id?: string;
  user_id: string | null;
  /** the user's email, or the CLI's `cli` */
  actor: string;
  address: string | null;
  action: string;
  detail: Record<string, unknown>;
}

// The payment's keys, kind by kind: the kinds of one value match lo exactly (an index lookup);
// the range kinds (bin, network) read the entries that start at or below the key
const KEYS = `eq(kind, v) AS (
       SELECT * FROM (VALUES ('card', $2::text), ('country', $4::text), ('email', $6::text)) AS x
       UNION ALL SELECT 'email_domain', unnest($7::text[])
     ), rng(kind, v) AS (VALUES ('bin', $3::text COLLATE "C"), ('network', $5::text COLLATE "C"))`;

/**
 * The entries a payment matches, in its project's lists and the platform's: ONE statement, on the
 * (kind, lo) index of each table. An entry expired at `now` matches nothing.
 */
export async function listHits(q: Queryable, projectId: string, k: PaymentKeys, now: Date): Promise<ListHitRow[]> {
  const live = '(l.expires_at IS NULL OR l.expires_at > $8::timestamptz)';
  return q.query<ListHitRow>(
    `WITH ${KEYS}
     SELECT 'project' AS scope, l.list, l.kind FROM eq JOIN risk_lists l ON l.project_id = $1 AND l.kind = eq.kind AND l.lo = eq.v COLLATE "C" AND ${live}
     UNION ALL
     SELECT 'project', l.list, l.kind FROM rng JOIN risk_lists l ON l.project_id = $1 AND l.kind = rng.kind AND l.lo <= rng.v AND l.hi >= rng.v AND ${live}
     UNION ALL
     SELECT 'platform', l.list, l.kind FROM eq JOIN platform_risk_lists l ON l.kind = eq.kind AND l.lo = eq.v COLLATE "C" AND ${live}
     UNION ALL
     SELECT 'platform', l.list, l.kind FROM rng JOIN platform_risk_lists l ON l.kind = rng.kind AND l.lo <= rng.v AND l.hi >= rng.v AND ${live}`,
    [projectId, k.card, k.bin, k.country ?? null, k.network ?? null, k.email ?? null, k.domains, now],
    { prepare: 'risk_list_hits' },
  );
}

const COLUMNS = 'id, list, kind, value, created, created_by, expires_at, note';

/** The entries of a project's lists, or the platform's (projectId null), newest first. */
export async function entriesOf(q: Queryable, projectId: string | null): Promise<ListRow[]> {
  return projectId
    ? q.query<ListRow>(`SELECT ${COLUMNS} FROM risk_lists WHERE project_id = $1 ORDER BY list, kind, created DESC, id`, [projectId])
    : q.query<ListRow>(`SELECT ${COLUMNS} FROM platform_risk_lists ORDER BY list, kind, created DESC, id`);
}

/** The audit row's insert, as a CTE of the change's statement, with its parameters numbered from `at`. */
function audited(projectId: string | null, a: Audit, at: number): { sql: string; params: unknown[] } {
  const p = (i: number) => `$${at + i}`;
  const detail = `${p(3)}::jsonb || jsonb_build_object('value', c.value, 'list', c.list, 'kind', c.kind)
                  || jsonb_strip_nulls(jsonb_build_object('note', c.note, 'expires_at', c.expires_at))`;
  return projectId
    ? {
        sql: `INSERT INTO portal_audit (id, merchant_id, user_id, email, project_id, action, detail, address)
              SELECT ${p(0)}::uuid, ${p(4)}::uuid, ${p(5)}::uuid, ${p(1)}, $1::uuid, ${p(2)}, ${detail}, ${p(6)} FROM changed c`,
        params: [a.id, a.actor, a.action, JSON.stringify(a.detail), a.merchant_id, a.user_id, a.address],
      }
    : {
        sql: `INSERT INTO platform_audit (id, actor, action, detail) SELECT ${p(0)}::uuid, ${p(1)}, ${p(2)}, ${detail} FROM changed c`,
        params: [a.id, a.actor, a.action, JSON.stringify(a.detail)],
      };
}

/**
 * Adds an entry and its audit row in one statement. An entry already on the list is left as it
 * is: `added` false, and nothing is audited; one that has expired is renewed (its expiry, note,
 * adder and time are the new ones), audited as added.
 */
export async function addEntry(
  q: Queryable,
  projectId: string | null,
  e: ParsedEntry & { id: string; list: ListName; created_by: string; expires_at: Date | null; note: string | null; now: Date },
  a: Audit,
): Promise<{ added: boolean; entry: ListRow }> {
  const table = projectId ? 'risk_lists' : 'platform_risk_lists';
  const scope = projectId ? 'project_id = $1 AND ' : '$1::uuid IS NULL AND ';
  const audit = audited(projectId, a, 12);
  const [row] = await q.query<ListRow & { added: boolean }>(
    `WITH changed AS (
       INSERT INTO ${table} AS l (${projectId ? 'project_id, ' : ''}id, list, kind, value, lo, hi, created_by, expires_at, note, created)
       SELECT ${projectId ? '$1::uuid, ' : ''}$2::uuid, $3, $4, $5, $6, $7, $8, $9::timestamptz, $10, $11::timestamptz
        WHERE ${projectId ? 'true' : '$1::uuid IS NULL'}
       ON CONFLICT (${projectId ? 'project_id, ' : ''}kind, lo, hi, list) DO UPDATE
          SET expires_at = EXCLUDED.expires_at, note = EXCLUDED.note, created_by = EXCLUDED.created_by, created = EXCLUDED.created
        WHERE l.expires_at IS NOT NULL AND l.expires_at <= $11::timestamptz
       RETURNING ${COLUMNS}
     ), audited AS (${audit.sql})
     SELECT ${COLUMNS}, true AS added FROM changed
     UNION ALL
     SELECT ${COLUMNS}, false FROM ${table} WHERE ${scope}kind = $4 AND lo = $6 AND hi = $7 AND list = $3 AND NOT EXISTS (SELECT 1 FROM changed)`,
    [projectId, e.id, e.list, e.kind, e.value, e.lo, e.hi, e.created_by, e.expires_at, e.note, e.now, ...audit.params],
  );
  const { added, ...entry } = row!;
  return { added, entry };
}

/** Removes an entry (by id) and writes its audit row, in one statement; undefined when there is none. */
export async function removeEntry(q: Queryable, projectId: string | null, id: string, a: Audit): Promise<ListRow | undefined> {
  const table = projectId ? 'risk_lists' : 'platform_risk_lists';
  const audit = audited(projectId, a, 3);
  const [row] = await q.query<ListRow>(
    `WITH changed AS (
       DELETE FROM ${table} WHERE ${projectId ? 'project_id = $1::uuid AND ' : '$1::uuid IS NULL AND '}id = $2::uuid RETURNING ${COLUMNS}
     ), audited AS (${audit.sql})
     SELECT ${COLUMNS} FROM changed`,
    [projectId, id, ...audit.params],
  );
  return row;
}

export interface PlatformAuditRow {
  id: string;
  actor: string;
  action: string;
  detail: Record<string, unknown>;
  created: Date;
}

/**
 * The stored card of one card transaction of an order (for "Block this card"), with the order's
 * reference; undefined when the transaction is not the order's or has no card.
 */
export async function cardOfTransaction(
  q: Queryable,
  projectId: string,
  orderId: string,
  transactionId: string,
): Promise<(VaultCardRow & { merchant_order_id: string | null }) | undefined> {
  const [row] = await q.query<VaultCardRow & { merchant_order_id: string | null }>(
    `SELECT v.*, o.merchant_order_id FROM vault_cards v
       JOIN transactions t ON t.id = v.transaction_id AND t.project_id = v.project_id
       JOIN orders o ON o.id = t.order_id AND o.project_id = t.project_id
      WHERE v.project_id = $1 AND t.order_id = $2 AND v.transaction_id = $3
      ORDER BY v.created DESC LIMIT 1`,
    [projectId, orderId, transactionId],
  );
  return row;
}
