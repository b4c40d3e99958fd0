#!/usr/bin/env node
// Entry for `npx tender` and `npm start`. Runs the compiled JavaScript in dist/ (built by `npm install`
// or `npm run build`) while it holds the current sources; otherwise the TypeScript sources through tsx,
// so an edit is never silently ignored. TENDER_RUN=src|dist forces one; TENDER_BUILD_DIR names another
// build (as scripts/build.mjs does).
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { newestSource } from '../scripts/sources.mjs';

const dist = process.env.TENDER_BUILD_DIR ? pathToFileURL(process.env.TENDER_BUILD_DIR + '/') : new URL('../dist/', import.meta.url);
const src = new URL('../src/', import.meta.url);

function distIsCurrent() {
  const stamp = new URL('BUILD.json', dist);
  if (!existsSync(stamp)) return false;
  const built = JSON.parse(readFileSync(stamp, 'utf8'));
  return built.sources >= newestSource(src.pathname);
}

const mode = process.env.TENDER_RUN ?? (distIsCurrent() ? 'dist' : 'src');
if (mode === 'dist') {
  await import(new URL('cli/index.js', dist).href);
} else {
  if (existsSync(dist) && !process.env.TENDER_RUN) {
    process.stderr.write('tender: the sources changed since the last build; running them through tsx (npm run build compiles them)\n');
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('cli/index.ts', src).href);
}
