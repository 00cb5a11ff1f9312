/**
 * Keeps the message catalogues in step with src/generated:
 * - adds missing English keys to locales/en/resources.json for every generated resource
 *   (`<name>.title`, `<name>.actions.<list|create|edit|show>`, `<name>.fields.<path>`,
 *   `<name>.enum.<path>.<value>`, `<name>.stateActions.<action>`), keeping existing texts;
 * - gives every other locale each key English has (English text copied until translated).
 * Usage: npx tsx scripts/i18n-sync.ts [--check]  (--check only reports, exit 1 when out of date)
 */
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { resources } from '../src/generated/resources.ts';
import { fields } from '../src/generated/fields.ts';
import { stateActions } from '../src/generated/actions.ts';
import { requiredResourceKeys } from '../src/i18n/required-keys.ts';
import { LANGUAGES, NAMESPACES } from '../src/i18n/languages.ts';

type Tree = Record<string, unknown>;
const root = join(import.meta.dirname, '..', 'locales');
const check = process.argv.includes('--check');

function load(lang: string, ns: string): Tree {
  const file = join(root, lang, `${ns}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Tree) : {};
}

function humanise(text: string): string {
  const words = text
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[-_.]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function singular(text: string): string {
  return text.endsWith('ies')
    ? `${text.slice(0, -3)}y`
    : text.endsWith('s') && !text.endsWith('ss')
      ? text.slice(0, -1)
      : text;
}

/** Sets `segments` in a tree when absent; returns true when it added something. */
function ensure(tree: Tree, segments: string[], value: string): boolean {
  let node = tree;
  for (const segment of segments.slice(0, -1)) {
    const next = node[segment];
    if (!next || typeof next !== 'object') node[segment] = {};
    node = node[segment] as Tree;
  }
  const last = segments[segments.length - 1] as string;
  if (typeof node[last] === 'string') return false;
  node[last] = value;
  return true;
}

/** Copies every key of `source` missing in `target` (English fallback text). */
function fill(source: Tree, target: Tree): number {
  let added = 0;
  for (const [key, value] of Object.entries(source)) {
    if (value && typeof value === 'object') {
      if (!target[key] || typeof target[key] !== 'object') target[key] = {};
      added += fill(value as Tree, target[key] as Tree);
    } else if (typeof target[key] !== 'string') {
      target[key] = value;
      added += 1;
    }
  }
  return added;
}

function englishDefault(segments: string[]): string {
  const [name = '', group = '', ...rest] = segments;
  const title = humanise(name);
  if (group === 'title') return title;
  if (group === 'actions') {
    const action = rest[0];
    const one = singular(title).toLowerCase();
    if (action === 'create') return `New ${one}`;
    if (action === 'edit') return `Edit ${one}`;
    if (action === 'show') return `${singular(title)} details`;
    return title;
  }
  if (group === 'empty') return `No ${title.toLowerCase()} yet.`;
  if (group === 'fields') return humanise((rest[0] ?? '').split('.').pop() ?? '');
  if (group === 'enum' || group === 'stateActions') return humanise(rest[rest.length - 1] ?? '');
  return humanise(rest.join(' '));
}

let changed = 0;
const english = load('en', 'resources');
for (const segments of requiredResourceKeys({ resources, fields, stateActions })) {
  if (ensure(english, segments, englishDefault(segments))) changed += 1;
}
const outputs: [string, string, Tree][] = [['en', 'resources', english]];
for (const lang of LANGUAGES) {
  if (lang === 'en') continue;
  for (const ns of NAMESPACES) {
    const target = load(lang, ns);
    const source = ns === 'resources' ? english : load('en', ns);
    const added = fill(source, target);
    changed += added;
    outputs.push([lang, ns, target]);
  }
}
if (check) {
  if (changed) {
    console.error(`i18n-sync: ${changed} keys missing; run npx tsx scripts/i18n-sync.ts`);
    process.exit(1);
  }
  console.log('i18n-sync: catalogues up to date');
} else {
  for (const [lang, ns, tree] of outputs) {
    mkdirSync(join(root, lang), { recursive: true });
    writeFileSync(join(root, lang, `${ns}.json`), `${JSON.stringify(tree, null, 2)}\n`);
  }
  console.log(`i18n-sync: ${changed} keys added`);
}
