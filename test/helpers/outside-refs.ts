import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

const escapes = (root: string, p: string) => {
  const r = relative(root, p);
  return r === '..' || r.startsWith('..' + sep);
};

/**
 * References in one file's text that leave the repository root: a relative path that resolves outside it
 * (from the file's folder; or, when nothing exists there, from the root, as docs and scripts often mean),
 * or an absolute path into the folder that holds the repository (such as a sibling checkout beside it).
 */
export function outsideRefs(root: string, file: string, text: string): OutsideRef[] {
  const found: OutsideRef[] = [];
  const parent = dirname(root);
  text.split('\n').forEach((lineText, i) => {
    for (const [ref] of lineText.matchAll(RELATIVE)) {
      const path = ref.replace(/[#?].*$/, ''); // a link's anchor or query is not part of the path
      const fromFile = resolve(dirname(file), path);
      const fromRoot = resolve(root, path);
      const resolved = escapes(root, fromFile) ? fromFile : !existsSync(fromFile) && escapes(root, fromRoot) ? fromRoot : null;
      if (resolved) found.push({ file, line: i + 1, ref, resolved });
    }
    for (const [ref] of lineText.matchAll(ABSOLUTE)) {
      if (ref.startsWith(parent + '/') && escapes(root, ref)) found.push({ file, line: i + 1, ref, resolved: ref });
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
