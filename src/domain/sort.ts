/**
 * Sorting and search_after keyset paging of order search (docs/search.md): the ORDER BY, the
 * cursor's encoding and the keyset condition.
 */
import { QueryError, parseAmount, parseInstant } from './query-syntax.ts';
import { UUID_PATTERN } from './ids.ts';
// ---------------------------------------------------------------------------------------
// Sorting and keyset paging

export const SORT_FIELDS = ['created', 'modified', 'completed', 'amount', 'merchant_order_id', 'id'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type SortDirection = 'asc' | 'desc';

export interface SortSpec {
  field: SortField;
  /** SQL sort expression; ORDER BY and keysetCondition must both use it */
  column: string;
  direction: SortDirection;
  /** full ORDER BY list, id as tie-breaker: `o.created DESC, o.id DESC` */
  orderBy: string;
  /** SQL expression to SELECT as the hit's sort value for encodeSearchAfter (exact, microseconds included) */
  valueSql: string;
}

type SortType = 'timestamp' | 'amount' | 'text' | 'uuid';
const utcText = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * NULLs (completed of an unfinished order, a missing merchant_order_id) sort as a
 * sentinel below every value: '-infinity' and ''. So they come first ascending and last
 * descending, and the keyset comparison never meets a NULL.
 */
const SORTS: Record<SortField, { column: string; valueSql: string; type: SortType; nullAs?: string }> = {
  created: { column: 'o.created', valueSql: utcText('o.created'), type: 'timestamp' },
  modified: { column: 'o.modified', valueSql: utcText('o.modified'), type: 'timestamp' },
  completed: {
    column: "COALESCE(o.completed, '-infinity'::timestamptz)",
    valueSql: utcText('o.completed'),
    type: 'timestamp',
    nullAs: '-infinity',
  },
  amount: { column: 'o.amount', valueSql: 'o.amount', type: 'amount' },
  merchant_order_id: { column: "COALESCE(o.merchant_order_id, '')", valueSql: 'o.merchant_order_id', type: 'text', nullAs: '' },
  id: { column: 'o.id', valueSql: 'o.id::text', type: 'uuid' },
};

const sortError = (text: string) =>
  new QueryError(
    `Invalid sort "${text}": use one of ${SORT_FIELDS.join(', ')}, optionally followed by asc or desc (default: created desc)`,
    {
      param: 'sort',
    },
  );

/**
 * "created desc", "amount asc", "created:asc", "modified" (a field alone is ascending).
 * Empty or missing: created desc. Throws QueryError (param 'sort').
 */
export function parseSort(sort: string | undefined | null): SortSpec {
  const text = (sort ?? '').trim();
  if (!text) return sortSpec('created', 'desc');
  const m = /^([A-Za-z_.]+)(?:\s*:\s*|\s+)?(asc|desc)?$/i.exec(text);
  if (!m || !(SORT_FIELDS as readonly string[]).includes(m[1])) throw sortError(text);
  if (m[2] === undefined && text !== m[1]) throw sortError(text);
  return sortSpec(m[1] as SortField, (m[2] ?? 'asc').toLowerCase() as SortDirection);
}

function sortSpec(field: SortField, direction: SortDirection): SortSpec {
  const { column, valueSql } = SORTS[field];
  const dir = direction.toUpperCase();
  const orderBy = field === 'id' ? `o.id ${dir}` : `${column} ${dir}, o.id ${dir}`;
  return { field, column, direction, orderBy, valueSql };
}

export interface SearchAfter {
  /** sort value of the last hit (ISO text for timestamps); null for a NULL column */
  value: string | number | null;
  /** id of the last hit: tie-breaker */
  id: string;
  /** `field direction` of the sort that produced it, when encoded with one */
  sort?: string;
}

const searchAfterError = (why: string) =>
  new QueryError(`Invalid search_after (${why}): send -1 for the first page, then the search_after of the previous response`, {
    param: 'search_after',
  });

/**
 * The opaque search_after cursor of a hit: base64url of JSON `[value, id, sort?]`.
 * Pass the value selected with `sort.valueSql` (exact); a Date works too but keeps only
 * milliseconds. With `sort`, a later request with another sort is refused.
 */
export function encodeSearchAfter(
  sortValue: string | number | bigint | Date | null | undefined,
  id: string,
  sort?: Pick<SortSpec, 'field' | 'direction'>,
): string {
  const value =
    sortValue instanceof Date ? sortValue.toISOString() : typeof sortValue === 'bigint' ? Number(sortValue) : (sortValue ?? null);
  const payload: unknown[] = [value, id];
  if (sort) payload.push(`${sort.field} ${sort.direction}`);
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** The cursor's content; null for "-1" (first page). Throws QueryError (param 'search_after'). */
export function decodeSearchAfter(text: string): SearchAfter | null {
  const t = String(text).trim();
  if (t === '-1') return null;
  if (!/^[A-Za-z0-9_-]+$/.test(t)) throw searchAfterError('not a cursor');
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(t, 'base64url').toString('utf8'));
  } catch {
    throw searchAfterError('not a cursor');
  }
  if (!Array.isArray(payload) || payload.length < 2 || payload.length > 3) throw searchAfterError('not a cursor');
  const [value, id, sort] = payload as unknown[];
  if (!(value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))))
    throw searchAfterError('bad value');
  // text PostgreSQL cannot hold (NUL) never reaches it
  if (typeof value === 'string' && (value.length > 1000 || value.includes('\u0000'))) throw searchAfterError('bad value');
  if (typeof id !== 'string' || !UUID_PATTERN.test(id)) throw searchAfterError('bad id');
  if (sort !== undefined && typeof sort !== 'string') throw searchAfterError('bad sort');
  return sort === undefined ? { value, id } : { value, id, sort };
}

/**
 * The keyset condition "after the cursor" for `sort`: `(column, o.id) > ($a, $b)`
 * ascending, `<` descending; bind parameters from `$firstParam`. `TRUE` without a cursor.
 * Accepts the cursor as text (decoded here) or decoded. Throws QueryError.
 */
export function keysetCondition(
  sort: SortSpec,
  cursor: SearchAfter | string | null | undefined,
  firstParam: number,
): { sql: string; params: unknown[] } {
  const c = typeof cursor === 'string' ? decodeSearchAfter(cursor) : cursor;
  if (!c) return { sql: 'TRUE', params: [] };
  const expected = `${sort.field} ${sort.direction}`;
  if (c.sort !== undefined && c.sort !== expected) {
    throw new QueryError(`search_after was made for sort "${c.sort}", not "${expected}": use the same sort in every request`, {
      param: 'search_after',
    });
  }
  const op = sort.direction === 'asc' ? '>' : '<';
  const a = `$${firstParam}`;
  const b = `$${firstParam + 1}`;
  if (sort.field === 'id') return { sql: `o.id ${op} ${a}::uuid`, params: [c.id.toLowerCase()] };
  const def = SORTS[sort.field];
  let value: unknown;
  let cast: string;
  switch (def.type) {
    case 'timestamp': {
      cast = '::timestamptz';
      if (c.value === null && def.nullAs !== undefined) value = def.nullAs;
      else if (typeof c.value === 'string' && parseInstant(c.value)) value = c.value;
      else throw searchAfterError('bad value');
      break;
    }
    case 'amount': {
      cast = '::bigint';
      value = typeof c.value === 'number' ? c.value : typeof c.value === 'string' ? parseAmount(c.value) : null;
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw searchAfterError('bad value');
      break;
    }
    default: {
      cast = '::text';
      if (c.value === null) value = def.nullAs ?? '';
      else if (typeof c.value === 'string') value = c.value;
      else throw searchAfterError('bad value');
    }
  }
  return { sql: `(${def.column}, o.id) ${op} (${a}${cast}, ${b}::uuid)`, params: [value, c.id.toLowerCase()] };
}
