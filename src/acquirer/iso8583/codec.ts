import { ISO_1987, type FieldSpec, type Layout } from './layout.ts';

/**
 * ISO 8583 messages to bytes and back: an ASCII MTI, a binary primary bitmap (and the secondary
 * when a field above 64 is present), then the fields in order, in ASCII, as the layout says.
 * On the wire each message follows a 2-byte big-endian length header (frame / Deframer).
 */

export interface Message {
  mti: string;
  /** field number -> value as it travels (without the length prefix) */
  fields: Record<number, string>;
}

/** Bad bytes or values: the message is refused, with what was wrong. */
export class Iso8583Error extends Error {
  override name = 'Iso8583Error';
}

const PATTERN: Record<FieldSpec['charset'], RegExp> = {
  n: /^[0-9]*$/,
  an: /^[A-Za-z0-9 ]*$/,
  // printable ASCII
  ans: /^[\x20-\x7e]*$/,
};

/** The value of a field as it travels: fixed n left-padded with zeros, fixed an/ans right-padded with spaces. */
function fieldText(n: number, spec: FieldSpec, raw: string): string {
  let v = raw;
  if (spec.prefix === 0 && v.length < spec.length) v = spec.charset === 'n' ? v.padStart(spec.length, '0') : v.padEnd(spec.length, ' ');
  if (v.length > spec.length) throw new Iso8583Error(`field ${n} (${spec.name}): ${v.length} characters, at most ${spec.length}`);
  if (!PATTERN[spec.charset].test(v)) throw new Iso8583Error(`field ${n} (${spec.name}): not ${spec.charset}`);
  return spec.prefix ? String(v.length).padStart(spec.prefix, '0') + v : v;
}

export function encode(msg: Message, layout: Layout = ISO_1987): Buffer {
  if (!layout.mtis.includes(msg.mti)) throw new Iso8583Error(`unknown MTI ${JSON.stringify(msg.mti)}`);
  const numbers = Object.keys(msg.fields)
    .map(Number)
    .sort((a, b) => a - b);
  const secondary = numbers.some((n) => n > 64);
  const bitmap = Buffer.alloc(secondary ? 16 : 8);
  if (secondary) bitmap[0] |= 0x80;
  const parts: string[] = [];
  for (const n of numbers) {
    const spec = layout.fields[n];
    if (!spec || n === 1 || n === 65) throw new Iso8583Error(`field ${n} is not in the layout`);
    bitmap[(n - 1) >> 3] |= 0x80 >> ((n - 1) & 7);
    parts.push(fieldText(n, spec, msg.fields[n]));
  }
  return Buffer.concat([Buffer.from(msg.mti, 'ascii'), bitmap, Buffer.from(parts.join(''), 'ascii')]);
}

export function decode(body: Buffer, layout: Layout = ISO_1987): Message {
  if (body.length < 12) throw new Iso8583Error(`message of ${body.length} bytes: shorter than an MTI and a bitmap`);
  const mti = body.subarray(0, 4).toString('latin1');
  if (!/^\d{4}$/.test(mti) || !layout.mtis.includes(mti)) throw new Iso8583Error(`unknown MTI ${JSON.stringify(mti)}`);
  const secondary = (body[4] & 0x80) !== 0;
  const mapEnd = secondary ? 20 : 12;
  if (body.length < mapEnd) throw new Iso8583Error('message ends inside its secondary bitmap');
  const bitmap = body.subarray(4, mapEnd);
  const fields: Record<number, string> = {};
  let at = mapEnd;
  const take = (n: number, count: number, what: string) => {
    if (at + count > body.length) throw new Iso8583Error(`field ${n}: message ends inside its ${what}`);
    const text = body.subarray(at, at + count).toString('latin1');
    at += count;
    return text;
  };
  for (let n = 2; n <= bitmap.length * 8; n++) {
    if (n === 65 || !(bitmap[(n - 1) >> 3] & (0x80 >> ((n - 1) & 7)))) continue;
    const spec = layout.fields[n];
    if (!spec) throw new Iso8583Error(`field ${n} is present but not in the layout`);
    let len = spec.length;
    if (spec.prefix) {
      const prefix = take(n, spec.prefix, 'length prefix');
      if (!/^\d+$/.test(prefix)) throw new Iso8583Error(`field ${n} (${spec.name}): length prefix ${JSON.stringify(prefix)} is not digits`);
      len = Number(prefix);
      if (len > spec.length) throw new Iso8583Error(`field ${n} (${spec.name}): ${len} characters, at most ${spec.length}`);
    }
    const value = take(n, len, 'value');
    if (!PATTERN[spec.charset].test(value)) throw new Iso8583Error(`field ${n} (${spec.name}): not ${spec.charset}`);
    fields[n] = value;
  }
  if (at !== body.length) throw new Iso8583Error(`${body.length - at} bytes after the last field`);
  return { mti, fields };
}

/** The largest message either side accepts; a header above it is a broken stream. */
const MAX_MESSAGE = 8192;

/** A message behind its 2-byte big-endian length header. */
export function frame(body: Buffer): Buffer {
  if (body.length > MAX_MESSAGE) throw new Iso8583Error(`message of ${body.length} bytes: longer than ${MAX_MESSAGE}`);
  const head = Buffer.alloc(2);
  head.writeUInt16BE(body.length);
  return Buffer.concat([head, body]);
}

/**
 * Cuts a TCP stream into message bodies. A zero or oversized length header means the stream can
 * no longer be trusted: push() throws, and the connection is closed by whoever reads it.
 */
export class Deframer {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: Buffer[] = [];
    while (this.pending.length >= 2) {
      const len = this.pending.readUInt16BE(0);
      if (len === 0 || len > MAX_MESSAGE) throw new Iso8583Error(`length header ${len}: not a message length (1..${MAX_MESSAGE})`);
      if (this.pending.length < 2 + len) break;
      out.push(this.pending.subarray(2, 2 + len));
      this.pending = this.pending.subarray(2 + len);
    }
    return out;
  }
}

/** The MTI of the answer to a request (0100 -> 0110, 0401 -> 0410). */
export function answerMti(mti: string): string {
  if (mti === '0401') return '0410';
  return mti.slice(0, 2) + String(Number(mti[2]) + 1) + '0';
}
