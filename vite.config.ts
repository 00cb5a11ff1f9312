/**
 * Vite config for the SPA. The login route is kept small: the router, the refine application,
 * socket.io and the desktops screen load lazily (see manualChunks, src/app/root.tsx and
 * src/app/router-root.tsx), and what the login form needs is one chunk (one gzip stream compresses
 * better than thirty small ones). `npm test` holds its size (scripts/bench/bundle.ts --check).
 */
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { precompressDir } from './scripts/lib/precompress.ts';
import { prerenderLogin } from './scripts/lib/prerender-login.ts';
import { DEFAULT_LANGUAGE, LOGIN_NAMESPACES } from './src/i18n/languages.ts';

const backend = 'http://127.0.0.1:8080';

/** The login form's own modules (the entry's static imports). */
const LOGIN_SOURCES =
  /\/src\/(main\.tsx|app\/(root|app-loader|page-loader|landing-prefetch|entry-reads|guard\/entry-decision)\.tsx?$|features\/auth\/|i18n\/|components\/(language-switcher|color-scheme-switch|submit-button)\.tsx$|hooks\/use-page-title\.ts$|lib\/(token|idle|navigation|pending|paths|session-state|session-modal-store)\.ts$|providers\/(http-client|auth-provider|api-error|http-hooks|operation-listeners|request-encoding|token-renewal)\.ts$)/;
/** The libraries and Mantine components the login form draws with (their dependencies follow). */
const LOGIN_LIBRARIES =
  /node_modules\/(i18next|react-i18next|@mantine\/core\/esm\/components\/(Alert|Anchor|Button|Center|Group|Loader|NativeSelect|Paper|PasswordInput|Skeleton|Stack|Text|TextInput|Title)\/)/;

/**
 * Groups the login form into one chunk and the big vendors of the application into long-lived
 * chunks; everything else follows the dynamic imports.
 */
function manualChunks(id: string): string | undefined {
  if (!id.includes('node_modules')) return LOGIN_SOURCES.test(id) ? 'login' : undefined;
  if (LOGIN_LIBRARIES.test(id)) return 'login';
  // React joins the login chunk and react-router the refine one (rolldown groups pull in their
  // dependencies): the login form renders without the router, and every route needs refine.
  if (/node_modules\/@refinedev\//.test(id)) return 'refine';
  if (
    /node_modules\/(socket\.io-client|engine\.io-client|engine\.io-parser|socket\.io-parser|@socket\.io)\//.test(
      id,
    )
  ) {
    return 'socket';
  }
  return undefined;
}

/**
 * noVNC probes H.264 decoding (a real VideoDecoder decode) in a top-level await of
 * `core/util/browser.js`, so its RFB class waits for it: 100-400 ms before a console can connect
 * on a loaded machine (scripts/bench/desktop.ts). QEMU's VNC server has no H.264 encoding, so the
 * probe's answer is `false` (noVNC then never offers the encoding). The build fails when the probe
 * is no longer there to replace.
 */
function novncWithoutH264Probe(): Plugin {
  const probe = 'supportsWebCodecsH264Decode = await _checkWebCodecsH264DecodeSupport();';
  return {
    name: 'novnc-without-h264-probe',
    transform(code, id) {
      if (!id.includes('/@novnc/novnc/core/util/browser.js')) return null;
      if (!code.includes(probe)) throw new Error(`noVNC's H.264 probe changed in ${id}`);
      return { code: code.replace(probe, 'supportsWebCodecsH264Decode = false;'), map: null };
    },
  };
}

/**
 * Every text asset of the build gets its `.br` and `.gz` beside it (scripts/lib/precompress.ts):
 * the server sends them as they are, so no browser's download of the SPA costs it a compression.
 */
function precompressAssets(): Plugin {
  let assetsDir = '';
  return {
    name: 'precompress-assets',
    apply: (_config, env) => env.command === 'build' && !env.isSsrBuild,
    configResolved(config) {
      assetsDir = resolve(config.root, config.build.outDir, config.build.assetsDir);
    },
    async closeBundle(error) {
      // A failed build has nothing to compress: its own error is the one to show.
      if (error) return;
      await precompressDir(assetsDir);
    },
  };
}

/**
 * The page preloads the catalogues of the first render in English, the fallback every language
 * loads: found by the browser as it parses the page, they no longer wait for the entry's chunk to
 * evaluate before their download starts (scripts/bench/bundle.ts checks the links are there).
 */
function preloadFallbackCatalogues(): Plugin {
  const sources = LOGIN_NAMESPACES.map((ns) => `/locales/${DEFAULT_LANGUAGE}/${ns}.json`);
  let base = '/';
  return {
    name: 'preload-fallback-catalogues',
    apply: (_config, env) => env.command === 'build' && !env.isSsrBuild,
    configResolved(config) {
      base = config.base;
    },
    transformIndexHtml: {
      order: 'post',
      handler(_html, context) {
        const chunks = Object.values(context.bundle ?? {}).filter(
          (output) =>
            output.type === 'chunk' &&
            sources.some((source) => output.facadeModuleId?.endsWith(source)),
        );
        if (chunks.length !== sources.length)
          throw new Error(`the build lacks a catalogue chunk of ${sources.join(', ')}`);
        return chunks.map((chunk) => ({
          tag: 'link',
          attrs: { rel: 'modulepreload', crossorigin: true, href: `${base}${chunk.fileName}` },
          injectTo: 'head' as const,
        }));
      },
    },
  };
}

export default defineConfig({
  plugins: [
    react(),
    novncWithoutH264Probe(),
    precompressAssets(),
    preloadFallbackCatalogues(),
    prerenderLogin(),
  ],
  resolve: {
    alias: {
      '@common': fileURLToPath(new URL('./common', import.meta.url)),
      '@': fileURLToPath(new URL('./src', import.meta.url)),
    },
  },
  server: {
    proxy: {
      '/api/v3/socket.io': { target: backend, ws: true, changeOrigin: true },
      '/api/v3': { target: backend, changeOrigin: true },
      '/authentication': { target: backend, changeOrigin: true },
    },
  },
  build: {
    manifest: true,
    sourcemap: false,
    // The assets are compressed once, by precompressAssets; the build's report does not gzip
    // every chunk again to print its size (`npx tsx scripts/bench/bundle.ts` measures what browsers
    // load).
    reportCompressedSize: false,
    rollupOptions: { output: { manualChunks } },
  },
});
