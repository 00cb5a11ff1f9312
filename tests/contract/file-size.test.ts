// @vitest-environment node
/**
 * A hand-written source file holds one concern: none in `src/`, `server/src/` or `common/` is
 * longer than 400 lines (tests and generated code aside). A file that grows past it is split by
 * concern (a driver into its disks, processes and monitor; a service into its operations; a
 * registry into one file per entry), not trimmed of its comments.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 400;

const isScanned = (name: string) =>
  /\.(tsx?|mjs)$/.test(name) && !/\.(test|spec)\.tsx?$/.test(name) && !name.endsWith('.d.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory())
      return rel === 'src/generated' || entry.name === 'node_modules' ? [] : sourceFiles(rel);
    return isScanned(entry.name) ? [rel] : [];
  });
}

/** Lines of a file as `wc -l` counts them. */
const lines = (file: string) => readFileSync(join(root, file), 'utf8').split('\n').length - 1;

describe('file size', () => {
  const files = ['src', 'server/src', 'common'].flatMap(sourceFiles);

  it('scans the hand-written sources', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files).toContain('server/src/platform/hypervisor/qemu-driver.ts');
  });

  it(`keeps every hand-written source file within ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: lines(file) }))
      .filter((entry) => entry.lines > MAX_LINES)
      .map((entry) => `${entry.file}: ${entry.lines} lines`);
    expect(long).toEqual([]);
  });
});
