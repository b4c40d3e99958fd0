/**
 * The search language's syntax (docs/search.md): query text in, a syntax tree out, or a
 * QueryError with the position; and the value types (UUIDs, amounts, dates) that fields and
 * search_after take. Compiling the tree to SQL is query.ts, whose header lists the grammar.
 */

/** Which member of the search request is wrong: maps to the error body's `field`. */
export type QueryParam = 'query' | 'sort' | 'search_after';

export class QueryError extends Error {
  /** 0-based offset in the query text (UTF-16 code units, as JavaScript counts). */
  position?: number;
  /** The search field concerned (`id`, `created`, an unknown name...). */
  field?: string;
  /** The request member at fault. */
  param: QueryParam;
  /** refused by the bound on what a query may cost, not by its syntax */
  tooCostly?: boolean;
  constructor(message: string, opts: { position?: number; field?: string; param?: QueryParam; tooCostly?: boolean } = {}) {
    super(message);
    this.name = 'QueryError';
    if (opts.tooCostly) this.tooCostly = true;
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
// Syntax tree

export interface FieldRef {
  name: string;
  pos: number;
}
export interface TermNode {
  kind: 'term';
  field: FieldRef | null;
  value: string;
  pos: number;
  /** trailing `*`: value is the prefix */
  wildcard: boolean;
  /** `field:*`: the field has a value */
  exists: boolean;
}
export interface Bound {
  value: string;
  pos: number;
}
export interface RangeNode {
  kind: 'range';
  field: FieldRef;
  /** null: open end (`*`) */
  min: Bound | null;
  max: Bound | null;
  minInclusive: boolean;
  maxInclusive: boolean;
}
export type Node =
  { kind: 'and' | 'or'; items: Node[] } | { kind: 'not'; item: Node } | { kind: 'all' } | { kind: 'none' } | TermNode | RangeNode;

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

export class Parser {
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
    if (this.src[this.pos] === ')') throw syntax('Empty parentheses: expected a search term', this.pos);
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
      if (value === '*')
        return field ? { kind: 'term', field, value: '', pos: word.start, wildcard: false, exists: true } : { kind: 'all' };
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
export function simplify(node: Node): Node {
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
export function parseInstant(text: string): Instant | null {
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

export function parseAmount(text: string): number | null {
  if (!/^\d{1,16}$/.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, '\\$&');
