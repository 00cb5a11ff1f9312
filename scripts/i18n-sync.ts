/**
 * Keeps the English catalogue in step with src/generated: adds the missing English keys to
 * locales/en/resources.json for every generated resource (`<name>.title`,
 * `<name>.actions.<list|create|edit|show>`, `<name>.fields.<path>`, `<name>.enum.<path>.<value>`,
 * `<name>.stateActions.<action>`), keeping existing texts. The added text is a draft derived from
 * the key: give it a proper English label before committing.
 * Other locales are never written: a key a locale lacks shows the English text through i18next's
 * `fallbackLng`, and src/i18n/locale-completeness.test.ts lists what each locale still lacks.
 * Usage: npx tsx scripts/i18n-sync.ts [--check]  (--check only reports the missing English keys,
 * exit 1 when there are some)
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { resources } from '../src/generated/resources.ts';
import { fields } from '../src/generated/fields.ts';
import { stateActions } from '../src/generated/actions.ts';
import { requiredResourceKeys } from '../src/i18n/required-keys.ts';
import { humaniseKey as humanise } from '../src/i18n/key-label.ts';

type Tree = Record<string, unknown>;
const root = join(import.meta.dirname, '..', 'locales');
const check = process.argv.includes('--check');

function load(lang: string, ns: string): Tree {
  const file = join(root, lang, `${ns}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Tree) : {};
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

const missing: string[] = [];
const english = load('en', 'resources');
for (const segments of requiredResourceKeys({ resources, fields, stateActions })) {
  if (ensure(english, segments, englishDefault(segments))) missing.push(segments.join('.'));
}
if (check) {
  if (missing.length) {
    console.error(
      `i18n-sync: ${missing.length} keys missing in locales/en/resources.json; run npx tsx scripts/i18n-sync.ts:\n  ${missing.join('\n  ')}`,
    );
    process.exit(1);
  }
  console.log('i18n-sync: English catalogue up to date');
} else {
  if (missing.length)
    writeFileSync(join(root, 'en', 'resources.json'), `${JSON.stringify(english, null, 2)}\n`);
  console.log(
    `i18n-sync: ${missing.length} English keys added${missing.length ? ` (give them proper labels):\n  ${missing.join('\n  ')}` : ''}`,
  );
}
