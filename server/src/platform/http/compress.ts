/**
 * HTTP response compression (@fastify/compress) on every route registered after it: brotli when the
 * client accepts it, else gzip, for text-like bodies of at least 1 KiB (API JSON, cached JSON
 * strings, the SPA's HTML/JS/CSS). Images and other binary bodies go out as they are. socket.io,
 * raw websocket upgrades and the CONNECT tunnel never pass through fastify's reply, so they are
 * untouched. Brotli runs at quality 4: most of its gain for a small share of its top quality's CPU.
 * Request bodies are never decompressed: clients send them plain.
 */
import { constants } from 'node:zlib';
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

const plugin: FastifyPluginAsync = async (app) => {
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESS_THRESHOLD,
    customTypes: isCompressible,
    brotliOptions: {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      },
    },
    zlibOptions: { level: GZIP_LEVEL },
  });
};

export default globalPlugin(plugin, 'compress');
