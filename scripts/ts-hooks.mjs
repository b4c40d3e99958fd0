// Module hooks that run this project's TypeScript for the test runner, lighter than tsx: every
// relative import here names its .ts file, so only .ts files are touched (stripped of their types
// by TypeScript's transpileModule, kept in a cache by content, so it runs only for a changed file) and every other module resolves as node resolves it.
// tsx's resolver ran on every import, node_modules included: about a CPU second per test file.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// tsconfig.json's settings, as ES modules with the source map inline (stack traces name .ts lines)
const OPTIONS = { target: 'es2022', module: 'esnext', esModuleInterop: true, inlineSourceMap: true, inlineSources: true };
let ts; // loaded on the first file not in the cache
const cache = join(tmpdir(), `tender-ts-${process.getuid?.() ?? 0}`);
mkdirSync(cache, { recursive: true });

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const file = fileURLToPath(url);
  const source = readFileSync(file, 'utf8');
  const key = join(cache, createHash('sha1').update(file).update('\0').update(source).digest('hex') + '.js');
  let code;
  try {
    code = readFileSync(key, 'utf8');
  } catch {
    ts ??= (await import('typescript')).default;
    code = ts.transpileModule(source, { compilerOptions: OPTIONS, fileName: file }).outputText;
    const part = `${key}.${process.pid}`;
    writeFileSync(part, code);
    renameSync(part, key);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
