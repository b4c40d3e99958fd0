import { Writable } from 'node:stream';

/**
 * Log lines for a person at a terminal (`npm start` on a TTY; LOG_FORMAT=json keeps JSON): one
 * line per request, `10:41:07 POST /v1/orders/ 201 12 ms 4bf92f35...`, nothing for a static asset
 * that was served, and other messages as `time LEVEL message key=value`. pino writes its JSON
 * lines here; each is read back and printed in its short form. What pino masked stays masked:
 * this only formats what log.ts already wrote.
 */
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, or that the short form shows in its own way. */
const SHOWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'service', 'reqId', 'trace_id', 'req', 'res', 'responseTime', 'asset']);

const clock = (t: unknown) => {
  const d = new Date(typeof t === 'number' ? t : Date.now());
  return d.toTimeString().slice(0, 8);
};

const value = (v: unknown) => (typeof v === 'string' ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v));

/** One JSON log line in its short form; undefined when it is not printed (a static asset served). */
function readableLine(json: string): string | undefined {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.trimEnd();
  }
  const level = LEVELS[o.level as number] ?? String(o.level);
  const req = o.req as { method?: string; url?: string } | undefined;
  const res = o.res as { statusCode?: number } | undefined;
  if (req && res?.statusCode !== undefined && o.responseTime !== undefined) {
    if (o.asset && res.statusCode < 400) return undefined;
    const ms = Math.round(Number(o.responseTime));
    const mark = res.statusCode >= 500 ? ' ERROR' : res.statusCode >= 400 ? ' !' : '';
    return `${clock(o.time)} ${req.method} ${req.url} ${res.statusCode} ${ms} ms ${o.reqId ?? ''}${mark}`.trimEnd();
  }
  const extra = Object.entries(o)
    .filter(([k]) => !SHOWN.has(k))
    .map(([k, v]) => `${k}=${value(v)}`);
  const id = o.trace_id ?? o.reqId;
  return [clock(o.time), level, o.msg ?? '', ...extra, id ? `(${id})` : ''].filter((s) => s !== '').join(' ');
}

/** A pino destination printing readableLine of each line to `out`. */
export function readableConsole(out: NodeJS.WritableStream = process.stdout): Writable {
  let rest = '';
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      const text = lines
        .map(readableLine)
        .filter((l) => l !== undefined)
        .map((l) => l + '\n')
        .join('');
      if (text) out.write(text);
      done();
    },
  });
}

/** LOG_FORMAT, else readable on a terminal and JSON otherwise. */
export const readableWanted = (format: string | undefined, isTty: boolean | undefined) =>
  format === 'pretty' || (format !== 'json' && Boolean(isTty));
