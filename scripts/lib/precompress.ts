/**
 * Writes a `.br` (brotli, top quality) and a `.gz` (gzip -9) beside every text asset of the built
 * SPA, so the server sends those bytes as they are instead of compressing each file again for
 * every browser that downloads it (and at its lighter on-the-fly settings). Runs once per build, in
 * libuv's pool. Files under 1 KiB, and any whose compressed form is not smaller, get no sibling.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** The asset types worth compressing (the server's on-the-fly rule: text, never raster images). */
const TEXT_ASSET = /\.(js|mjs|css|svg|json|html|txt|xml|map)$/;
const MIN_BYTES = 1024;

/** What precompressDir wrote: one entry per file that got siblings. */
export interface Precompressed {
  file: string;
  bytes: number;
  br: number;
  gz: number;
}

/** Writes the `.br` and `.gz` siblings of the text assets under `dir` (recursively). */
export async function precompressDir(dir: string): Promise<Precompressed[]> {
  const names = (await readdir(dir, { recursive: true })).filter((name) => TEXT_ASSET.test(name));
  const done = await Promise.all(
    names.map(async (name): Promise<Precompressed | null> => {
      const file = join(dir, name);
      const body = await readFile(file);
      if (body.length < MIN_BYTES) return null;
      const [br, gz] = await Promise.all([
        brotliAsync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
        gzipAsync(body, { level: 9 }),
      ]);
      const kept = { file: name, bytes: body.length, br: 0, gz: 0 };
      if (br.length < body.length) {
        await writeFile(`${file}.br`, br);
        kept.br = br.length;
      }
      if (gz.length < body.length) {
        await writeFile(`${file}.gz`, gz);
        kept.gz = gz.length;
      }
      return kept.br || kept.gz ? kept : null;
    }),
  );
  return done.filter((entry): entry is Precompressed => entry !== null);
}
