// The repository stands alone: a fresh clone has nothing beside it, so no code, test, script, benchmark
// or document may read or link to a path outside the repository root.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { outsideRefs, readText, repoTextFiles } from '../helpers/outside-refs.ts';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const up = '..' + '/'; // written apart so this file's own examples are not findings

test('no file under src, test, scripts, bench, bin, docs or .ci refers to a path outside the repository', () => {
  const files = repoTextFiles(root, ['src', 'test', 'scripts', 'bench', 'bin', 'docs', '.ci', 'README.md', 'package.json']);
  assert.ok(files.length > 100, `scanned only ${files.length} files`);
  for (const f of ['.ci/run', 'bin/tender.mjs', 'scripts/compat/ginger-php.php'])
    assert.ok(files.includes(join(root, f)), `${f} is scanned`);
  const found = files.flatMap((f) => outsideRefs(root, f, readText(f)));
  assert.deepEqual(
    found.map((r) => `${r.file.slice(root.length + 1)}:${r.line} ${r.ref}`),
    [],
    'these references leave the repository (copy what is needed into it instead)',
  );
});

test('the check finds references that leave the repository', () => {
  const file = join(root, 'test', 'unit', 'example.test.ts');
  const refs = (text: string) => outsideRefs(root, file, text).map((r) => r.ref);
  // relative to the file: three levels up from test/unit leaves the root
  assert.deepEqual(refs(`readFileSync(new URL('${up}${up}${up}shared/vectors/keys.json', import.meta.url))`), [
    `${up}${up}${up}shared/vectors/keys.json`,
  ]);
  // relative to the root, as docs mean it: nothing by that name beside the file, one level up from the root
  assert.deepEqual(refs(`see \`${up}shared/DESIGN.md\``), [`${up}shared/DESIGN.md`]);
  // an absolute path into the folder that holds the repository (a checkout's root chosen here, so
  // the case holds wherever this one was cloned)
  const elsewhere = '/srv/checkouts/tender';
  const sibling = '/srv/checkouts/shared/DESIGN.md';
  assert.deepEqual(
    outsideRefs(elsewhere, join(elsewhere, 'test', 'unit', 'example.test.ts'), `const design = '${sibling}';`).map((r) => r.ref),
    [sibling],
  );
});

test('the check leaves references inside the repository alone', () => {
  const file = join(root, 'test', 'unit', 'example.test.ts');
  const refs = (text: string) => outsideRefs(root, file, text);
  assert.deepEqual(refs(`import { x } from '${up}${up}src/config.ts';`), []);
  assert.deepEqual(refs(`new URL('${up}fixtures/wallet-b/ecv2-tink-test-keys.json', import.meta.url)`), []);
  assert.deepEqual(refs(`POST .${up}captures/ and /v1/orders/{id}/${up}x`), []); // prose and URL paths
  assert.deepEqual(refs(`const dir = '${join(root, 'docs')}';`), []);
  assert.deepEqual(refs(`mkdtempSync('/tmp/tender-test-')`), []);
  // cloned straight under /tmp, the tests' scratch paths there are still not neighbours
  const inTmp = '/tmp/tender';
  const scratch = (text: string) => outsideRefs(inTmp, join(inTmp, 'test', 'unit', 'example.test.ts'), text);
  assert.deepEqual(scratch(`mkdtempSync('/tmp/tender-test-')`), []);
  assert.deepEqual(scratch(`page.screenshot({ path: '/tmp/checkout.png' })`), []);
  const doc = join(root, 'docs', 'design.md');
  assert.deepEqual(outsideRefs(root, doc, `[the picture](${up}README.md#architecture)`), []); // an anchor is not a path
});
