// The test runner (scripts/test.mjs) says why a file crashed: its summary names a file that failed before
// its first test and prints its error's first line, not only 'test failed'.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { firstErrorLine } from '../../scripts/file-failures.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
// NODE_TEST_CONTEXT would make the inner run report to this one instead of printing its summary.
const { NODE_TEST_CONTEXT: _, ...env } = process.env;
const run = (...files: string[]) =>
  spawnSync(process.execPath, ['scripts/test.mjs', ...files], { cwd: root, encoding: 'utf8', env: { ...env, TEST_CONCURRENCY: '1' } });

test('a file that crashes on import is named with its error in the summary, and the run fails', () => {
  const r = run('test/fixtures/runner/crashes-on-import.ts', 'test/fixtures/runner/passes.ts');
  assert.equal(r.status, 1);
  assert.match(r.stdout, /1 test file\(s\) failed as a whole/);
  assert.match(
    r.stdout,
    /crashes-on-import\.ts \(before its first test\): Error: ENOENT: no such file or directory, open '.*no-such-vectors\.json'/,
  );
  assert.doesNotMatch(r.stdout, /passes\.ts \(/, 'a passing file is not listed');
});

test('a run where every file passes prints no such summary', () => {
  const r = run('test/fixtures/runner/passes.ts');
  assert.equal(r.status, 0);
  assert.doesNotMatch(r.stdout, /failed as a whole/);
});

test("the error's first line is the error message, not the source excerpt or the stack", () => {
  const stderr = [
    'file:///x/a.test.ts:3\n',
    'readFileSync(u);\n',
    '^\n',
    '\n',
    "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/x/b.ts'\n",
    '    at resolve (node:internal)\n',
  ];
  assert.equal(firstErrorLine(stderr), "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/x/b.ts'");
  assert.equal(firstErrorLine(['SyntaxError: Unexpected token (1:2)\n']), 'SyntaxError: Unexpected token (1:2)');
  assert.equal(firstErrorLine(['something odd happened\n']), 'something odd happened');
  assert.equal(firstErrorLine([]), '(no output)');
});
