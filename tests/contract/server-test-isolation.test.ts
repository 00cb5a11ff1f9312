/**
 * The server test files share one module graph per worker (`isolate: false` in vitest.config.ts):
 * that is safe only while none of them replaces a module or a global, which would leak into the
 * files that run after it in the same worker.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '../..');
const REPLACES = /\bvi\.(mock|doMock|stubGlobal|stubEnv|hoisted)\s*\(/;

function serverTestFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : serverTestFiles(path);
    return /\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('server test files', () => {
  const files = serverTestFiles(join(root, 'server'));

  it('are found', () => {
    expect(files.length).toBeGreaterThan(50);
  });

  it('replace no module and no global (they share modules within a worker)', () => {
    const offenders = files.filter((file) => REPLACES.test(readFileSync(file, 'utf8')));
    expect(offenders.map((file) => file.slice(root.length + 1))).toEqual([]);
  });
});
