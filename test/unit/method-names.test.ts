// Payment methods have one home, src/domain/payment-methods.ts: the rest of src/ names a method
// through its constants and rules (CARD, isWallet, methodInfo(m).kind), never by its string, so a
// method is added, renamed or given a rule in one place.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import ts from 'typescript';
import { PAYMENT_METHODS } from '../../src/domain/payment-methods.ts';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const HOME = 'src/domain/payment-methods.ts';
// `amex` is also a card brand (what a card is, not how it is paid): brand checks keep it
const BRANDS = new Set(['amex']);
const names = PAYMENT_METHODS.filter((m) => !BRANDS.has(m));

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });

/** Each string literal equal to a method's name, and each SQL literal `'name'` inside a template. */
function spelled(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, name: string) =>
    found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} '${name}'`);
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (names.includes(node.text as never)) at(node, node.text);
      else for (const n of names) if (node.text.includes(`'${n}'`)) at(node, n);
    } else if (ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      for (const n of names) if (node.text.includes(`'${n}'`)) at(node, n);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

test('no method name is spelled in src/ outside the methods registry', () => {
  const files = walk(join(root, 'src'))
    .map((f) => f.slice(root.length + 1))
    .filter((f) => f.endsWith('.ts') && f !== HOME);
  assert.ok(files.length > 150, `scanned ${files.length} sources`);
  const found = files.flatMap((f) => spelled(f, readFileSync(join(root, f), 'utf8')));
  assert.deepEqual(found, [], `name these through ${HOME} (CARD, WALLET_A, WALLET_B, isWallet, methodInfo)`);
});

test('the check finds a method spelled in code, in a SQL template and as an object key', () => {
  const sample = [
    "const a = m === 'credit-card';",
    "const b = sql`SELECT 1 WHERE method = 'ideal' AND x = ${1}`;",
    "const c = { 'wallet-b-pay': 1 };",
    "const d = card.brand === 'amex';",
  ].join('\n');
  assert.deepEqual(
    spelled('sample.ts', sample).map((s) => s.replace(/^sample\.ts:\d+ /, '')),
    ["'credit-card'", "'ideal'", "'wallet-b-pay'"],
  );
});
