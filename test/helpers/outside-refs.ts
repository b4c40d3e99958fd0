import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** A path in a file that points outside the repository: where it is and what it resolves to. */
export interface OutsideRef {
  file: string;
  line: number;
  ref: string;
  resolved: string;
}

// A relative reference (dot-dot-slash) starts a token: after a quote, a bracket or a space; not after a
// word, a dot or a slash, so prose ellipses and URL paths are not references.
const RELATIVE = /(?<![\w./~-])(?:\.\.\/)+[^\s'"`)\]>*,;]*/g;
const ABSOLUTE = /(?<![\w.:/~-])\/(?:[\w.@+-]+\/)*[\w.@+-]+/g;

/**
 * The temporary directories: what a path there names is scratch a program writes (a test's mkdtemp
 * folder, a screenshot), never a neighbour of the repository, even when the repository itself was
 * cloned there (then every such path is "beside" it). Relative references still catch a sibling's.
 */
const SCRATCH = [...new Set([tmpdir(), '/tmp', '/var/tmp'])];
const isScratch = (p: string) => SCRATCH.some((d) => p === d || p.startsWith(d + '/'));

// made in the repository by npm install (node_modules, and dist by its build): a path into them is
// there even in a checkout where they were not made yet
const GENERATED = ['dist', 'node_modules'];
const there = (root: string, p: string) => existsSync(p) || GENERATED.some((g) => p === join(root, g) || p.startsWith(join(root, g) + sep));

const escapes = (root: string, p: string) => {
  const r = relative(root, p);
  return r === '..' || r.startsWith('..' + sep);
};

/**
 * References in one file's text that leave the repository root: a relative path that resolves outside it
 * (from the file's folder; or, when nothing exists there, from the root, as docs and scripts often mean),
 * or an absolute path into the folder that holds the repository (such as a sibling checkout beside it),
 * outside the temporary directories (SCRATCH).
 */
export function outsideRefs(root: string, file: string, text: string): OutsideRef[] {
  const found: OutsideRef[] = [];
  const parent = dirname(root);
  text.split('\n').forEach((lineText, i) => {
    for (const [ref] of lineText.matchAll(RELATIVE)) {
      const path = ref.replace(/[#?].*$/, ''); // a link's anchor or query is not part of the path
      const fromFile = resolve(dirname(file), path);
      const fromRoot = resolve(root, path);
      const resolved = escapes(root, fromFile) ? fromFile : !there(root, fromFile) && escapes(root, fromRoot) ? fromRoot : null;
      if (resolved) found.push({ file, line: i + 1, ref, resolved });
    }
    for (const [ref] of lineText.matchAll(ABSOLUTE)) {
      if (ref.startsWith(parent + '/') && escapes(root, ref) && !isScratch(ref)) found.push({ file, line: i + 1, ref, resolved: ref });
    }
  });
  return found;
}

// text by extension, or a script without one (.ci/run)
const TEXT = /\.(ts|mts|mjs|cjs|js|json|md|sql|html|css|sh|ya?ml|php|py|txt)$|^[^.]+$/;

/** Every text file under the given folders of the repository (node_modules and build output left out). */
export function repoTextFiles(root: string, dirs: string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.tender')) return [];
      const p = join(dir, name);
      return statSync(p).isDirectory() ? walk(p) : TEXT.test(name) ? [p] : [];
    });
  return dirs
    .map((d) => join(root, d))
    .filter(existsSync)
    .flatMap((p) => (statSync(p).isDirectory() ? walk(p) : [p]));
}

export const readText = (file: string) => readFileSync(file, 'utf8');
