#!/usr/bin/env node
// Compiles src/ to dist/ with tsc (tsconfig.build.json) and copies the files the code reads at run time
// (SQL migrations, page assets: everything under src/ that is not TypeScript), so `npm start` runs plain
// JavaScript; then makes the migrated PGlite cluster that fresh data directories start from
// (pglite-template.mjs). Run by `npm install` (prepare) and `npm run build`. Without TypeScript installed
// (`npm ci --omit=dev`) it builds nothing and `tender` runs the sources through tsx instead.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newestSource } from './sources.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const out = process.env.TENDER_BUILD_DIR ?? join(root, 'dist');

let tsc;
try {
  // The package exports no bin path, so find the package and take its declared tsc.
  const pkg = createRequire(import.meta.url).resolve('typescript/package.json');
  tsc = join(dirname(pkg), JSON.parse(readFileSync(pkg, 'utf8')).bin.tsc);
} catch {
  console.warn('tender build: TypeScript is not installed; `tender` will run the sources through tsx');
  process.exit(0);
}

const startedAt = Date.now();
rmSync(out, { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

const assets = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? assets(p) : e.name.endsWith('.ts') ? [] : [p];
  });
for (const file of assets(src)) {
  const to = join(out, relative(src, file));
  mkdirSync(dirname(to), { recursive: true });
  cpSync(file, to);
}
// The migrated PGlite cluster a fresh data directory starts from (a copy takes well under a second; initdb several).
// Without it fresh data directories are made by PGlite's initdb, as when running the sources: a warning, not a failed build.
const t = spawnSync(process.execPath, [join(root, 'scripts', 'pglite-template.mjs'), out], { stdio: 'inherit' });
if (t.status !== 0) {
  rmSync(join(out, 'pglite-template'), { recursive: true, force: true });
  console.warn('tender build: no PGlite template (see above); fresh data directories will be made by initdb');
}
// The stamp says which sources this build holds: bin/tender.mjs runs dist only while no source is newer.
writeFileSync(join(out, 'BUILD.json'), JSON.stringify({ sources: newestSource(src), built: startedAt }) + '\n');
console.log(`tender build: ${relative(root, out) || out} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
