// The paths the docs, the README and the comments in src/ name exist: a file moved or renamed
// takes its mentions with it. What counts as a path is test/helpers/repo-paths.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { commentsOf, missingPaths } from '../helpers/repo-paths.ts';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });

/** Paths of other projects, quoted as they are there (not this repository's). */
const NOT_OURS: Record<string, string[]> = {
  // the PHP SDK's own test suite, run from the SDK's checkout
  'docs/compatibility.md': ['src/Tests/OrderTestSuite.php'],
};

test('every repository path named in docs/*.md, README.md and the comments in src/ exists', () => {
  const docs = [
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'README.md',
  ];
  const sources = walk(join(root, 'src'))
    .map((f) => f.slice(root.length + 1))
    .filter((f) => /\.(ts|mts|js|mjs)$/.test(f));
  assert.ok(docs.length > 20 && sources.length > 150, `scanned ${docs.length} docs, ${sources.length} sources`);
  const missing = [...docs, ...sources].flatMap((f) =>
    missingPaths(root, f, readFileSync(join(root, f), 'utf8'))
      .filter((p) => !NOT_OURS[f]?.includes(p.path))
      .map((p) => `${f}:${p.line} ${p.path}`),
  );
  assert.deepEqual(missing, [], 'these paths do not exist (moved or renamed?): point them at the files as they are now');
});

const missingIn = (file: string, text: string) => missingPaths(root, file, text).map((p) => p.path);

test('what counts as a path: repository and layer paths ending in a file or a folder', () => {
  const doc = 'see `src/services/payments/foo.ts`, test/e2e/bar.test.ts, store/payments/nowhere.ts and (docs/gone/)';
  assert.deepEqual(missingIn('docs/x.md', doc), [
    'src/services/payments/foo.ts',
    'test/e2e/bar.test.ts',
    'store/payments/nowhere.ts',
    'docs/gone/',
  ]);
  // paths that exist, written from the root or from src/, files and folders
  assert.deepEqual(
    missingIn('docs/x.md', 'src/acquirer/iso8583/checks.ts, services/payments/attempts/inquiry.ts, store/db/, `test/unit/`.'),
    [],
  );
  // a markdown link's target, from the document's folder
  assert.deepEqual(missingIn('docs/x.md', '[money](money.md#recovery), [gone](nowhere.md#x), [web](https://example.com/a.md)'), [
    'nowhere.md',
  ]);
});

test('not paths: URLs, API routes, prose, patterns and placeholders, and what npm makes', () => {
  const doc = [
    'https://github.com/owner/repo/blob/main/src/services/foo.ts',
    'GET /v1/test/cards/ and POST /v1/orders/{id}/captures/',
    'a test/live project, cards stored/sealed',
    'src/store/migrations/*.sql, docs/{name}.md, test/e2e/<name>.test.ts, src/$file.ts',
    'dist/cli/index.js, node_modules/pkg/index.js',
    'user@host:src/remote.ts',
  ].join('\n');
  assert.deepEqual(missingIn('docs/x.md', doc), []);
});

test("in source files only comments count, found by the compiler's scanner (strings, templates and regexes are not comments)", () => {
  const source = [
    "const a = 'src/not/a/comment.ts'; // but src/services/gone.ts is",
    'const b = `${a} // store/in-template.ts`;',
    'const re = /store\\/in-regex.ts/;',
    '/** names store/in-block.ts on',
    ' * line 5 too: test/e2e/also-gone.test.ts */',
    'const c = b.replace(re, "x") / 2; // store/after-division.ts',
  ].join('\n');
  assert.deepEqual(
    commentsOf(source).map((c) => c.text.slice(0, 12)),
    ['// but src/s', '/** names st', '// store/aft'],
  );
  assert.deepEqual(
    missingPaths(root, 'src/x.ts', source).map((p) => `${p.line} ${p.path}`),
    ['1 src/services/gone.ts', '4 store/in-block.ts', '5 test/e2e/also-gone.test.ts', '6 store/after-division.ts'],
  );
});
