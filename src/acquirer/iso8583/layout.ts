/**
 * The field layout of the link, as data: ISO 8583:1987 by default. A processor's variant is a
 * copy of this table with some entries changed (ISO8583_LAYOUT names a JSON file of overrides),
 * never a code change. docs/acquirer-iso8583.md shows the table.
 */

/** n digits, an letters and digits, ans letters, digits, spaces and special characters */
export type Charset = 'n' | 'an' | 'ans';

export interface FieldSpec {
  name: string;
  charset: Charset;
  /** the length of a fixed field, the maximum of a variable one */
  length: number;
  /** 0 fixed, 2 LLVAR, 3 LLLVAR: the ASCII digits of the length before the value */
  prefix: 0 | 2 | 3;
}

export interface Layout {
  /** the message types the link knows; anything else is refused */
  mtis: string[];
  fields: Record<number, FieldSpec>;
}

const fixed = (name: string, charset: Charset, length: number): FieldSpec => ({ name, charset, length, prefix: 0 });

export const ISO_1987: Layout = {
  mtis: ['0100', '0110', '0200', '0210', '0220', '0230', '0400', '0401', '0410', '0800', '0810'],
  fields: {
    2: { name: 'primary account number', charset: 'n', length: 19, prefix: 2 },
    3: fixed('processing code', 'n', 6),
    4: fixed('amount, transaction', 'n', 12),
    7: fixed('transmission date and time (MMDDhhmmss, UTC)', 'n', 10),
    11: fixed('systems trace audit number', 'n', 6),
    12: fixed('time, local transaction (hhmmss)', 'n', 6),
    13: fixed('date, local transaction (MMDD)', 'n', 4),
    14: fixed('date, expiration (YYMM)', 'n', 4),
    22: fixed('point of service entry mode', 'n', 3),
    37: fixed('retrieval reference number', 'an', 12),
    38: fixed('authorization identification response', 'an', 6),
    39: fixed('response code', 'an', 2),
    41: fixed('card acceptor terminal identification', 'ans', 8),
    42: fixed('card acceptor identification code', 'ans', 15),
    48: { name: 'additional data, private (3-D Secure result)', charset: 'ans', length: 999, prefix: 3 },
    49: fixed('currency code, transaction', 'n', 3),
    70: fixed('network management information code', 'n', 3),
    90: fixed('original data elements', 'n', 42),
  },
};

const CHARSETS = new Set<Charset>(['n', 'an', 'ans']);

/** A layout with a processor's overrides applied; refuses entries that cannot work. */
export function withOverrides(base: Layout, overrides: unknown): Layout {
  if (!overrides || typeof overrides !== 'object') throw new Error('layout overrides: expected an object');
  const o = overrides as { mtis?: unknown; fields?: Record<string, unknown> };
  const fields: Record<number, FieldSpec> = { ...base.fields };
  for (const [key, value] of Object.entries(o.fields ?? {})) {
    const n = Number(key);
    if (!Number.isInteger(n) || n < 2 || n > 128 || n === 65) throw new Error(`layout overrides: field ${key} is not a data field`);
    if (value === null) {
      delete fields[n];
      continue;
    }
    const f = value as Partial<FieldSpec>;
    const spec = { ...fields[n], ...f } as FieldSpec;
    if (!CHARSETS.has(spec.charset) || ![0, 2, 3].includes(spec.prefix) || !Number.isInteger(spec.length) || spec.length < 1)
      throw new Error(`layout overrides: field ${key} needs charset n|an|ans, prefix 0|2|3 and a positive length`);
    if (spec.prefix && spec.length > (spec.prefix === 2 ? 99 : 999))
      throw new Error(`layout overrides: field ${key} is longer than its prefix allows`);
    fields[n] = { name: spec.name ?? `field ${n}`, charset: spec.charset, length: spec.length, prefix: spec.prefix };
  }
  const mtis = Array.isArray(o.mtis) ? o.mtis.map(String) : base.mtis;
  if (mtis.some((m) => !/^\d{4}$/.test(m))) throw new Error('layout overrides: every MTI is four digits');
  return { mtis, fields };
}

/** The layout of a processor: ISO 8583:1987 with the overrides of a JSON text (ISO8583_LAYOUT, --layout). */
export function loadLayout(json: string): Layout {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (err) {
    throw new Error(`layout overrides: not JSON (${(err as Error).message})`);
  }
  return withOverrides(ISO_1987, parsed);
}
