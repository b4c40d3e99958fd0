#!/usr/bin/env node
// Makes the PGlite cluster a fresh data directory starts from: `node scripts/pglite-template.mjs BUILD_DIR`
// creates BUILD_DIR/pglite-template with PGlite's initdb and applies the build's migrations, using the
// compiled store code. store/open.ts copies it into an empty data directory (a fraction of a second,
// where initdb takes several); migrations added later apply on top as usual. Run by scripts/build.mjs.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const out = process.argv[2];
if (!out) throw new Error('usage: pglite-template.mjs BUILD_DIR');
const dir = join(out, 'pglite-template');
rmSync(dir, { recursive: true, force: true });
const { pgliteDb } = await import(pathToFileURL(join(out, 'store', 'db', 'lite.js')).href);
const { migrate } = await import(pathToFileURL(join(out, 'store', 'db', 'migrate.js')).href);
const db = await pgliteDb(dir);
await migrate(db);
await db.exec('CHECKPOINT');
await db.close();
