// The newest modification time of the files under src/: compared with dist/BUILD.json to tell whether
// the compiled output still holds the sources (a stat per file, a few milliseconds).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function newestSource(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}
