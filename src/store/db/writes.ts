import type { Queryable } from './db.ts';

/**
 * Every row one change writes, sent as ONE statement: sibling data-modifying CTEs (docs/
 * performance-cards.md). A step reads what it needs in one statement, decides in code, gathers
 * its writes here and sends them once, so it costs two round trips however many rows it writes.
 *
 * - Rows and patches travel as JSON, typed by the table's own columns (jsonb_populate_record),
 *   so a statement's text depends only on its shape (which tables, which columns) and is
 *   prepared once per connection under a name derived from the text.
 * - Patches of one row are merged into one UPDATE: a statement may not change a row twice.
 * - A gate (optional) is an UPDATE on a condition, such as "the transaction is still new";
 *   every other write of the statement happens only when the gate changed its row. That is how
 *   a step that read without a lock still changes a row at most once (run() answers false).
 *   Or it locks rows as a step saw them (lockedAsSeen): the writes happen only while none of them
 *   was written or locked since, so a change planned from rows read in an earlier transaction
 *   needs no second read.
 * - The sibling CTEs all see the snapshot the statement started with, not each other's rows:
 *   only parts written for that (a delivery naming the outbox row of the same statement) refer
 *   to another part, by name.
 */

/**
 * The row type of each table written through a WriteSet or the generic row helpers, so that a
 * patch or a row names only the table's columns with their types. Each table module adds its own
 * tables by declaration merging (`declare module '../db/writes.ts' { interface Tables { ... } }`),
 * so this driver module imports no table module.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging in the table modules
export interface Tables {}
export type TableName = keyof Tables & string;
/** What may be written to a row of `T`: some of its columns, each with its column's type. */
export type RowPatch<T extends TableName> = Partial<Tables[T]>;

export interface Part {
  /** the statement, with its own parameters $1..$n */
  sql: string;
  params: unknown[];
  /** the CTE's name, for parts that others refer to (their SQL names it) */
  name?: string;
}

/** jsonb columns: their values go into the JSON as they are, not as strings. */
const JSON_VALUE = (v: unknown) => (v instanceof Date ? v.toISOString() : v);
const json = (row: Record<string, unknown>) =>
  JSON.stringify(
    Object.fromEntries(
      Object.entries(row)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, JSON_VALUE(v)]),
    ),
  );
const columnsOf = (row: Record<string, unknown>) => Object.keys(row).filter((k) => row[k] !== undefined);

/**
 * A row as a step saw it: `version` is its xmin as read (the transaction that last wrote it then).
 * `by` (in lockedAsSeen) is the transaction that read it with a lock, and may have written it since.
 */
export interface SeenRow {
  table: TableName;
  id: string;
  version: string;
}

export class WriteSet {
  private gate?: { table: string; id: string; patch: Record<string, unknown>; where: string; params: unknown[] };
  private seen?: { rows: SeenRow[]; by: string; also?: Part };
  private readonly updates = new Map<string, { table: string; id: string; key: string; patch: Record<string, unknown> }>();
  private readonly parts: Part[] = [];
  private wake = false;
  private names = 0;
  private readonly effects: Array<() => void> = [];
  /** the CTE name of the outbox row the last planned order status change wrote (its hooks' deliveries name it) */
  outbox?: string;

  /**
   * The write the others depend on: `table`'s row `id` gets `patch` only while its columns hold
   * the values in `expect` (null: IS NULL); else the statement writes nothing.
   */
  guard<T extends TableName>(
    table: T,
    id: string,
    patch: RowPatch<T>,
    expect: Partial<Record<keyof Tables[T], string | number | boolean | null>>,
  ) {
    if (this.gate || this.seen) throw new Error('one gate per statement');
    const params: unknown[] = [];
    const where = Object.entries(expect)
      .map(([col, v]) => (v === null ? `${col} IS NULL` : `${col} = $${params.push(v)}`))
      .join(' AND ');
    this.gate = { table, id, patch: { ...patch }, where: where || 'true', params };
  }

  /**
   * The gate of a change planned from rows read in an earlier database transaction `by`, which
   * locked them (FOR UPDATE) and may have written them: the statement locks them again and writes
   * only while each is as `by` left it. Its xmin is still the one read, or `by` (its own write); its
   * xmax is `by`'s lock or none: anyone who wrote or locked it since leaves another, so any other
   * step of the same payment, which locks the row first, holds the writes back, and so does a lock
   * held now (SKIP LOCKED: no wait). Row versions are exact where a `modified` time is not (two
   * writes in one millisecond, a project's clock). `also`: a condition on other rows the change was
   * planned from (the rows are g0, g1, ... in its SQL, its parameters its own $1..$n), read with this
   * statement's snapshot.
   */
  lockedAsSeen(rows: SeenRow[], by: string, also?: Part) {
    if (this.gate || this.seen) throw new Error('one gate per statement');
    if (!rows.length) throw new Error('a gate on no rows');
    this.seen = { rows, by, also };
  }

  /** Sets columns of one row (by id, or the unique column `key`); patches of one row are merged, the later value wins. */
  update<T extends TableName>(table: T, id: string, patch: RowPatch<T>, key: keyof Tables[T] & string = 'id' as keyof Tables[T] & string) {
    if (this.gate && this.gate.table === table && this.gate.id === id && key === 'id') return void Object.assign(this.gate.patch, patch);
    const name = `${table}/${key}/${id}`;
    const u = this.updates.get(name);
    if (u) Object.assign(u.patch, patch);
    else this.updates.set(name, { table, id, key, patch: { ...patch } });
  }

  /** Inserts a row; `name` with `returning` makes it a CTE others may select from. */
  insert<T extends TableName>(table: T, row: RowPatch<T>, opts: { name?: string; returning?: string; onConflict?: string } = {}) {
    const cols = columnsOf(row as Record<string, unknown>).join(', ');
    this.parts.push({
      // WHERE true: an INSERT ... SELECT ... FROM followed by ON CONFLICT must not read as a join
      sql:
        `INSERT INTO ${table} (${cols}) SELECT ${cols} FROM jsonb_populate_record(NULL::${table}, $1::jsonb) WHERE true` +
        `${opts.onConflict ? ` ${opts.onConflict}` : ''}${opts.returning ? ` RETURNING ${opts.returning}` : ''}`,
      params: [json(row as Record<string, unknown>)],
      name: opts.name,
    });
  }

  /** Inserts rows into one table, in one part. */
  insertMany<T extends TableName>(table: T, rows: RowPatch<T>[]) {
    if (!rows.length) return;
    const cols = columnsOf(rows[0] as Record<string, unknown>).join(', ');
    this.parts.push({
      sql: `INSERT INTO ${table} (${cols}) SELECT ${cols} FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb) WHERE true`,
      params: [`[${rows.map((r) => json(r as Record<string, unknown>)).join(',')}]`],
    });
  }

  /** Any other data-modifying statement (a store function's Part). */
  add(part: Part) {
    this.parts.push(part);
  }

  /** A CTE name not used yet in this statement. */
  name(prefix: string) {
    return `${prefix}_${this.names++}`;
  }

  /** Wakes the job workers (NOTIFY) when the statement commits: a job it wrote is due now. */
  notifyJobs() {
    this.wake = true;
  }

  /** Runs fn in this process once the statement has written (its gate passed): counters, not writes. */
  afterWrite(fn: () => void) {
    this.effects.push(fn);
  }

  get empty() {
    return !this.gate && !this.seen && !this.updates.size && !this.parts.length;
  }

  /** The one statement and its parameters. */
  statement(): { sql: string; params: unknown[] } {
    const params: unknown[] = [];
    const renumber = (sql: string, own: unknown[]) => {
      const base = params.length;
      params.push(...own);
      return sql.replace(/\$(\d+)/g, (_, n: string) => `$${base + Number(n)}`);
    };
    const gated = this.gate || this.seen ? ' AND EXISTS (SELECT 1 FROM gate)' : '';
    const ctes: string[] = [];
    const setOf = (table: string, patch: Record<string, unknown>) => {
      const cols = columnsOf(patch);
      if (!cols.length) return 'id = id'; // a gate that only checks
      return cols.length === 1
        ? `${cols[0]} = (SELECT ${cols[0]} FROM jsonb_populate_record(NULL::${table}, $2::jsonb))`
        : `(${cols.join(', ')}) = (SELECT ${cols.join(', ')} FROM jsonb_populate_record(NULL::${table}, $2::jsonb))`;
    };
    if (this.gate) {
      const g = this.gate;
      const where = g.where.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + 2}`);
      ctes.push(
        `gate AS (${renumber(`UPDATE ${g.table} SET ${setOf(g.table, g.patch)} WHERE id = $1 AND (${where}) RETURNING 1`, [g.id, json(g.patch), ...g.params])})`,
      );
    }
    if (this.seen) {
      const { rows, by, also } = this.seen;
      const own: unknown[] = [by];
      const from = rows.map((r, i) => `${r.table} g${i}`).join(', ');
      let where = rows
        .map(
          (r, i) => `g${i}.id = $${own.push(r.id)} AND g${i}.xmin::text IN ($${own.push(r.version)}, $1) AND g${i}.xmax::text IN ('0', $1)`,
        )
        .join(' AND ');
      if (also) {
        const base = own.length;
        own.push(...also.params);
        where += ` AND (${also.sql.replace(/\$(\d+)/g, (_, n: string) => `$${base + Number(n)}`)})`;
      }
      ctes.push(`gate AS (${renumber(`SELECT 1 FROM ${from} WHERE ${where} FOR UPDATE SKIP LOCKED`, own)})`);
    }
    let n = 0;
    for (const u of this.updates.values()) {
      if (!columnsOf(u.patch).length) continue;
      ctes.push(
        `u${n++} AS (${renumber(`UPDATE ${u.table} SET ${setOf(u.table, u.patch)} WHERE ${u.key} = $1${gated}`, [u.id, json(u.patch)])})`,
      );
    }
    for (const p of this.parts) {
      // a gated part: its rows come FROM a SELECT (inserts) or it has a WHERE (updates, deletes)
      const sql = gated ? addCondition(p.sql, gated) : p.sql;
      ctes.push(`${p.name ?? `w${n++}`} AS (${renumber(sql, p.params)})`);
    }
    const result = this.gate || this.seen ? '(SELECT count(*) FROM gate)::int AS done' : '1 AS done';
    const notify = this.wake ? `, pg_notify('tender_jobs', '')` : '';
    return { sql: `WITH ${ctes.join(', ')} SELECT ${result}${notify}`, params };
  }

  /**
   * Sends the statement (one round trip). False when a gate held it back, so nothing was written.
   * `commit`: it is the last statement of its transaction, whose COMMIT goes with it (QueryOptions.commit).
   */
  async run(q: Queryable, opts: { commit?: boolean } = {}): Promise<boolean> {
    if (this.empty) return this.wrote();
    const { sql, params } = this.statement();
    const [row] = await q.query<{ done: number }>(sql, params, { prepare: true, commit: opts.commit });
    return row.done > 0 && this.wrote();
  }

  private wrote(): true {
    for (const fn of this.effects) fn();
    return true;
  }
}

/**
 * Adds `AND EXISTS (...)` to a part's WHERE (an UPDATE, DELETE or INSERT ... SELECT), or a WHERE
 * to an INSERT ... SELECT without one. Parts in another form (INSERT ... VALUES) are refused loudly.
 */
function addCondition(sql: string, cond: string): string {
  const clause = /\s(ON CONFLICT|RETURNING)\s/i.exec(sql);
  const head = clause ? sql.slice(0, clause.index) : sql;
  const tail = clause ? sql.slice(clause.index) : '';
  if (/\sWHERE\s/i.test(head) && (/^\s*(UPDATE|DELETE)\s/i.test(head) || /^\s*INSERT\s[\s\S]*\sSELECT\s/i.test(head)))
    return `${head}${cond}${tail}`;
  if (/^\s*INSERT\s[\s\S]*\sSELECT\s/i.test(head)) return `${head} WHERE true${cond}${tail}`;
  throw new Error(`cannot gate this statement: ${sql.slice(0, 60)}`);
}
