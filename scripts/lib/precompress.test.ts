// @vitest-environment node
import { mkdtempSync, mkdirSync, readFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { precompressDir } from './precompress.ts';

const dir = mkdtempSync(join(tmpdir(), 'vdi-precompress-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('precompressDir', () => {
  it('writes .br and .gz siblings that decode to the asset, for text assets of 1 KiB or more', async () => {
    mkdirSync(join(dir, 'assets'));
    const script = `export const rows = [${Array.from({ length: 400 }, (_, i) => `{ id: ${i}, name: "desktop ${i}" }`).join(', ')}];\n`;
    writeFileSync(join(dir, 'assets', 'app-1a2b.js'), script);
    writeFileSync(join(dir, 'assets', 'tiny-3c4d.css'), 'a{color:red}');
    writeFileSync(join(dir, 'assets', 'card-5e6f.png'), Buffer.alloc(4096, 7));

    const written = await precompressDir(dir);

    expect(written.map((entry) => entry.file)).toEqual([join('assets', 'app-1a2b.js')]);
    const js = join(dir, 'assets', 'app-1a2b.js');
    expect(brotliDecompressSync(readFileSync(`${js}.br`)).toString()).toBe(script);
    expect(gunzipSync(readFileSync(`${js}.gz`)).toString()).toBe(script);
    expect(written[0]?.br).toBeLessThan(script.length / 4);
    // Too small to gain, and a raster image: no siblings.
    expect(existsSync(join(dir, 'assets', 'tiny-3c4d.css.br'))).toBe(false);
    expect(existsSync(join(dir, 'assets', 'card-5e6f.png.br'))).toBe(false);
    expect(existsSync(join(dir, 'assets', 'card-5e6f.png.gz'))).toBe(false);
  });
});
