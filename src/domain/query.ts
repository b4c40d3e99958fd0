/**
 * The order search language of POST /v1/search/orders/ (docs/design.md "Search language";
 * merchant reference: docs/search.md). Pure: query text in, parameterised SQL out.
 *
 * - `compileQuery` turns a Lucene-like query into a boolean SQL expression over the
 *   alias `o` (orders). User text only ever travels as a bind parameter; the SQL text is
 *   assembled from this file's constants alone.
 * - `parseSort`, `encodeSearchAfter`, `decodeSearchAfter` and `keysetCondition` (sort.ts,
 *   re-exported here) give the ORDER BY and the keyset condition of search_after paging.
 * - The parser and the value types are query-syntax.ts.
 *
 * The parser is our own recursive descent, not the `lucene` package: that grammar has no
 * operator precedence (`a AND b OR c` came out as `a AND (b OR c)`) and silently drops
 * operators (`a AND NOT NOT b` == `a AND NOT b`, `a AND` == `a`), which a filter over
 * money cannot afford. The syntax accepted is the same subset, with these rules:
 *
 * - precedence NOT > AND > OR; juxtaposition is AND (`a b` == `a AND b`); `&&`, `||`,
 *   `!` are AND, OR, NOT; a leading `-` means NOT, a leading `+` is ignored;
 * - operators are upper case (`and` is a search word);
 * - `field:(a OR b)` applies the field to every term of the group;
 * - after `field:` a value may contain `:` (`created:2024-01-31T10:00:00Z` works
 *   unquoted); `\` escapes any character; quoted values are literal (no wildcard);
 * - a trailing unescaped `*` is a prefix match; `*` alone matches everything, `field:*`
 *   matches orders where the field has a value; `*` elsewhere and `?` are errors.
 *
 * NOT compiles to `(x) IS NOT TRUE`, not `NOT x`, so that an order whose column is NULL
 * (no completed date, no e-mail) matches `NOT field:value`, as in Lucene.
 */
import { ORDER_STATUSES, TRANSACTION_STATUSES } from './status.ts';
import { PAYMENT_METHODS } from './payment-methods.ts';

import {
  MAX_QUERY_LENGTH,
  Parser,
  QueryError,
  simplify,
  parseInstant,
  parseAmount,
  escapeLike,
  type Bound,
  type FieldRef,
  type Node,
  type TermNode,
  type RangeNode,
} from './query-syntax.ts';
import { UUID_PATTERN } from './ids.ts';

const ORDER_KINDS = ['payment', 'capture', 'void', 'refund', 'chargeback', 'reversal'] as const;

export { MAX_QUERY_LENGTH, MAX_RESULT_WINDOW, QueryError, type QueryParam } from './query-syntax.ts';
export * from './sort.ts';

// ---------------------------------------------------------------------------------------
// Fields

type FieldKind = 'uuid' | 'text' | 'contains' | 'amount' | 'timestamp' | 'flags';

interface FieldDef {
  kind: FieldKind;
  /** column, on `o` (orders) or, for transaction fields, on `t` (transactions) */
  column: string;
  transaction?: boolean;
  /** case the value is folded to before comparing */
  fold?: 'lower' | 'upper';
  /** compare lower(column): for values stored in no fixed case */
  lowerColumn?: boolean;
  /** values accepted for an exact match (typos are errors) */
  allowed?: readonly string[];
  pattern?: { re: RegExp; what: string };
}

const FIELDS: Record<string, FieldDef> = {
  id: { kind: 'uuid', column: 'o.id' },
  merchant_order_id: { kind: 'text', column: 'o.merchant_order_id' },
  status: { kind: 'text', column: 'o.status', fold: 'lower', allowed: ORDER_STATUSES },
  currency: {
    kind: 'text',
    column: 'o.currency',
    fold: 'upper',
    pattern: { re: /^[A-Z]{3}$/, what: 'a three-letter ISO 4217 code such as EUR' },
  },
  amount: { kind: 'amount', column: 'o.amount' },
  created: { kind: 'timestamp', column: 'o.created' },
  modified: { kind: 'timestamp', column: 'o.modified' },
  completed: { kind: 'timestamp', column: 'o.completed' },
  flags: { kind: 'flags', column: 'o.flags' },
  description: { kind: 'contains', column: 'o.description' },
  'customer.email_address': { kind: 'text', column: 'o.customer_email', fold: 'lower', lowerColumn: true },
  'customer.merchant_customer_id': { kind: 'text', column: 'o.merchant_customer_id' },
  // extension: the customer's first and last name as the order carries them (the portal's search box)
  'customer.name': {
    kind: 'contains',
    column: "concat_ws(' ', o.body->'customer'->>'first_name', o.body->'customer'->>'last_name')",
  },
  related_payment_link_id: { kind: 'uuid', column: 'o.payment_link_id' },
  // extension: payment, or the order made from one (capture, void, refund, chargeback, reversal)
  kind: { kind: 'text', column: 'o.kind', fold: 'lower', allowed: ORDER_KINDS },
  'transactions.payment_method': { kind: 'text', column: 't.payment_method', transaction: true, fold: 'lower', allowed: PAYMENT_METHODS },
  'transactions.status': { kind: 'text', column: 't.status', transaction: true, fold: 'lower', allowed: TRANSACTION_STATUSES },
  'transactions.payment_method_brand': {
    kind: 'text',
    column: 't.payment_method_brand',
    transaction: true,
    fold: 'lower',
    lowerColumn: true,
  },
  // extension: the card's last four digits (of the truncated PAN the transaction keeps)
  'transactions.payment_method_details.last4': {
    kind: 'text',
    column: "right(t.details->>'truncated_pan', 4)",
    transaction: true,
    pattern: { re: /^\d{4}$/, what: 'the last four digits of a card, such as 4242' },
  },
  'transactions.id': { kind: 'uuid', column: 't.id', transaction: true },
};

/** Every field the query language knows, in documentation order. */
export const SEARCH_FIELDS: readonly string[] = Object.keys(FIELDS);

/** What a bare word (no field) searches: `w` == `merchant_order_id:w OR customer.email_address:w OR description:w`. */
const BARE_WORD_FIELDS = ['merchant_order_id', 'customer.email_address', 'description'] as const;

const RANGE_KINDS: readonly FieldKind[] = ['amount', 'timestamp'];

// ---------------------------------------------------------------------------------------
// Compiler

interface Sql {
  sql: string;
  /** already enclosed in parentheses as a whole */
  grouped: boolean;
}

class Compiler {
  readonly params: unknown[] = [];
  constructor(readonly firstParam: number) {}

  private param(value: unknown, cast = ''): string {
    this.params.push(value);
    return `$${this.firstParam + this.params.length - 1}${cast}`;
  }

  compile(node: Node): Sql {
    switch (node.kind) {
      case 'all':
        return { sql: 'TRUE', grouped: false };
      case 'none':
        return { sql: 'FALSE', grouped: false };
      case 'and':
      case 'or':
        return { sql: `(${node.items.map((n) => this.compile(n).sql).join(node.kind === 'and' ? ' AND ' : ' OR ')})`, grouped: true };
      case 'not': {
        // NOT field:* is "the field is empty": plain IS NULL, which a partial index can serve
        const item = node.item;
        if (item.kind === 'term' && item.exists && item.field) {
          const def = this.lookup(item.field);
          if (!def.transaction && def.kind !== 'flags') return { sql: `${def.column} IS NULL`, grouped: false };
        }
        const inner = this.compile(node.item);
        return { sql: `${inner.grouped ? inner.sql : `(${inner.sql})`} IS NOT TRUE`, grouped: false };
      }
      case 'term':
        if (!node.field) {
          const parts = BARE_WORD_FIELDS.map((name) => this.term(FIELDS[name], name, node).sql);
          return { sql: `(${parts.join(' OR ')})`, grouped: true };
        }
        return this.inTransaction(this.lookup(node.field), this.term(this.lookup(node.field), node.field.name, node));
      case 'range':
        return this.inTransaction(this.lookup(node.field), this.range(this.lookup(node.field), node));
    }
  }

  lookup(ref: FieldRef): FieldDef {
    const def = Object.hasOwn(FIELDS, ref.name) ? FIELDS[ref.name] : undefined;
    if (!def) {
      throw new QueryError(`Unknown field "${ref.name}" at position ${ref.pos}; known fields: ${SEARCH_FIELDS.join(', ')}`, {
        position: ref.pos,
        field: ref.name,
      });
    }
    return def;
  }

  private inTransaction(def: FieldDef, pred: Sql): Sql {
    if (!def.transaction) return pred;
    return {
      sql: `EXISTS (SELECT 1 FROM transactions t WHERE t.order_id = o.id AND t.project_id = o.project_id AND ${pred.sql})`,
      grouped: false,
    };
  }

  private invalid(name: string, pos: number, expected: string) {
    return new QueryError(`Invalid value for field "${name}" at position ${pos}: expected ${expected}`, { position: pos, field: name });
  }

  term(def: FieldDef, name: string, t: TermNode): Sql {
    const col = def.column;
    const atom = (sql: string): Sql => ({ sql, grouped: false });
    if (t.exists) return atom(def.kind === 'flags' ? `cardinality(${col}) > 0` : `${col} IS NOT NULL`);
    if (t.wildcard && (def.kind === 'uuid' || def.kind === 'amount' || def.kind === 'timestamp')) {
      throw new QueryError(`Field "${name}" does not support wildcards, at position ${t.pos}`, { position: t.pos, field: name });
    }
    switch (def.kind) {
      case 'uuid':
        if (!UUID_PATTERN.test(t.value)) throw this.invalid(name, t.pos, 'a UUID');
        return atom(`${col} = ${this.param(t.value.toLowerCase(), '::uuid')}`);
      case 'amount': {
        const n = parseAmount(t.value);
        if (n === null) throw this.invalid(name, t.pos, `an integer amount in minor units (0 to ${Number.MAX_SAFE_INTEGER})`);
        return atom(`${col} = ${this.param(n, '::bigint')}`);
      }
      case 'timestamp': {
        const at = parseInstant(t.value);
        if (!at) throw this.invalid(name, t.pos, 'a date (2024-01-31) or date-time (2024-01-31T10:00:00Z)');
        if (at.kind === 'datetime') return atom(`${col} = ${this.param(at.iso, '::timestamptz')}`);
        return {
          sql: `(${col} >= ${this.param(at.start, '::timestamptz')} AND ${col} < ${this.param(at.next, '::timestamptz')})`,
          grouped: true,
        };
      }
      case 'contains':
        return atom(`${col} ILIKE ${this.param(`%${escapeLike(t.value)}%`)}`);
      case 'flags':
        if (t.wildcard)
          return atom(`EXISTS (SELECT 1 FROM unnest(${col}) AS f(flag) WHERE f.flag LIKE ${this.param(`${escapeLike(t.value)}%`)})`);
        return atom(`${this.param(t.value)} = ANY(${col})`);
      case 'text': {
        const value = def.fold === 'lower' ? t.value.toLowerCase() : def.fold === 'upper' ? t.value.toUpperCase() : t.value;
        const target = def.lowerColumn ? `lower(${col})` : col;
        if (t.wildcard) return atom(`${target} LIKE ${this.param(`${escapeLike(value)}%`)}`);
        if (def.allowed && !def.allowed.includes(value)) throw this.invalid(name, t.pos, `one of ${def.allowed.join(', ')}`);
        if (def.pattern && !def.pattern.re.test(value)) throw this.invalid(name, t.pos, def.pattern.what);
        return atom(`${target} = ${this.param(value)}`);
      }
    }
  }

  private range(def: FieldDef, r: RangeNode): Sql {
    const name = r.field.name;
    if (!RANGE_KINDS.includes(def.kind)) {
      throw new QueryError(
        `Field "${name}" does not support ranges (only amount, created, modified and completed do), at position ${r.field.pos}`,
        {
          position: r.field.pos,
          field: name,
        },
      );
    }
    const col = def.column;
    const parts: string[] = [];
    const bound = (b: Bound, lower: boolean, inclusive: boolean) => {
      if (def.kind === 'amount') {
        const n = parseAmount(b.value);
        if (n === null) throw this.invalid(name, b.pos, `an integer amount in minor units (0 to ${Number.MAX_SAFE_INTEGER})`);
        const op = lower ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
        parts.push(`${col} ${op} ${this.param(n, '::bigint')}`);
        return;
      }
      const at = parseInstant(b.value);
      if (!at) throw this.invalid(name, b.pos, 'a date (2024-01-31) or date-time (2024-01-31T10:00:00Z)');
      if (at.kind === 'datetime') {
        const op = lower ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
        parts.push(`${col} ${op} ${this.param(at.iso, '::timestamptz')}`);
        return;
      }
      // A date stands for its whole UTC day: [d includes it, {d starts after it,
      // d] includes it, d} stops before it.
      const edge = lower === inclusive ? at.start : at.next;
      parts.push(`${col} ${lower ? '>=' : '<'} ${this.param(edge, '::timestamptz')}`);
    };
    if (r.min) bound(r.min, true, r.minInclusive);
    if (r.max) bound(r.max, false, r.maxInclusive);
    if (parts.length === 0) return { sql: `${col} IS NOT NULL`, grouped: false };
    if (parts.length === 1) return { sql: parts[0], grouped: false };
    return { sql: `(${parts.join(' AND ')})`, grouped: true };
  }
}

/**
 * What a query may cost before it runs (docs/security.md "Search cost"): each field term counts
 * 1, a bare word 3 (it is looked for in several fields), a wildcard 2 more (a prefix match).
 * Counted on the simplified tree, so `a OR a OR a` costs what `a` does.
 */
function queryCost(node: Node): number {
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.items.reduce((sum, item) => sum + queryCost(item), 0);
    case 'not':
      return queryCost(node.item);
    case 'term':
      return (node.field ? 1 : 3) + (node.wildcard ? 2 : 0);
    case 'range':
      return 1;
    default:
      return 0;
  }
}

/** The default most a query may cost (SEARCH_MAX_QUERY_COST). */
export const DEFAULT_MAX_QUERY_COST = 60;

/**
 * Compiles a search query into a boolean SQL expression over `o` (orders), with bind
 * parameters numbered from `$firstParam`. The expression is safe to AND with other
 * conditions without extra parentheses. A query costing more than `maxCost` (queryCost) is
 * refused before anything runs. Throws QueryError.
 */
export function compileQuery(query: string, firstParam: number, maxCost = Infinity): { where: string; params: unknown[] } {
  if (typeof query !== 'string') throw new QueryError('The query must be a string', { position: 0 });
  if (query.length > MAX_QUERY_LENGTH) {
    throw new QueryError(`Query too long (at most ${MAX_QUERY_LENGTH} characters) at position ${MAX_QUERY_LENGTH}`, {
      position: MAX_QUERY_LENGTH,
    });
  }
  const tree = simplify(new Parser(query).parse());
  const cost = queryCost(tree);
  if (cost > maxCost)
    throw new QueryError(
      `Query too costly to run: it counts ${cost} and at most ${maxCost} is allowed (a field:value term counts 1, a bare word 3, a wildcard 2 more); narrow it with fewer terms at position 0`,
      { position: 0, tooCostly: true },
    );
  const compiler = new Compiler(firstParam);
  const { sql } = compiler.compile(tree);
  return { where: sql, params: compiler.params };
}

/**
 * When the whole query is one transactions.* term (`transactions.payment_method_brand:visa`),
 * that condition over `t` (transactions) alone, else null. An order matches exactly when one
 * of its transactions does, so the orders can be counted from the transactions' own indexes
 * instead of probing every order. Bind parameters from `$firstParam`. Throws QueryError as
 * compileQuery does.
 */
export function compileTransactionTerm(query: string, firstParam: number): { where: string; params: unknown[] } | null {
  if (typeof query !== 'string' || query.length > MAX_QUERY_LENGTH) return null;
  const tree = simplify(new Parser(query).parse());
  if (tree.kind !== 'term' || !tree.field) return null;
  const compiler = new Compiler(firstParam);
  const def = compiler.lookup(tree.field);
  if (!def.transaction) return null;
  return { where: compiler.term(def, tree.field.name, tree).sql, params: compiler.params };
}
