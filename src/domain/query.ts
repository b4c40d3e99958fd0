/**
 * The order search language of POST /v1/search/orders/ (DESIGN.md "Search language";
 * merchant reference: docs/search.md). Pure: query text in, parameterised SQL out.
 *
 * - `compileQuery` turns a Lucene-like query into a boolean SQL expression over the
 *   alias `o` (orders). User text only ever travels as a bind parameter; the SQL text is
 *   assembled from this file's constants alone.
 * - `parseSort`, `encodeSearchAfter`, `decodeSearchAfter` and `keysetCondition` give
 *   the ORDER BY and the keyset condition of search_after paging.
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
import { PAYMENT_METHODS } from './project.ts';

/** Which member of the search request is wrong: maps to the error body's `field`. */
export type QueryParam = 'query' | 'sort' | 'search_after';

export class QueryError extends Error {
  /** 0-based offset in the query text (UTF-16 code units, as JavaScript counts). */
  position?: number;
  /** The search field concerned (`id`, `created`, an unknown name...). */
  field?: string;
  /** The request member at fault. */
  param: QueryParam;
  constructor(message: string, opts: { position?: number; field?: string; param?: QueryParam } = {}) {
    super(message);
    this.name = 'QueryError';
    if (opts.position !== undefined) this.position = opts.position;
    if (opts.field !== undefined) this.field = opts.field;
    this.param = opts.param ?? 'query';
  }
}

/** Simple paging (start + size) stops here; beyond, use search_after. */
export const MAX_RESULT_WINDOW = 10_000;
export const MAX_QUERY_LENGTH = 10_000;
const MAX_DEPTH = 64;

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
  currency: { kind: 'text', column: 'o.currency', fold: 'upper', pattern: { re: /^[A-Z]{3}$/, what: 'a three-letter ISO 4217 code such as EUR' } },
  amount: { kind: 'amount', column: 'o.amount' },
  created: { kind: 'timestamp', column: 'o.created' },
  modified: { kind: 'timestamp', column: 'o.modified' },
  completed: { kind: 'timestamp', column: 'o.completed' },
  flags: { kind: 'flags', column: 'o.flags' },
  description: { kind: 'contains', column: 'o.description' },
  'customer.email_address': { kind: 'text', column: 'o.customer_email', fold: 'lower', lowerColumn: true },
  'customer.merchant_customer_id': { kind: 'text', column: 'o.merchant_customer_id' },
  related_payment_link_id: { kind: 'uuid', column: 'o.payment_link_id' },
  'transactions.payment_method': { kind: 'text', column: 't.payment_method', transaction: true, fold: 'lower', allowed: PAYMENT_METHODS },
  'transactions.status': { kind: 'text', column: 't.status', transaction: true, fold: 'lower', allowed: TRANSACTION_STATUSES },
  'transactions.payment_method_brand': { kind: 'text', column: 't.payment_method_brand', transaction: true, fold: 'lower', lowerColumn: true },
  'transactions.id': { kind: 'uuid', column: 't.id', transaction: true },
};

/** Every field the query language knows, in documentation order. */
export const SEARCH_FIELDS: readonly string[] = Object.keys(FIELDS);

/** What a bare word (no field) searches: `w` == `merchant_order_id:w OR customer.email_address:w OR description:w`. */
const BARE_WORD_FIELDS = ['merchant_order_id', 'customer.email_address', 'description'] as const;

const RANGE_KINDS: readonly FieldKind[] = ['amount', 'timestamp'];

// ---------------------------------------------------------------------------------------
// Syntax tree

interface FieldRef {
  name: string;
  pos: number;
}
interface TermNode {
  kind: 'term';
  field: FieldRef | null;
  value: string;
  pos: number;
  /** trailing `*`: value is the prefix */
  wildcard: boolean;
  /** `field:*`: the field has a value */
  exists: boolean;
}
interface Bound {
  value: string;
  pos: number;
}
interface RangeNode {
  kind: 'range';
  field: FieldRef;
  /** null: open end (`*`) */
  min: Bound | null;
  max: Bound | null;
  minInclusive: boolean;
  maxInclusive: boolean;
}
type Node =
  | { kind: 'and' | 'or'; items: Node[] }
  | { kind: 'not'; item: Node }
  | { kind: 'all' }
  | { kind: 'none' }
  | TermNode
  | RangeNode;

// ---------------------------------------------------------------------------------------
// Parser

const isWs = (c: string | undefined) => c !== undefined && /\s/.test(c);
/** characters that end a word (besides whitespace) */
const STOP = new Set(['(', ')', '"', '[', ']', '{', '}']);
const OPERATORS: ReadonlyArray<[string, 'AND' | 'OR' | 'NOT']> = [
  ['AND', 'AND'],
  ['OR', 'OR'],
  ['NOT', 'NOT'],
  ['&&', 'AND'],
  ['||', 'OR'],
];

interface Word {
  value: string;
  start: number;
  end: number;
  /** offsets of unescaped `*` and `?` */
  stars: number[];
  questions: number[];
}

const syntax = (message: string, position: number) => new QueryError(`${message} at position ${position}`, { position });

class Parser {
  pos = 0;
  constructor(readonly src: string) {}

  parse(): Node {
    this.skipWs();
    if (this.eof()) throw syntax('Empty query (use * to match all orders)', this.pos);
    const node = this.parseOr(null, 0);
    this.skipWs();
    if (!this.eof()) throw syntax(`Unexpected '${this.src[this.pos]}'`, this.pos);
    return node;
  }

  private eof() {
    return this.pos >= this.src.length;
  }

  private skipWs() {
    while (isWs(this.src[this.pos])) this.pos++;
  }

  /** The operator at the current position, if any (after whitespace). */
  private peekOperator(): { op: 'AND' | 'OR' | 'NOT'; text: string; end: number } | null {
    this.skipWs();
    for (const [text, op] of OPERATORS) {
      if (!this.src.startsWith(text, this.pos)) continue;
      const after = this.src[this.pos + text.length];
      if (after === undefined || isWs(after) || STOP.has(after)) return { op, text, end: this.pos + text.length };
    }
    return null;
  }

  private parseOr(field: FieldRef | null, depth: number): Node {
    const items = [this.parseAnd(field, depth)];
    for (;;) {
      const op = this.peekOperator();
      if (op?.op !== 'OR') break;
      this.pos = op.end;
      items.push(this.parseAnd(field, depth));
    }
    return items.length === 1 ? items[0] : { kind: 'or', items };
  }

  private parseAnd(field: FieldRef | null, depth: number): Node {
    const items = [this.parseUnary(field, depth)];
    for (;;) {
      this.skipWs();
      if (this.eof() || this.src[this.pos] === ')') break;
      const op = this.peekOperator();
      if (op?.op === 'OR') break;
      if (op?.op === 'AND') this.pos = op.end; // else juxtaposition: implicit AND
      items.push(this.parseUnary(field, depth));
    }
    return items.length === 1 ? items[0] : { kind: 'and', items };
  }

  private parseUnary(field: FieldRef | null, depth: number): Node {
    if (depth > MAX_DEPTH) throw syntax(`Query nested too deeply (more than ${MAX_DEPTH} levels)`, this.pos);
    this.skipWs();
    if (this.eof()) throw syntax('Unexpected end of query: expected a search term', this.pos);
    const op = this.peekOperator();
    if (op) {
      if (op.op !== 'NOT') throw syntax(`Unexpected operator ${op.text}: expected a search term`, this.pos);
      this.pos = op.end;
      return { kind: 'not', item: this.parseUnary(field, depth + 1) };
    }
    const c = this.src[this.pos];
    if (c === '!') {
      this.pos++;
      return { kind: 'not', item: this.parseUnary(field, depth + 1) };
    }
    if (c === '-' || c === '+') {
      const next = this.src[this.pos + 1];
      if (next === undefined || isWs(next)) throw syntax(`Expected a search term right after '${c}'`, this.pos + 1);
      this.pos++;
      const item = this.parseUnary(field, depth + 1);
      return c === '-' ? { kind: 'not', item } : item;
    }
    if (c === '(') return this.parseGroup(field, depth);
    return this.parseClause(field, depth);
  }

  private parseGroup(field: FieldRef | null, depth: number): Node {
    const open = this.pos;
    this.pos++;
    this.skipWs();
    if (this.src[this.pos] === ')') throw syntax("Empty parentheses: expected a search term", this.pos);
    const inner = this.parseOr(field, depth + 1);
    this.skipWs();
    if (this.src[this.pos] !== ')') {
      throw new QueryError(`Missing ')' at position ${this.pos} to close the '(' at position ${open}`, { position: this.pos });
    }
    this.pos++;
    return inner;
  }

  /** A term or range, with or without `field:`; `field` is the enclosing field group's. */
  private parseClause(field: FieldRef | null, depth: number): Node {
    const c = this.src[this.pos];
    if (c === '"') return this.quotedTerm(field);
    if (c === '[' || c === '{') {
      if (!field) throw syntax('A range needs a field, as in amount:[100 TO 500],', this.pos);
      return this.parseRange(field);
    }
    if (c === ')' || c === ']' || c === '}') throw syntax(`Unexpected '${c}'`, this.pos);
    if (c === ':') throw syntax("Unexpected ':' (field name missing)", this.pos);
    const word = this.scanWord(false);
    if (this.src[this.pos] !== ':') return this.wordTerm(word, field);
    // field:value
    const ref: FieldRef = { name: word.value, pos: word.start };
    this.pos++;
    this.skipWs();
    const v = this.src[this.pos];
    if (v === undefined || v === ')' || v === ']' || v === '}') throw syntax(`Expected a value for field "${ref.name}"`, this.pos);
    if (v === '(') return this.parseGroup(ref, depth);
    if (v === '"') return this.quotedTerm(ref);
    if (v === '[' || v === '{') return this.parseRange(ref);
    return this.wordTerm(this.scanWord(true), ref);
  }

  /** An unquoted word; stops at whitespace, ( ) " [ ] { } and, unless allowColon, ':'. */
  private scanWord(allowColon: boolean): Word {
    const start = this.pos;
    let value = '';
    const stars: number[] = [];
    const questions: number[] = [];
    while (!this.eof()) {
      const c = this.src[this.pos];
      if (c === '\\') {
        if (this.pos + 1 >= this.src.length) throw syntax("Nothing to escape after '\\'", this.pos);
        value += this.src[this.pos + 1];
        this.pos += 2;
        continue;
      }
      if (isWs(c) || STOP.has(c) || (c === ':' && !allowColon)) break;
      if (c === '*') stars.push(this.pos);
      if (c === '?') questions.push(this.pos);
      value += c;
      this.pos++;
    }
    return { value, start, end: this.pos, stars, questions };
  }

  private wordTerm(word: Word, field: FieldRef | null): Node {
    if (word.questions.length) throw syntax('The ? wildcard is not supported (escape it as \\? or quote the value)', word.questions[0]);
    let { value } = word;
    let wildcard = false;
    if (word.stars.length) {
      const last = word.end - 1;
      const bad = word.stars.find((p) => p !== last);
      if (bad !== undefined) throw syntax('Only a trailing * wildcard is supported (escape it as \\* or quote the value)', bad);
      if (value === '*') return field ? { kind: 'term', field, value: '', pos: word.start, wildcard: false, exists: true } : { kind: 'all' };
      value = value.slice(0, -1);
      wildcard = true;
    }
    return { kind: 'term', field, value, pos: word.start, wildcard, exists: false };
  }

  private quotedTerm(field: FieldRef | null): TermNode {
    const { value, start } = this.scanQuoted();
    return { kind: 'term', field, value, pos: start, wildcard: false, exists: false };
  }

  private scanQuoted(): { value: string; start: number } {
    const start = this.pos;
    this.pos++;
    let value = '';
    for (;;) {
      if (this.eof()) throw new QueryError(`Missing closing '"' for the quote opened at position ${start}`, { position: start });
      const c = this.src[this.pos];
      if (c === '"') break;
      if (c === '\\' && this.pos + 1 < this.src.length) {
        value += this.src[this.pos + 1];
        this.pos += 2;
        continue;
      }
      value += c;
      this.pos++;
    }
    this.pos++;
    return { value, start };
  }

  private parseRange(field: FieldRef): RangeNode {
    const minInclusive = this.src[this.pos] === '[';
    this.pos++;
    this.skipWs();
    const min = this.rangeEnd();
    this.skipWs();
    const after = this.src[this.pos + 2];
    if (!this.src.startsWith('TO', this.pos) || !(after === undefined || isWs(after))) throw syntax("Expected 'TO' in the range", this.pos);
    this.pos += 2;
    this.skipWs();
    const max = this.rangeEnd();
    this.skipWs();
    const close = this.src[this.pos];
    if (close !== ']' && close !== '}') throw syntax("Expected ']' or '}' to close the range", this.pos);
    this.pos++;
    return { kind: 'range', field, min, max, minInclusive, maxInclusive: close === ']' };
  }

  private rangeEnd(): Bound | null {
    if (this.src[this.pos] === '"') {
      const { value, start } = this.scanQuoted();
      return { value, pos: start };
    }
    const word = this.scanWord(true);
    if (word.end === word.start) throw syntax('Expected a range value', this.pos);
    if (word.value === '*' && word.stars.length === 1) return null;
    if (word.stars.length) throw syntax('Wildcards are not allowed in a range', word.stars[0]);
    if (word.questions.length) throw syntax('Wildcards are not allowed in a range', word.questions[0]);
    return { value: word.value, pos: word.start };
  }
}

/** Drops `*` from ANDs, turns an OR with `*` into `*`, flattens nested ANDs and ORs. */
function simplify(node: Node): Node {
  switch (node.kind) {
    case 'and':
    case 'or': {
      const items: Node[] = [];
      for (const item of node.items.map(simplify)) {
        if (item.kind === node.kind) items.push(...item.items);
        else if (item.kind === 'all') {
          if (node.kind === 'or') return item;
        } else items.push(item);
      }
      if (items.length === 0) return { kind: 'all' };
      return items.length === 1 ? items[0] : { kind: node.kind, items };
    }
    case 'not': {
      const item = simplify(node.item);
      if (item.kind === 'all') return { kind: 'none' };
      if (item.kind === 'none') return { kind: 'all' };
      // NOT NOT x is x: in a WHERE clause NULL already counts as false
      if (item.kind === 'not') return item.item;
      return { kind: 'not', item };
    }
    default:
      return node;
  }
}

// ---------------------------------------------------------------------------------------
// Value types

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

type Instant = { kind: 'date'; start: string; next: string } | { kind: 'datetime'; iso: string };

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function validDate(y: number, m: number, d: number) {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  return d <= days;
}

/** A date (one UTC day) or a date-time (UTC when it has no offset); null when invalid. */
function parseInstant(text: string): Instant | null {
  const d = DATE_RE.exec(text);
  if (d) {
    const [y, m, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    if (!validDate(y, m, day)) return null;
    const next = new Date(0);
    next.setUTCFullYear(y, m - 1, day + 1);
    const day0 = (yy: number, mm: number, dd: number) => `${pad(yy, 4)}-${pad(mm)}-${pad(dd)}T00:00:00Z`;
    return { kind: 'date', start: day0(y, m, day), next: day0(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate()) };
  }
  const t = DATETIME_RE.exec(text);
  if (!t) return null;
  const [y, m, day, hh, mi] = [1, 2, 3, 4, 5].map((i) => Number(t[i]));
  const ss = t[6] === undefined ? 0 : Number(t[6]);
  if (!validDate(y, m, day) || hh > 23 || mi > 59 || ss > 59) return null;
  let offset = 'Z';
  const z = t[8];
  if (z && z !== 'Z' && z !== 'z') {
    const oh = Number(z.slice(1, 3));
    const om = z.length > 3 ? Number(z.slice(-2)) : 0;
    if (oh > 14 || om > 59) return null;
    offset = `${z[0]}${pad(oh)}:${pad(om)}`;
  }
  return { kind: 'datetime', iso: `${t[1]}-${t[2]}-${t[3]}T${t[4]}:${t[5]}:${pad(ss)}${t[7] ?? ''}${offset}` };
}

function parseAmount(text: string): number | null {
  if (!/^\d{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

const escapeLike = (s: string) => s.replace(/[\\%_]/g, '\\$&');

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
    return { sql: `EXISTS (SELECT 1 FROM transactions t WHERE t.order_id = o.id AND t.project_id = o.project_id AND ${pred.sql})`, grouped: false };
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
        if (!UUID_RE.test(t.value)) throw this.invalid(name, t.pos, 'a UUID');
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
        return { sql: `(${col} >= ${this.param(at.start, '::timestamptz')} AND ${col} < ${this.param(at.next, '::timestamptz')})`, grouped: true };
      }
      case 'contains':
        return atom(`${col} ILIKE ${this.param(`%${escapeLike(t.value)}%`)}`);
      case 'flags':
        if (t.wildcard) return atom(`EXISTS (SELECT 1 FROM unnest(${col}) AS f(flag) WHERE f.flag LIKE ${this.param(`${escapeLike(t.value)}%`)})`);
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
      throw new QueryError(`Field "${name}" does not support ranges (only amount, created, modified and completed do), at position ${r.field.pos}`, {
        position: r.field.pos,
        field: name,
      });
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
 * Compiles a search query into a boolean SQL expression over `o` (orders), with bind
 * parameters numbered from `$firstParam`. The expression is safe to AND with other
 * conditions without extra parentheses. Throws QueryError.
 */
export function compileQuery(query: string, firstParam: number): { where: string; params: unknown[] } {
  if (typeof query !== 'string') throw new QueryError('The query must be a string', { position: 0 });
  if (query.length > MAX_QUERY_LENGTH) {
    throw new QueryError(`Query too long (at most ${MAX_QUERY_LENGTH} characters) at position ${MAX_QUERY_LENGTH}`, { position: MAX_QUERY_LENGTH });
  }
  const tree = simplify(new Parser(query).parse());
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
  completed: { column: "COALESCE(o.completed, '-infinity'::timestamptz)", valueSql: utcText('o.completed'), type: 'timestamp', nullAs: '-infinity' },
  amount: { column: 'o.amount', valueSql: 'o.amount', type: 'amount' },
  merchant_order_id: { column: "COALESCE(o.merchant_order_id, '')", valueSql: 'o.merchant_order_id', type: 'text', nullAs: '' },
  id: { column: 'o.id', valueSql: 'o.id::text', type: 'uuid' },
};

const sortError = (text: string) =>
  new QueryError(`Invalid sort "${text}": use one of ${SORT_FIELDS.join(', ')}, optionally followed by asc or desc (default: created desc)`, {
    param: 'sort',
  });

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
  return sortSpec(m[1] as SortField, ((m[2] ?? 'asc').toLowerCase() as SortDirection));
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
  const value = sortValue instanceof Date ? sortValue.toISOString() : typeof sortValue === 'bigint' ? Number(sortValue) : (sortValue ?? null);
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
  if (!(value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) throw searchAfterError('bad value');
  if (typeof id !== 'string' || !UUID_RE.test(id)) throw searchAfterError('bad id');
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
    throw new QueryError(`search_after was made for sort "${c.sort}", not "${expected}": use the same sort in every request`, { param: 'search_after' });
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
