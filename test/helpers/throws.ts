import assert from 'node:assert/strict';

/** Runs `fn`, which must throw an error of `type` with `code`; returns that error. */
export function thrownWithCode<E extends Error & { code: string }>(
  fn: () => unknown,
  type: abstract new (...args: never[]) => E,
  code: string,
): E {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof type, `expected ${type.name} ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  return caught;
}
