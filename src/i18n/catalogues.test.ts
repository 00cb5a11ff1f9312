/**
 * Catalogue checks: every t('ns:key') used in src/ exists in English, every key the generated
 * resources/fields require exists in English, every locale has every English key, and no .tsx
 * file contains hard-coded UI text (JSX text or text attributes outside t()).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { resources } from '@/generated/resources';
import { fields } from '@/generated/fields';
import { stateActions } from '@/generated/actions';
import { LANGUAGES, NAMESPACES } from './languages';
import { requiredResourceKeys } from './required-keys';

type Tree = Record<string, unknown>;
const root = join(__dirname, '..', '..');
const srcDir = join(root, 'src');

function load(lang: string, ns: string): Tree {
  return JSON.parse(readFileSync(join(root, 'locales', lang, `${ns}.json`), 'utf8')) as Tree;
}

function flatten(tree: Tree, prefix = ''): string[] {
  return Object.entries(tree).flatMap(([key, value]) =>
    value && typeof value === 'object'
      ? flatten(value as Tree, `${prefix}${key}.`)
      : [`${prefix}${key}`],
  );
}

/** i18next-style lookup: nested path first, then flat keys containing dots. */
function lookup(tree: Tree, segments: string[]): unknown {
  if (!segments.length) return tree;
  for (let take = segments.length; take >= 1; take -= 1) {
    const key = segments.slice(0, take).join('.');
    if (key in tree) {
      const value = tree[key];
      if (take === segments.length) return value;
      if (value && typeof value === 'object') {
        const found = lookup(value as Tree, segments.slice(take));
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

/**
 * True when English answers t(key): the key itself, or its plural forms (i18next reads `key_one`,
 * `key_other`... when the call passes a count, and English writes every plural text that way).
 */
function hasKey(tree: Tree, key: string): boolean {
  return (
    lookup(tree, key.split('.')) !== undefined ||
    lookup(tree, `${key}_other`.split('.')) !== undefined
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'generated' ? [] : sourceFiles(path);
    return /\.(ts|tsx)$/.test(name) && !/\.test\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

const english = Object.fromEntries(NAMESPACES.map((ns) => [ns, load('en', ns)])) as Record<
  string,
  Tree
>;

describe('message catalogues', () => {
  it('has every t() key used in src/ in English', () => {
    const missing: string[] = [];
    for (const file of sourceFiles(srcDir)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/\bt\(\s*['"]([^'"]+)['"]/g)) {
        const full = match[1] ?? '';
        const [ns, key] = full.includes(':')
          ? (full.split(':', 2) as [string, string])
          : ['common', full];
        if (!hasKey(english[ns] ?? {}, key)) missing.push(`${relative(root, file)}: ${full}`);
      }
      for (const match of text.matchAll(
        /(?:titleKey|key)[=:]\s*['"]((?:common|errors|resources):[^'"]+)['"]/g,
      )) {
        const [ns, key] = (match[1] ?? '').split(':', 2) as [string, string];
        if (lookup(english[ns] ?? {}, key.split('.')) === undefined)
          missing.push(`${relative(root, file)}: ${match[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('has every key the generated resources, fields and state actions require in English', () => {
    const missing = requiredResourceKeys({ resources, fields, stateActions })
      .filter((segments) => typeof lookup(english.resources ?? {}, segments) !== 'string')
      .map((segments) => segments.join('.'));
    expect(missing).toEqual([]);
  });

  it('has the spec error codes and the generic error in English', () => {
    for (const code of [
      'generic',
      'desktop_new_user_quota_exceeded',
      'desktop_start_user_quota_exceeded',
      'user_disabled',
      'viewer_not_started',
      'one_viewer_minimum',
    ]) {
      expect(typeof english.errors?.[code]).toBe('string');
    }
  });

  it.each(LANGUAGES.filter((lang) => lang !== 'en'))(
    'gives locale %s every English key',
    (lang) => {
      for (const ns of NAMESPACES) {
        const keys = new Set(flatten(load(lang, ns)));
        const missing = flatten(english[ns] ?? {}).filter((key) => !keys.has(key));
        expect(missing, `${lang}/${ns}`).toEqual([]);
      }
    },
  );

  it('finds no hard-coded UI text in .tsx files', () => {
    const offending: string[] = [];
    const textAttributes = new Set([
      'label',
      'title',
      'placeholder',
      'aria-label',
      'alt',
      'description',
      'error',
    ]);
    for (const file of sourceFiles(srcDir).filter((f) => f.endsWith('.tsx'))) {
      const source = ts.createSourceFile(
        file,
        readFileSync(file, 'utf8'),
        ts.ScriptTarget.Latest,
        true,
        ts.ScriptKind.TSX,
      );
      const visit = (node: ts.Node): void => {
        if (ts.isJsxText(node) && /\p{L}/u.test(node.getText())) {
          offending.push(`${relative(root, file)}: text "${node.getText().trim()}"`);
        }
        if (
          ts.isJsxAttribute(node) &&
          textAttributes.has(node.name.getText()) &&
          node.initializer &&
          ts.isStringLiteral(node.initializer)
        ) {
          if (/\p{L}/u.test(node.initializer.text))
            offending.push(
              `${relative(root, file)}: ${node.name.getText()}="${node.initializer.text}"`,
            );
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offending).toEqual([]);
  });
});
