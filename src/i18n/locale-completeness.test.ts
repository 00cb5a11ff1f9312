/**
 * Every locale is complete: it has every English key, keeps every {{placeholder}} of the English
 * text, has the plural forms its language needs, and translates every text, except the ones listed
 * in src/i18n/same-as-english/ (all-languages.json and <lang>.json: key lists grouped under the
 * reason the text is the same as in English). A locale text that still equals the draft label
 * derived from its key while English says something else is a stale copy and fails too.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { humaniseKey } from './key-label';
import { LANGUAGES, NAMESPACES, type Language } from './languages';

type Tree = Record<string, unknown>;
const root = join(__dirname, '..', '..');
const allowListDir = join(__dirname, 'same-as-english');
const PLURAL_FORM = /^(.*)_(zero|one|two|few|many|other)$/;

function flatten(tree: Tree, prefix: string, into: Map<string, string>): Map<string, string> {
  for (const [key, value] of Object.entries(tree)) {
    if (value && typeof value === 'object') flatten(value as Tree, `${prefix}${key}.`, into);
    else into.set(`${prefix}${key}`, String(value));
  }
  return into;
}

/** Every text of a locale by `namespace:key`. */
function catalogue(lang: string): Map<string, string> {
  const texts = new Map<string, string>();
  for (const ns of NAMESPACES) {
    const file = join(root, 'locales', lang, `${ns}.json`);
    if (existsSync(file)) flatten(JSON.parse(readFileSync(file, 'utf8')) as Tree, `${ns}:`, texts);
  }
  return texts;
}

/** An allow-list file as key -> reason (empty when the file does not exist). */
function allowList(name: string): Map<string, string> {
  const file = join(allowListDir, `${name}.json`);
  if (!existsSync(file)) return new Map();
  const groups = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
  return new Map(
    Object.entries(groups).flatMap(([reason, keys]) => keys.map((key) => [key, reason] as const)),
  );
}

/** The names of the {{placeholders}} of a text (`{{value, number}}` counts as `value`). */
function placeholders(text: string): string[] {
  return [...text.matchAll(/\{\{\s*([^},\s]+)[^}]*\}\}/g)].map((match) => match[1] ?? '');
}

/** True when a text has letters outside its placeholders (something to translate). */
function hasWords(text: string): boolean {
  return /\p{L}/u.test(text.replace(/\{\{[^}]*\}\}/g, ''));
}

/** Intl's name of a locale code (`zh_Hans` -> `zh-Hans`). */
function intlTag(lang: Language): string {
  return lang.replace('_', '-');
}

const english = catalogue('en');
/**
 * Base keys English writes in plural forms (`key_one` with `key_other`, or with the bare `key`,
 * which i18next reads when the form a count needs is absent).
 */
const pluralBases = new Set(
  [...english.keys()].flatMap((key) => {
    const base = PLURAL_FORM.exec(key)?.[1];
    return base !== undefined && (english.has(`${base}_other`) || english.has(base)) ? [base] : [];
  }),
);
function pluralBase(key: string): string | null {
  if (pluralBases.has(key)) return key;
  const base = PLURAL_FORM.exec(key)?.[1];
  return base !== undefined && pluralBases.has(base) ? base : null;
}
/** English keys that are not plural forms: every locale needs each of them. */
const singleKeys = [...english.keys()].filter((key) => pluralBase(key) === null);
/** The English text a locale key is translated from (a plural form from English `_other`). */
function englishSource(key: string): string | undefined {
  const base = pluralBase(key);
  if (english.has(key) || base === null) return english.get(key);
  return english.get(`${base}_other`) ?? english.get(base);
}

const everyLanguage = allowList('all-languages');
const others = LANGUAGES.filter((lang) => lang !== 'en');

function listing(lang: string, what: string, lines: string[]): string {
  return `${lang}: ${lines.length} ${what}:\n  ${lines.join('\n  ')}\n`;
}

describe.each(others)('locale %s', (lang) => {
  const texts = catalogue(lang);
  const allowed = new Map([...everyLanguage, ...allowList(lang)]);

  it('has every English key', () => {
    const missing = singleKeys.filter((key) => !texts.has(key));
    expect(missing.length, listing(lang, 'English keys missing', missing)).toBe(0);
  });

  it('has every plural form its language needs', () => {
    const categories = new Intl.PluralRules(intlTag(lang)).resolvedOptions().pluralCategories;
    // The `other` form may be the bare key.
    const missing = [...pluralBases].flatMap((base) =>
      categories
        .map((category) => `${base}_${category}`)
        .filter((key) => !texts.has(key) && !(key === `${base}_other` && texts.has(base))),
    );
    expect(
      missing.length,
      listing(lang, `plural forms missing (needs ${categories.join(', ')})`, missing),
    ).toBe(0);
  });

  it('keeps every {{placeholder}} of the English text', () => {
    const broken = [...texts].flatMap(([key, text]) => {
      const source = englishSource(key);
      if (source === undefined) return [];
      const own = new Set(placeholders(text));
      const lost = placeholders(source).filter((name) => !own.has(name));
      return lost.length ? [`${key}: lacks {{${lost.join('}}, {{')}}} in "${text}"`] : [];
    });
    expect(broken.length, listing(lang, 'texts losing placeholders', broken)).toBe(0);
  });

  it('translates every text the language does not write as in English', () => {
    const untranslated = [...texts].flatMap(([key, text]) => {
      const source = englishSource(key);
      return source !== undefined && text === source && hasWords(text) && !allowed.has(key)
        ? [`${key}: "${text}"`]
        : [];
    });
    expect(
      untranslated.length,
      listing(
        lang,
        `texts still in English (translate them, or list them with a reason in src/i18n/same-as-english/${lang}.json)`,
        untranslated,
      ),
    ).toBe(0);
  });

  it('keeps no stale copy of a draft label derived from the key', () => {
    const stale = [...texts].flatMap(([key, text]) => {
      const source = englishSource(key);
      const draft = humaniseKey(key.split(/[.:]/).pop() ?? '');
      return source !== undefined && text !== source && text === draft
        ? [`${key}: "${text}" (English: "${source}")`]
        : [];
    });
    expect(stale.length, listing(lang, 'stale draft labels', stale)).toBe(0);
  });
});

describe('same-as-English allow-lists', () => {
  const files = readdirSync(allowListDir).filter((name) => name.endsWith('.json'));

  it('are named after a locale, or all-languages', () => {
    const names = files.map((name) => name.replace(/\.json$/, ''));
    expect(
      names.filter((name) => name !== 'all-languages' && !(others as string[]).includes(name)),
    ).toEqual([]);
  });

  it('list only keys English has, each under a reason', () => {
    const unknown = files.flatMap((file) =>
      [...allowList(file.replace(/\.json$/, ''))]
        .filter(([key, reason]) => !english.has(key) || !reason.trim())
        .map(([key]) => `${file}: ${key}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe('English catalogue', () => {
  it('writes abbreviations in labels in capitals, not as a draft derived from the key', () => {
    const abbreviation =
      /\b(id|ip|url|uri|uuid|iso|isos|vcpus?|cpus?|gpus?|mac|vms?|api|https?|ssh|vnc|rdp|vpn|dns|usb)\b/i;
    const drafts = [...english]
      .filter(([key]) => key.startsWith('resources:'))
      .flatMap(([key, text]) => {
        // Written in capitals, an English plural `s` aside (ISOs, GPUs); vCPU is the usual spelling.
        const word = abbreviation.exec(text)?.[0]?.replace(/(?<=.)s$/, '');
        return word && word !== word.toUpperCase() && word !== 'vCPU' ? [`${key}: "${text}"`] : [];
      });
    expect(drafts).toEqual([]);
  });
});
