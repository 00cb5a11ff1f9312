/**
 * Vite config for the SPA. The login route is kept small: the router, the refine application,
 * socket.io and the desktops screen load lazily (see manualChunks, src/app/root.tsx and
 * src/app/router-root.tsx), and what the login form needs is one chunk (one gzip stream compresses
 * better than thirty small ones). `npm test` holds its size (scripts/bench/bundle.ts --check).
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const backend = 'http://127.0.0.1:8080';

/** The login form's own modules (the entry's static imports). */
const LOGIN_SOURCES =
  /\/src\/(main\.tsx|app\/(root|app-loader|page-loader|landing-prefetch|guard\/entry-decision)\.tsx?$|features\/auth\/|i18n\/|components\/(language-switcher|color-scheme-switch|submit-button)\.tsx$|hooks\/use-page-title\.ts$|lib\/(token|idle|navigation|pending|paths|session-state|session-modal-store)\.ts$|providers\/(http-client|auth-provider|api-error|http-hooks|operation-listeners|request-encoding|token-renewal)\.ts$)/;
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

export default defineConfig({
  plugins: [react()],
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
    rollupOptions: { output: { manualChunks } },
  },
});
