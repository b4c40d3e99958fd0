import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The import rules of docs/architecture.md, checked on a source tree. Each file belongs to the
 * layer of its first folder under the root (`services/payments.ts` -> services); files at the root
 * are layers of their own by name (`main.ts` -> main, `config.ts` -> config).
 */
export const RULES: Record<string, string[]> = {
  // pure rules and entity types: nothing of ours
  domain: [],
  // settings and logging: read by every layer below main
  config: ['domain'],
  log: [],
  // metrics, traces and the readable console: cross-cutting like log, nothing of ours beneath it
  telemetry: [],
  store: ['domain', 'config', 'log', 'telemetry'],
  acquirer: ['domain', 'telemetry'],
  wallets: ['domain', 'config'],
  services: ['domain', 'store', 'acquirer', 'wallets', 'config', 'log', 'telemetry'],
  // the worker claims rows of the jobs table and runs the services main.ts lists
  jobs: ['services', 'store', 'domain', 'config', 'log', 'telemetry'],
  http: ['services', 'domain', 'config', 'log', 'telemetry'],
  // an entry point like main: opens the store for one-off commands, builds the context through main
  cli: ['main', 'services', 'store', 'acquirer', 'domain', 'config', 'log'],
  // the wiring: everything beneath it (cli, the entry point above it, hands it the command table)
  main: ['domain', 'config', 'log', 'telemetry', 'store', 'acquirer', 'wallets', 'services', 'jobs', 'http'],
};

/**
 * Inside services/ and store/, a folder per capability, lowest first: a file of a group imports only
 * its own group and those beneath it, in either layer (store/db is the store's driver, beneath all).
 */
const GROUPS = [
  'db',
  'platform',
  'vault',
  'threeds',
  'risk',
  'payments',
  'webhooks',
  'wallets',
  'links',
  'reporting',
  'payouts',
  'disputes',
  'portal',
];
const GROUPED = new Set(['services', 'store']);

/** The capability folder of a file in services/ or store/ (`services/vault/cards.ts` -> vault). */
function groupOf(root: string, file: string): string | undefined {
  const parts = relative(root, file).split(sep);
  return GROUPED.has(parts[0]) && parts.length > 2 ? parts[1] : undefined;
}

export interface Problem {
  file: string;
  message: string;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Relative specifiers of `import ... from`, `export ... from`, `import '...'` and `import('...')`. */
export function specifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) if (m[1].startsWith('.')) found.push(m[1]);
  return found;
}

function layerOf(root: string, file: string): string {
  const [first, ...rest] = relative(root, file).split(sep);
  return rest.length ? first : first.replace(/\.ts$/, '');
}

/** A statement sent to the database: `q.query(...)`, `db.exec(...)`, `ctx.db.query<Row>(...)`. */
const RUNS_SQL = /\b(?:q|db|client|pool)\.(?:query|exec)\s*(?:<[^>]*>)?\(/;

/** Every broken rule, every import cycle and every SQL statement outside store/ under `root` (a src/ tree). */
export function checkImports(root: string): Problem[] {
  root = resolve(root);
  const files = sources(root);
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  const problems: Problem[] = [];
  for (const file of files) {
    const from = layerOf(root, file);
    const name = relative(root, file);
    if (!(from in RULES)) problems.push({ file: name, message: `${from} is not a known layer` });
    const group = groupOf(root, file);
    if (GROUPED.has(from) && (group === undefined || !GROUPS.includes(group) || (from === 'services' && group === 'db')))
      problems.push({
        file: name,
        message: `${from}/ files live in a capability folder (${GROUPS.filter((g) => from === 'store' || g !== 'db').join(', ')})`,
      });
    const targets: string[] = [];
    const text = readFileSync(file, 'utf8');
    if (from !== 'store' && RUNS_SQL.test(text))
      problems.push({ file: name, message: `${from} runs SQL: every statement belongs in store/` });
    for (const spec of specifiers(text)) {
      const target = resolve(dirname(file), spec);
      if (!known.has(target)) {
        if (!target.startsWith(root + sep)) problems.push({ file: name, message: `imports ${spec}, outside the source tree` });
        continue; // assets and generated files are not part of the graph
      }
      targets.push(target);
      const to = layerOf(root, target);
      if (to !== from && !(RULES[from] ?? []).includes(to))
        problems.push({ file: name, message: `${from} may not import ${to} (${spec})` });
      const toGroup = groupOf(root, target);
      if (group && toGroup && GROUPS.indexOf(toGroup) > GROUPS.indexOf(group))
        problems.push({ file: name, message: `${from}/${group} may not import ${to}/${toGroup}, a group above it (${spec})` });
    }
    edges.set(file, targets);
  }
  for (const cycle of cycles(edges))
    problems.push({ file: relative(root, cycle[0]), message: `import cycle: ${cycle.map((f) => relative(root, f)).join(' -> ')}` });
  return problems;
}

/** One cycle per strongly connected group of files (Tarjan), as a path back to its start. */
function cycles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(pathWithin(edges, new Set(group), v));
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** A path from `start` back to itself through the group, found breadth first. */
function pathWithin(edges: Map<string, string[]>, group: Set<string>, start: string): string[] {
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = prev.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(w)) {
        prev.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
