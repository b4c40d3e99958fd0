/**
 * A JSON body as the tests, benchmarks and cluster scripts read it: loosely, field by field, each
 * read checked by the assertion or the use that follows. The product's code types its JSON; only
 * here does `any` stand for it (docs/decisions.md, "Where any is left").
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a response body read loosely by a test; its assertions check its shape
export type Json = any;
