// An ESLint rule that reports every import taking part in a cycle of runtime imports, with one
// module graph for the whole lint run instead of a walk from every file.
//
// The linted file's own imports come from its syntax tree. The modules it reaches are read from
// disk once per process and scanned for their import and re-export statements (prettier puts every
// such statement at the start of a line); a module read more than a second ago is read again if it
// changed since, so a long-lived ESLint (an editor) sees edits. Type-only imports are not followed:
// they vanish at runtime. Dynamic `import('…')` with a literal path is followed: a lazy import
// still runs the module. Bare package names are not followed.
//
// An import u → v lies on a cycle exactly when v reaches u, so the rule collects the modules that
// reach the linted file (a backward walk over the part of the graph its imports reach) and reports
// each import whose target is one of them, with the shortest way back as the message.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.js', '.mjs'];

/** Top-level `import … from '…'`, `export … from '…'` and bare `import '…'` statements. */
const STATEMENT =
  /^(import|export)\b([^;'"`]*?)\bfrom\s*(['"])([^'"\n]+)\3|^import\s*(['"])([^'"\n]+)\5/gm;
/** `import('…')` with a literal path, anywhere. */
const DYNAMIC = /\bimport\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/**
 * Whether the clause between `import`/`export` and `from` brings in values: not `import type …`,
 * `export type …`, nor a brace list whose every name is marked `type`.
 */
function carriesValues(clause) {
  const text = clause.trim();
  if (/^type\b(?!\s*(,|from\b))/.test(text)) return false;
  const braces = /^\{([^}]*)\}$/.exec(text);
  if (!braces) return true;
  const names = braces[1]
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  return names.length === 0 || !names.every((name) => /^type\s/.test(name));
}

/** The file a specifier names, or null for a package or a file that does not exist. */
function resolveSpecifier(specifier, fromFile, aliases) {
  let base;
  if (specifier.startsWith('.')) base = resolve(dirname(fromFile), specifier);
  else {
    const alias = aliases.find(([prefix]) => specifier.startsWith(prefix));
    if (!alias) return null;
    base = join(alias[1], specifier.slice(alias[0].length));
  }
  const candidates = [base];
  const js = /\.(m?)js$/.exec(base);
  if (js)
    candidates.push(
      base.slice(0, -js[0].length) + (js[1] ? '.mts' : '.ts'),
      `${base.slice(0, -js[0].length)}.tsx`,
    );
  for (const extension of EXTENSIONS) candidates.push(base + extension);
  for (const extension of EXTENSIONS) candidates.push(join(base, `index${extension}`));
  for (const candidate of candidates)
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return null;
}

/** The runtime imports of a module's source text, as specifiers. */
export function scanImports(source) {
  const found = [];
  for (const match of source.matchAll(STATEMENT)) {
    if (match[4] !== undefined) {
      if (carriesValues(match[2])) found.push(match[4]);
    } else found.push(match[6]);
  }
  for (const match of source.matchAll(DYNAMIC)) found.push(match[2]);
  return found;
}

/** Modules read from disk: file → { mtime, checked, targets }. */
const modules = new Map();

function targetsOnDisk(file, aliases) {
  const now = Date.now();
  const known = modules.get(file);
  if (known && now - known.checked < 1000) return known.targets;
  let mtime = -1;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    // removed since it was named: nothing to follow
  }
  if (known && known.mtime === mtime) {
    known.checked = now;
    return known.targets;
  }
  const targets = [];
  if (mtime >= 0)
    for (const specifier of scanImports(readFileSync(file, 'utf8'))) {
      const target = resolveSpecifier(specifier, file, aliases);
      if (target) targets.push(target);
    }
  modules.set(file, { mtime, checked: now, targets });
  return targets;
}

/** The shortest chain of imports from `start` back to `goal`, inside `allowed`. */
function shortestPath(start, goal, edges) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  // for-of over an array sees the items pushed while it runs: a breadth-first queue.
  for (const node of queue) {
    if (node === goal) break;
    for (const next of edges.get(node) ?? [])
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
  }
  const path = [];
  for (let node = goal; node !== null && node !== undefined; node = previous.get(node))
    path.unshift(node);
  return path;
}

/** @type {import('eslint').Rule.RuleModule} */
const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Disallow an import that takes part in a cycle of runtime imports' },
    schema: [
      {
        type: 'object',
        properties: {
          aliases: { type: 'object', additionalProperties: { type: 'string' } },
        },
        additionalProperties: false,
      },
    ],
    messages: { cycle: 'Dependency cycle: {{chain}}' },
  },
  create(context) {
    const file = context.filename;
    const root = context.cwd;
    const aliases = Object.entries(context.options[0]?.aliases ?? {}).map(([prefix, dir]) => [
      prefix,
      resolve(root, dir),
    ]);
    /** This file's runtime imports, from its syntax tree: [node, target file]. */
    const own = [];
    const add = (node, source) => {
      if (typeof source?.value !== 'string') return;
      const target = resolveSpecifier(source.value, file, aliases);
      if (target) own.push([node, target]);
    };
    const valueSpecifiers = (node) =>
      node.specifiers.length === 0 ||
      !node.specifiers.every((specifier) => specifier.importKind === 'type');
    return {
      ImportDeclaration(node) {
        if (node.importKind !== 'type' && valueSpecifiers(node)) add(node, node.source);
      },
      ExportNamedDeclaration(node) {
        if (node.source && node.exportKind !== 'type') add(node, node.source);
      },
      ExportAllDeclaration(node) {
        if (node.exportKind !== 'type') add(node, node.source);
      },
      ImportExpression(node) {
        add(node, node.source);
      },
      'Program:exit'() {
        if (own.length === 0) return;
        // Every module this file's imports reach, with its imports (this file's from its tree).
        const edges = new Map([[file, own.map(([, target]) => target)]]);
        const queue = [...new Set(edges.get(file))];
        for (const node of queue) {
          if (edges.has(node)) continue;
          const targets = targetsOnDisk(node, aliases);
          edges.set(node, targets);
          for (const target of targets) if (!edges.has(target)) queue.push(target);
        }
        // The modules among them that reach this file: walk the edges backwards from it.
        const incoming = new Map();
        for (const [from, targets] of edges)
          for (const target of targets) {
            if (!incoming.has(target)) incoming.set(target, []);
            incoming.get(target).push(from);
          }
        const reachers = new Set();
        const back = [file];
        for (const node of back)
          for (const from of incoming.get(node) ?? [])
            if (!reachers.has(from)) {
              reachers.add(from);
              back.push(from);
            }
        for (const [node, target] of own) {
          if (!reachers.has(target) && target !== file) continue;
          const chain = [file, ...shortestPath(target, file, edges)]
            .map((step) => relative(root, step))
            .join(' → ');
          context.report({ node, messageId: 'cycle', data: { chain } });
        }
      },
    };
  },
};

export default { rules: { 'no-cycle': noCycle } };
