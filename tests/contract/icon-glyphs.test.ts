// @vitest-environment node
/**
 * Icons come from the icon registry (Tabler icons named by the schema and the SPA): no component
 * draws a text glyph (▾, ▸, ✓, ✕ ...) in place of an icon.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const GLYPHS = /[▾▴▸◂▼▲►◄✓✔✕✖✗✘⚙☰]/u;

function tsxFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : tsxFiles(path);
    return entry.name.endsWith('.tsx') && !entry.name.endsWith('.test.tsx') ? [path] : [];
  });
}

it('draws no text glyph as an icon in the SPA', () => {
  const found = tsxFiles(join(root, 'src')).flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (GLYPHS.test(line) ? [`${relative(root, file)}:${i + 1}`] : [])),
  );
  expect(found).toEqual([]);
});
