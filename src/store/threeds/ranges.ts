import type { Queryable, Db } from '../db/db.ts';
import type { CardRange } from '../../domain/card-ranges.ts';

/**
 * The card ranges of directory servers (migration 325, docs/three-d-secure.md "Card ranges"):
 * one row per DS with the serialNum of its last PRes and the lease of the node refreshing it,
 * and its ranges.
 */

export interface DirectoryServerState {
  url: string;
  serial_num: string | null;
  version: string;
  refreshed_at: Date | null;
  next_at: Date;
  /** the refresh is due now (next_at passed, on the database's clock) */
  due: boolean;
}

/** The state of each of `urls` that has a row (none yet: never asked). */
export async function directoryStates(q: Queryable, urls: string[]): Promise<DirectoryServerState[]> {
  return q.query<DirectoryServerState>(
    `SELECT url, serial_num, version::text AS version, refreshed_at, next_at, next_at <= now() AS due
       FROM threeds_directory_servers WHERE url = ANY($1::text[])`,
    [urls],
  );
}

/**
 * Takes the refresh of `url` for `leaseMs` when it is due and no other node holds it: the row is
 * made on first use. Returns the serialNum to send (null: ask for every range), or undefined
 * when the refresh is not this node's to make now.
 */
export async function claimRefresh(q: Queryable, url: string, leaseMs: number): Promise<{ serial_num: string | null } | undefined> {
  await q.query('INSERT INTO threeds_directory_servers (url) VALUES ($1) ON CONFLICT (url) DO NOTHING', [url]);
  const [row] = await q.query<{ serial_num: string | null }>(
    `UPDATE threeds_directory_servers SET lease_until = now() + ($2 * interval '1 millisecond')
      WHERE url = $1 AND next_at <= now() AND (lease_until IS NULL OR lease_until < now())
      RETURNING serial_num`,
    [url, leaseMs],
  );
  return row;
}

/** The daily refresh job of a project (kind `kind`, ref_id the project), made at `runAt` unless it exists (then left as it is). */
export async function ensureRefreshJob(q: Queryable, kind: string, projectId: string, runAt: Date): Promise<void> {
  await q.query(
    `INSERT INTO jobs (project_id, kind, ref_id, run_at) VALUES ($1::uuid, $2::text, $1::text, $3::timestamptz)
     ON CONFLICT (kind, ref_id, project_id) DO NOTHING`,
    [projectId, kind, runAt],
  );
}

/** The earliest next refresh of `urls` (undefined: none has a row). */
export async function nextRefresh(q: Queryable, urls: string[]): Promise<Date | undefined> {
  const [r] = await q.query<{ at: Date | null }>('SELECT min(next_at) AS at FROM threeds_directory_servers WHERE url = ANY($1::text[])', [
    urls,
  ]);
  return r?.at ? new Date(r.at) : undefined;
}

/**
 * A good PRes kept: `full` replaces every range of the DS, else the changes apply (A and M
 * written, D removed); the serialNum, the next refresh (`nextMs` from now) and the version move,
 * the lease is given back. One transaction.
 */
export async function keepPres(
  db: Db,
  url: string,
  pres: { serialNum: string; full: boolean; ranges: Array<CardRange & { action: 'A' | 'M' | 'D' }> },
  nextMs: number,
): Promise<void> {
  const put = pres.ranges.filter((r) => r.action !== 'D');
  const gone = pres.ranges.filter((r) => r.action === 'D');
  const changed = pres.full || pres.ranges.length > 0;
  await db.tx(async (q) => {
    if (pres.full) await q.query('DELETE FROM threeds_card_ranges WHERE ds_url = $1', [url]);
    if (gone.length)
      await q.query(
        `DELETE FROM threeds_card_ranges r USING unnest($2::text[], $3::text[]) AS d(s, e)
          WHERE r.ds_url = $1 AND r.start_range = d.s AND r.end_range = d.e`,
        [url, gone.map((r) => r.start_range), gone.map((r) => r.end_range)],
      );
    if (put.length)
      await q.query(
        `INSERT INTO threeds_card_ranges (ds_url, start_range, end_range, acs_start_version, acs_end_version, ds_start_version, ds_end_version, method_url)
         SELECT $1::text, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
         ON CONFLICT (ds_url, start_range, end_range) DO UPDATE SET acs_start_version = EXCLUDED.acs_start_version,
           acs_end_version = EXCLUDED.acs_end_version, ds_start_version = EXCLUDED.ds_start_version,
           ds_end_version = EXCLUDED.ds_end_version, method_url = EXCLUDED.method_url`,
        [
          url,
          put.map((r) => r.start_range),
          put.map((r) => r.end_range),
          put.map((r) => r.acs_start_version),
          put.map((r) => r.acs_end_version),
          put.map((r) => r.ds_start_version),
          put.map((r) => r.ds_end_version),
          put.map((r) => r.method_url),
        ],
      );
    await q.query(
      `UPDATE threeds_directory_servers SET serial_num = $2, refreshed_at = now(), next_at = now() + ($3 * interval '1 millisecond'),
         lease_until = NULL, last_error = NULL, version = version + $4
       WHERE url = $1`,
      [url, pres.serialNum, nextMs, changed ? 1 : 0],
      { commit: true },
    );
  });
}

/** A PReq that got no good PRes: the ranges kept stay, the next try in `nextMs`, the lease given back. */
export async function refreshFailed(q: Queryable, url: string, error: string, nextMs: number): Promise<void> {
  await q.query(
    `UPDATE threeds_directory_servers SET next_at = now() + ($2 * interval '1 millisecond'), lease_until = NULL, last_error = $3 WHERE url = $1`,
    [url, nextMs, error.slice(0, 500)],
  );
}

/** Every range kept of the DS at `url`. */
export async function rangesOf(q: Queryable, url: string): Promise<CardRange[]> {
  return q.query<CardRange>(
    `SELECT start_range, end_range, acs_start_version, acs_end_version, ds_start_version, ds_end_version, method_url
       FROM threeds_card_ranges WHERE ds_url = $1 ORDER BY start_range`,
    [url],
  );
}
