/**
 * HTTP response compression (@fastify/compress) on every route registered after it: brotli when the
 * client accepts it, else gzip, for text-like bodies of at least 1 KiB (API JSON, cached JSON
 * strings, the SPA's HTML/JS/CSS). Images and other binary bodies go out as they are. socket.io,
 * raw websocket upgrades and the CONNECT tunnel never pass through fastify's reply, so they are
 * untouched. Brotli runs at quality 4: most of its gain for a small share of its top quality's CPU.
 * Request bodies are never decompressed: clients send them plain.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyPluginAsync } from 'fastify';
import fastifyCompress from '@fastify/compress';
import { globalPlugin } from '../lib/plugin.ts';

export const COMPRESS_THRESHOLD = 1024;
export const BROTLI_QUALITY = 4;
export const GZIP_LEVEL = 6;

/** Content types worth compressing: text, JSON, JavaScript, XML and SVG (never raster images). */
const COMPRESSIBLE =
  /^(?:text\/(?!event-stream)|application\/(?:[\w.-]+\+)?(?:json|javascript|xml|ecmascript)\b|image\/svg\+xml\b)/i;

export function isCompressible(contentType: string): boolean {
  return COMPRESSIBLE.test(contentType.trim());
}

/** The encodings this server compresses with, in its order of preference. */
export type BodyEncoding = 'br' | 'gzip';

const BROTLI_PARAMS = {
  [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
  [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
};

/**
 * The encoding to answer with for an Accept-Encoding header, the way the plugin below negotiates
 * it: the accepted one of br and gzip with the higher q (br on a tie); x-gzip is gzip, and `*`
 * stands for gzip unless gzip is named; q=0 refuses. Null when neither is accepted (the answer
 * goes out as it is).
 */
export function negotiateEncoding(header: string | undefined): BodyEncoding | null {
  if (!header) return null;
  let br = 0;
  let gzip: number | undefined;
  let any = 0;
  for (const part of header.toLowerCase().split(',')) {
    const [name = '', ...params] = part.split(';').map((p) => p.trim());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip ?? 0, q);
    else if (name === '*') any = q;
  }
  const gz = gzip ?? any;
  if (br <= 0 && gz <= 0) return null;
  return br >= gz ? 'br' : 'gzip';
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** `body` compressed with `encoding` at the plugin's settings (off the event loop, in libuv's pool). */
export function compressBody(body: Buffer, encoding: BodyEncoding): Promise<Buffer> {
  return encoding === 'br'
    ? brotliAsync(body, { params: BROTLI_PARAMS })
    : gzipAsync(body, { level: GZIP_LEVEL });
}

const plugin: FastifyPluginAsync = async (app) => {
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESS_THRESHOLD,
    customTypes: isCompressible,
    brotliOptions: { params: BROTLI_PARAMS },
    zlibOptions: { level: GZIP_LEVEL },
  });
};

export default globalPlugin(plugin, 'compress');
