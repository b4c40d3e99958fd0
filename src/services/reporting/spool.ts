import { open, unlink, type FileHandle } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/** How much of the spool one read hands to the client at a time. */
const READ_BYTES = 64 * 1024;

/**
 * A report spooled through a file of its own (docs/security.md "Fair shares"): `source` (a
 * report's COPY) is drained into the file as fast as the database sends it, whatever the client
 * reads, so its report connection goes back to the pool within the seconds the COPY takes; the
 * client reads the file behind it, at its own pace, from the first bytes on. A client that stalls
 * holds a file descriptor and disk, never what another merchant's report needs. The file is
 * unlinked as soon as it is opened (nothing is left behind by a crash) and closed when the
 * download ends however it ends; the download's end also ends the source if still copying.
 */
export function spooled(source: Readable, dir = tmpdir()): Readable {
  let file: FileHandle | undefined;
  let written = 0;
  let readAt = 0;
  let copied = false;
  let wake: (() => void) | undefined;
  const changed = () => wake?.();
  const opened = (async () => {
    const path = join(dir, `tender-report-${randomUUID()}.csv`);
    const f = await open(path, 'w+', 0o600);
    await unlink(path).catch(() => {}); // where an open file cannot be unlinked, it goes at close (below)
    return { f, path };
  })();

  const out = new Readable({
    highWaterMark: READ_BYTES,
    read() {
      void pump();
    },
    destroy(err, done) {
      source.destroy();
      changed();
      opened
        .then(async ({ f, path }) => {
          await f.close().catch(() => {});
          await unlink(path).catch(() => {});
        })
        .catch(() => {})
        .finally(() => done(err));
    },
  });

  let pumping = false;
  /** Hands the client what the file holds beyond what it has had, waiting for the copy when caught up. */
  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      for (;;) {
        if (out.destroyed) return;
        if (readAt < written) {
          const buf = Buffer.allocUnsafe(Math.min(READ_BYTES, written - readAt));
          const { bytesRead } = await file!.read(buf, 0, buf.length, readAt);
          readAt += bytesRead;
          if (!out.push(buf.subarray(0, bytesRead))) return; // read() comes again when the client wants more
        } else if (copied) {
          out.push(null);
          return;
        } else await new Promise<void>((resolve) => (wake = resolve));
      }
    } catch (err) {
      out.destroy(err as Error);
    } finally {
      pumping = false;
    }
  }

  void (async () => {
    try {
      file = (await opened).f;
      for await (const chunk of source) {
        const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
        let at = 0;
        while (at < buf.length) at += (await file.write(buf, at, buf.length - at, written + at)).bytesWritten;
        written += buf.length;
        changed();
        if (out.destroyed) return;
      }
      copied = true;
      changed();
    } catch (err) {
      out.destroy(err as Error);
    }
  })();
  return out;
}
