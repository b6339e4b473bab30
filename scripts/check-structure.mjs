#!/usr/bin/env node
// The folder rules of packages/server/src, checked by reading import lines (no type information
// needed, so it runs in well under a second). Each top-level folder under src/ is a node of one
// graph; files directly in src/ (main.ts, context.ts, app.ts, ...) are the composition and may
// import anything, so they are not nodes. Test files are left out: a test may set up another
// folder's rows. The rules:
//   (a) no cycle between folders;
//   (b) the infrastructure folders import no feature folder (INFRASTRUCTURE below; config/ and
//       adapters/ among them);
//   (c) Kysely builder calls and sql`` appear only in *.repo.ts, db/ (migrations included).
// Prints each violation as file:line and exits 1, or one line "structure OK".
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// A folder given as the argument is checked instead (to try the rules on a copy).
const src = resolve(process.argv[2] ?? join(root, 'packages/server/src'));

/** Folders that know no product area: they may import each other, never a feature. */
const INFRASTRUCTURE = new Set([
  'adapters',
  'config',
  'crypto',
  'db',
  'http',
  'jobs',
  'mail',
  'metrics',
  'util',
]);

const isTest = (file) => /\.test\.ts$/.test(file);

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The top-level folder under src/ of a path, or null for files directly in src/ (or outside). */
function folderOf(path) {
  const parts = relative(src, path).split(sep);
  if (parts[0] === '..' || parts.length < 2) return null;
  return parts[0];
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
const SQL_BUILDER =
  /\.(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(|\bsql(?:<[^>]*>)?`|\bsql\.(?:raw|ref|table|id|lit|join|val)\s*\(/g;

const lineOf = (text, index) => text.slice(0, index).split('\n').length;

const violations = [];
/** folder → folder → first import seen (for the message) */
const edges = new Map();

for (const file of walk(src)) {
  if (isTest(file)) continue;
  const text = readFileSync(file, 'utf8');
  const rel = relative(file.startsWith(root) ? root : process.cwd(), file);
  const from = folderOf(file);
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (!spec.startsWith('.')) continue;
    const to = folderOf(resolve(dirname(file), spec));
    if (!from || !to || from === to) continue;
    const where = `${rel}:${lineOf(text, match.index + match[0].indexOf(spec))}`;
    if (INFRASTRUCTURE.has(from) && !INFRASTRUCTURE.has(to)) {
      violations.push(`${where}: ${from}/ imports the feature ${to}/ (${spec})`);
      // Reported here; left out of the graph so the cycles below are the ones it does not explain.
      continue;
    }
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, where);
  }
  const sqlAllowed = file.endsWith('.repo.ts') || from === 'db';
  if (!sqlAllowed) {
    for (const match of text.matchAll(SQL_BUILDER)) {
      violations.push(
        `${rel}:${lineOf(text, match.index)}: SQL builder ${match[0].trim()} outside *.repo.ts and db/`,
      );
    }
  }
}

// (a) Cycles: Tarjan's strongly connected components over the folder graph; each component of
// more than one folder is reported with the imports that close it.
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
let counter = 0;
const components = [];
function connect(node) {
  index.set(node, counter);
  low.set(node, counter);
  counter += 1;
  stack.push(node);
  onStack.add(node);
  for (const next of edges.get(node)?.keys() ?? []) {
    if (!index.has(next)) {
      connect(next);
      low.set(node, Math.min(low.get(node), low.get(next)));
    } else if (onStack.has(next)) {
      low.set(node, Math.min(low.get(node), index.get(next)));
    }
  }
  if (low.get(node) === index.get(node)) {
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const node of [...edges.keys()].sort()) if (!index.has(node)) connect(node);
// Each component is reported as its shortest cycles, one per folder, with the import lines that
// close them (the component itself can be large while the cycles that make it are few).
function shortestPath(from, to, inside) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = queue.shift();
    if (node === to) break;
    for (const next of edges.get(node)?.keys() ?? []) {
      if (inside.has(next) && !previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  const path = [to];
  while (previous.get(path[0]) !== null) path.unshift(previous.get(path[0]));
  return path;
}
for (const component of components) {
  const inside = new Set(component);
  const seen = new Set();
  for (const from of component) {
    for (const to of edges.get(from)?.keys() ?? []) {
      if (!inside.has(to)) continue;
      const cycle = [from, ...shortestPath(to, from, inside)];
      const start = cycle.indexOf([...cycle.slice(1)].sort()[0], 1);
      const key = [...cycle.slice(start), ...cycle.slice(1, start)].join(' ');
      if (seen.has(key)) continue;
      seen.add(key);
      const steps = cycle
        .slice(1)
        .map((next, i) => `  ${cycle[i]}/ → ${next}/ at ${edges.get(cycle[i]).get(next)}`);
      violations.push(
        `folder cycle ${cycle.map((f) => `${f}/`).join(' → ')}:\n${steps.join('\n')}`,
      );
    }
  }
}

if (violations.length > 0) {
  for (const violation of violations) console.error(violation);
  console.error(`${violations.length} structure violation(s) in ${relative(root, src)}`);
  process.exit(1);
}
console.log(
  `structure OK: ${edges.size} folders, no cycle, infrastructure imports no feature, SQL only in repos and db/`,
);
