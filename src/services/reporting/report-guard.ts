import { Transform, pipeline, type Readable } from 'node:stream';

/**
 * The limits of one CSV download (docs/security.md "Fair shares"): a client that reads nothing
 * for `readTimeoutMs` while the report waits for it, or a download still going after `maxMs`, is
 * cut off. The report's stream is destroyed, which ends its COPY and its transaction and frees
 * its report connection (or stops the batch reader on PGlite): a stalled client can no longer
 * hold what every merchant's reports need. `onEnd` runs once, however the download ends.
 */
export function guardedReport(
  source: Readable,
  o: { readTimeoutMs: number; maxMs: number; onEnd: () => void; onCut: (why: string) => void },
): Readable {
  let bytesIn = 0;
  let consumed = -1;
  let lastProgress = Date.now();
  const meter = new Transform({
    transform(chunk: Buffer | string, _enc, done) {
      bytesIn += chunk.length;
      done(null, chunk);
    },
  });
  const cut = (why: string) => {
    if (meter.destroyed) return;
    o.onCut(why);
    meter.destroy(new Error(why));
  };
  // what the client has taken: what came in less what still waits to be read
  const watch = setInterval(
    () => {
      const now = Date.now();
      const taken = bytesIn - meter.readableLength;
      if (taken !== consumed || meter.readableLength === 0) {
        consumed = taken;
        lastProgress = now;
      } else if (now - lastProgress >= o.readTimeoutMs) cut(`the client read nothing for ${o.readTimeoutMs} ms`);
    },
    Math.max(50, Math.min(1000, o.readTimeoutMs / 4)),
  );
  const total = setTimeout(() => cut(`the report ran longer than ${o.maxMs / 1000} s`), o.maxMs);
  watch.unref();
  total.unref();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(watch);
    clearTimeout(total);
    o.onEnd();
  };
  meter.once('close', end);
  pipeline(source, meter, () => end());
  return meter;
}
