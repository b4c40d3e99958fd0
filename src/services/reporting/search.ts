import type { Ctx } from '../platform/context.ts';
import type { Queryable } from '../../store/db/db.ts';
import * as orders from '../../store/payments/orders.ts';
import * as store from '../../store/reporting/search.ts';
import type { Filter, SearchRow } from '../../store/reporting/search.ts';
import { DomainError, invalid } from '../../domain/errors.ts';
import {
  compileQuery,
  compileTransactionTerm,
  decodeSearchAfter,
  encodeSearchAfter,
  keysetCondition,
  MAX_RESULT_WINDOW,
  parseSort,
  QueryError,
  type SearchAfter,
  type SortSpec,
} from '../../domain/query.ts';
import { renderOrder } from '../payments/order-view.ts';
import type { OrderView } from '../../domain/schemas/order.ts';
import type { EventRow, OrderRow, ProjectRow } from '../../domain/entities.ts';
import { openHolderNames } from '../vault/holder-names.ts';
import { takeSearchShare } from '../platform/fair-share.ts';
import type { ProjectId } from '../../domain/ids.ts';

/** The body of POST /v1/search/orders/ (after schema validation). */
export interface SearchInput {
  query: string;
  size?: number;
  start?: number;
  sort?: string;
  /** "-1" (or -1) for the first page, then the previous response's search_after */
  search_after?: string | number;
}

const DEFAULT_SIZE = 10;
export const MAX_SIZE = 1000;
/** `total` counts this far and no further (see docs/search.md "Decisions"). */
const TOTAL_CAP = MAX_RESULT_WINDOW;

export interface SearchPlan {
  filter: Filter;
  sort: SortSpec;
  after: SearchAfter | null;
  start: number;
  /** undefined: no limit (a CSV report without size) */
  size: number | undefined;
}

/** A QueryError is the merchant's mistake: a ValidationError naming the request member (query, sort, search_after). */
function toValidationError(err: unknown): unknown {
  if (!(err instanceof QueryError)) return err;
  const api = new DomainError('ValidationError', err.message, err.param);
  if (err.tooCostly) api.byLimit = true;
  return api;
}

const DEEP_PAGING = 'to page further use search_after: send "-1" first, then the search_after of each response';

/**
 * Checks a search request and compiles it: the query, the sort and the paging rules of the spec.
 * For a CSV report (`unlimited`) a missing size means every matching order.
 */
export function planSearch(projectId: ProjectId, input: SearchInput, opts: { unlimited?: boolean; maxCost?: number } = {}): SearchPlan {
  try {
    const { where, params } = compileQuery(input.query, 2, opts.maxCost);
    const sort = parseSort(input.sort);
    let after: SearchAfter | null = null;
    if (input.search_after !== undefined) {
      if (input.start !== undefined) throw invalid('start', 'use either start or search_after, not both');
      if (typeof input.search_after === 'number') {
        if (input.search_after !== -1)
          throw invalid('search_after', 'search_after must be "-1" for the first page, then the search_after of the previous response');
      } else {
        after = decodeSearchAfter(input.search_after);
      }
      keysetCondition(sort, after, 1); // refuses a cursor of another sort now, not mid-request
    }
    const start = input.start ?? 0;
    const size = input.size ?? (opts.unlimited ? undefined : DEFAULT_SIZE);
    if (size !== undefined && start + size > MAX_RESULT_WINDOW)
      throw invalid(
        'start',
        `start + size may not exceed ${MAX_RESULT_WINDOW}: simple paging returns at most ${MAX_RESULT_WINDOW} results; ${DEEP_PAGING}`,
      );
    if (start > MAX_RESULT_WINDOW) throw invalid('start', `start may not exceed ${MAX_RESULT_WINDOW}; ${DEEP_PAGING}`);
    return { filter: { projectId, where, params, transactions: compileTransactionTerm(input.query, 2) }, sort, after, start, size };
  } catch (err) {
    throw toValidationError(err);
  }
}

export interface SearchResult {
  /** matching orders, counted up to TOTAL_CAP */
  total: number;
  /** "eq" when total is exact, "gte" when the count stopped at TOTAL_CAP */
  total_relation: 'eq' | 'gte';
  orders: OrderView[];
  /** cursor of the last order of the page; null when the page is empty */
  search_after: string | null;
}

/**
 * POST /v1/search/orders/ as JSON: one page of full order views (as GET /v1/orders/{id}/ shows them).
 * Read from ctx.replica: with DATABASE_REPLICA_URL set, a change may show a moment late (docs/scale-out.md).
 */
export async function searchOrders(ctx: Ctx, project: ProjectRow, input: SearchInput, signal?: AbortSignal): Promise<SearchResult> {
  const plan = planSearch(project.id, input, { maxCost: ctx.config.limits.maxQueryCost });
  const size = plan.size ?? DEFAULT_SIZE;
  // the project's share of searches (it waits in line, 429 beyond); a client that goes away cancels its statements
  const release = await takeSearchShare(ctx, project.id, signal);
  try {
    const db = ctx.replica;
    const cancellable = <T>(fn: (q: Queryable) => Promise<T>) => (signal && db.withCancel ? db.withCancel(signal, fn) : fn(db));
    // one after the other, not side by side: a search takes one connection and one core at a time,
    // whatever it asks, and leaves the rest to the other merchants
    const rows = await cancellable((q) =>
      store.findOrders(q, plan.filter, { sort: plan.sort, after: plan.after, limit: size, offset: plan.start }),
    );
    const counted = await cancellable((q) => store.countOrders(q, plan.filter, TOTAL_CAP + 1));
    const last = rows.at(-1);
    return {
      total: Math.min(counted, TOTAL_CAP),
      total_relation: counted > TOTAL_CAP ? 'gte' : 'eq',
      orders: await renderOrders(ctx, ctx.replica, project.id, rows),
      search_after: last ? encodeSearchAfter(last.sort_value, last.id, plan.sort) : null,
    };
  } finally {
    release();
  }
}

/** Order views of many orders with four queries in all, not four per order. */
async function renderOrders(ctx: Ctx, q: Queryable, projectId: ProjectId, rows: SearchRow[] | OrderRow[]) {
  if (!rows.length) return [];
  const ids = rows.map((r) => r.id);
  const [txns, children] = await Promise.all([orders.transactionsOf(q, projectId, ids), orders.childOrdersOf(q, projectId, ids)]);
  const events = await orders.eventsOf(
    q,
    projectId,
    txns.map((t) => t.id),
  );
  const eventsOf = groupBy(events, (e) => e.transaction_id);
  const txnsOf = groupBy(txns, (t) => t.order_id);
  const childrenOf = groupBy(children, (c) => c.related_order_id!);
  const holderNames = await openHolderNames(q, ctx.masterKey, txns);
  const views: OrderView[] = [];
  for (let i = 0; i < rows.length; i += RENDER_CHUNK) {
    // a turn of the event loop between chunks: a thousand-order page does not hold the process
    // (and every other merchant's requests) for the whole of its rendering
    if (i) await new Promise((r) => setImmediate(r));
    views.push(...rows.slice(i, i + RENDER_CHUNK).map(render));
  }
  return views;

  function render(row: SearchRow | OrderRow) {
    const { sort_value: _, ...order } = row as SearchRow;
    const own = txnsOf.get(order.id) ?? [];
    const ownEvents: EventRow[] = own.flatMap((t) => eventsOf.get(t.id) ?? []);
    return renderOrder(ctx.config, order as OrderRow, own, ownEvents, childrenOf.get(order.id) ?? [], { holderNames });
  }
}

/** Orders rendered, or written as JSON, between two turns of the event loop. */
const RENDER_CHUNK = 100;

/**
 * A search page as JSON text, its orders stringified RENDER_CHUNK at a time with a turn of the
 * event loop between (the same bytes as JSON.stringify of the whole page).
 */
export async function searchPageJson(page: SearchResult): Promise<string> {
  const parts: string[] = [];
  for (let i = 0; i < page.orders.length; i += RENDER_CHUNK) {
    if (i) await new Promise((r) => setImmediate(r));
    parts.push(
      page.orders
        .slice(i, i + RENDER_CHUNK)
        .map((o) => JSON.stringify(o))
        .join(','),
    );
  }
  const head = JSON.stringify({ total: page.total, total_relation: page.total_relation });
  return `${head.slice(0, -1)},"orders":[${parts.join(',')}],"search_after":${JSON.stringify(page.search_after)}}`;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}
