import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/**
 * The repository paths a document or a code comment names, and those of them that do not exist.
 *
 * What counts as a path (nothing else is looked at):
 * - a token that starts with one of the repository's top folders (`src/`, `test/`, `docs/`, ...)
 *   or, as the docs and comments write files inside `src/`, with a layer of it (`services/`,
 *   `store/`, ...), then more segments of letters, digits, `_`, `.`, `-`, and ends in a file's
 *   extension or a `/` (a folder): `src/services/payments/attempts/inquiry.ts`, `store/db/writes.ts`,
 *   `test/e2e/`. Prose such as "test/live" has neither and is not a path;
 * - it starts a token: not after a letter, a digit, `.`, `/`, `:`, `@` or `-`, so a URL
 *   (`https://host/src/x.ts`) or an API route (`/v1/test/cards/`) is not a path;
 * - a pattern or placeholder (`*`, `{`, `<`, `$` right after it: `migrations/*.sql`,
 *   `docs/{name}.md`) is not a path;
 * - in markdown, a link's relative target (`[money](money.md#recovery)`), from the document's folder.
 * A layer path is found under `src/` (or at the root); what npm makes (dist/, node_modules/) is taken as there.
 */

const TOP = ['src', 'test', 'docs', 'scripts', 'bench', 'bin', 'ops', '.ci', 'dist', 'node_modules'];
const LAYERS = ['domain', 'services', 'store', 'acquirer', 'http', 'jobs', 'cli', 'telemetry', 'wallets'];
const GENERATED = ['dist/', 'node_modules/'];

const escape = (s: string) => s.replace(/[.]/g, '\\.');
const PATH = new RegExp(
  `(?<![\\w./:@-])((?:${[...TOP, ...LAYERS].map(escape).join('|')})/(?:[\\w.-]+/)*(?:[\\w-]+(?:\\.[\\w-]+)*\\.[a-z][a-z0-9]*|))(?![\\w*{<$/-])`,
  'g',
);
const LINK = /\]\(([^)\s]+)\)/g;

export interface NamedPath {
  /** as written */
  path: string;
  /** 1-based line in the file */
  line: number;
}

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Every path (as above) in a piece of text; `offset` is where the text starts in its file (for line numbers). */
function namedPaths(text: string, whole = text, offset = 0): NamedPath[] {
  return [...text.matchAll(PATH)].map((m) => ({ path: m[1], line: lineAt(whole, offset + m.index) }));
}

/** The relative targets of a markdown document's links, anchors dropped. */
function linkTargets(text: string): NamedPath[] {
  return [...text.matchAll(LINK)]
    .filter((m) => !/^[a-z][a-z0-9+.-]*:/i.test(m[1]) && !m[1].startsWith('#') && !m[1].startsWith('/'))
    .map((m) => ({ path: m[1].split('#')[0], line: lineAt(text, m.index) }))
    .filter((p) => p.path !== '');
}

/** The comments of a TypeScript or JavaScript source, with where each starts (from the compiler's parse: strings, templates and regexes are not comments). */
export function commentsOf(source: string, name = 'file.ts'): { text: string; at: number }[] {
  const file = ts.createSourceFile(name, source, ts.ScriptTarget.Latest, false);
  const seen = new Map<number, string>();
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) seen.set(r.pos, source.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(source, node.getFullStart()));
    take(ts.getTrailingCommentRanges(source, node.getEnd()));
    for (const child of node.getChildren(file)) visit(child);
  };
  visit(file);
  return [...seen].sort((x, y) => x[0] - y[0]).map(([at, text]) => ({ text, at }));
}

const exists = (root: string, p: string) => GENERATED.some((g) => p.startsWith(g)) || existsSync(join(root, p));

/** The paths named in one file that do not exist: a document's text (`.md`) or a source's comments. */
export function missingPaths(root: string, file: string, text: string): NamedPath[] {
  const found: NamedPath[] = [];
  if (file.endsWith('.md')) {
    for (const p of namedPaths(text)) if (!exists(root, p.path) && !exists(root, `src/${p.path}`)) found.push(p);
    const from = dirname(file);
    for (const p of linkTargets(text)) if (!existsSync(join(root, from, p.path))) found.push(p);
  } else {
    for (const c of commentsOf(text, file))
      for (const p of namedPaths(c.text, text, c.at)) if (!exists(root, p.path) && !exists(root, `src/${p.path}`)) found.push(p);
  }
  return found;
}
