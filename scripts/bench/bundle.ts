/**
 * Login-route JS budget (goal G1): after `vite build`, follows the static import closure of the
 * entry in dist/.vite/manifest.json (the login form is the entry's; the router, the refine app,
 * socket and the desktops screen are dynamic imports) plus the catalogues the login form renders
 * with (LOGIN_NAMESPACES in the default language), gzips each JS file at level 9 and prints the
 * total, with the scripts the login page drawn at build time adds (its boot script). Exit 1 above
 * the budget, when a lazy-only chunk is in the closure, when index.html does not preload those
 * catalogues or when the build drew no login page; `npm test` runs it after its build.
 * Usage: npx vite build && npx tsx scripts/bench/bundle.ts [--budget 140]
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { prerenderedLoginFile } from '../../common/prerendered-login';
import { DEFAULT_LANGUAGE, LOGIN_NAMESPACES } from '../../src/i18n/languages';

interface Chunk {
  file: string;
  src?: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
  css?: string[];
}

const dist = join(import.meta.dirname, '..', '..', 'dist');
const manifest = JSON.parse(readFileSync(join(dist, '.vite', 'manifest.json'), 'utf8')) as Record<
  string,
  Chunk
>;
const budgetIndex = process.argv.indexOf('--budget');
const budgetKb = budgetIndex > 0 ? Number(process.argv[budgetIndex + 1]) : 140;
const LAZY_ONLY = /novnc|guacamole|calendar|refine|socket/i;

const entryKey = Object.keys(manifest).find((key) => manifest[key]?.isEntry);
if (!entryKey) throw new Error('no entry in the manifest');

const closure = new Set<string>();
const visit = (key: string): void => {
  if (closure.has(key)) return;
  closure.add(key);
  for (const dep of manifest[key]?.imports ?? []) visit(dep);
};
visit(entryKey);
// The login form also loads the catalogues it renders with, in the default language.
const catalogues = new Set(LOGIN_NAMESPACES.map((ns) => `locales/${DEFAULT_LANGUAGE}/${ns}.json`));
for (const key of Object.keys(manifest)) {
  if (catalogues.has(key)) visit(key);
}
if (![...catalogues].every((key) => closure.has(key)))
  throw new Error(`the manifest lacks a login catalogue (${[...catalogues].join(', ')})`);
// The page preloads them: their download must not wait for the entry's chunk to evaluate.
const page = readFileSync(join(dist, 'index.html'), 'utf8');
for (const key of catalogues) {
  const file = manifest[key]?.file ?? '';
  if (!page.includes(`<link rel="modulepreload" crossorigin href="/${file}">`)) {
    console.error(`FAIL: index.html does not preload the login catalogue ${key} (${file})`);
    process.exitCode = 1;
  }
}

const gz = (file: string): number => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
let jsTotal = 0;
let cssTotal = 0;
const rows: [string, number][] = [];
const cssFiles = new Set<string>();
for (const key of closure) {
  const chunk = manifest[key];
  if (!chunk) continue;
  const size = gz(chunk.file);
  jsTotal += size;
  rows.push([chunk.file, size]);
  for (const css of chunk.css ?? []) cssFiles.add(css);
  if (LAZY_ONLY.test(chunk.file) || LAZY_ONLY.test(key)) {
    console.error(`FAIL: ${key} is in the login closure but must stay lazy`);
    process.exitCode = 1;
  }
}
// The page the server answers the login path with is drawn at build time; its own scripts count.
const drawnPage = join(dist, prerenderedLoginFile(DEFAULT_LANGUAGE));
if (!existsSync(drawnPage)) {
  console.error(`FAIL: the build drew no login page (${drawnPage})`);
  process.exitCode = 1;
} else {
  const inClosure = new Set(rows.map(([file]) => file));
  for (const [, src] of readFileSync(drawnPage, 'utf8').matchAll(
    /<script[^>]*\ssrc="\/([^"]+)"/g,
  )) {
    if (!src || inClosure.has(src)) continue;
    const size = gz(src);
    jsTotal += size;
    rows.push([src, size]);
  }
}
for (const css of cssFiles) cssTotal += gz(css);
rows.sort((a, b) => b[1] - a[1]);
for (const [file, size] of rows) console.log(`${(size / 1024).toFixed(1).padStart(8)} kB  ${file}`);
const kb = jsTotal / 1024;
console.log(
  `login-route JS: ${kb.toFixed(1)} kB gzip-9 over ${rows.length} files (budget ${budgetKb} kB); CSS ${(cssTotal / 1024).toFixed(1)} kB`,
);
if (kb > budgetKb) {
  console.error(`FAIL: over budget by ${(kb - budgetKb).toFixed(1)} kB`);
  process.exitCode = 1;
}
