/**
 * Vite config for the SPA. The login route is kept small: the refine application, socket.io and
 * the desktops screen load lazily (see manualChunks and the lazy routes in src/app/root.tsx).
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const backend = 'http://127.0.0.1:8080';

/** Groups vendor modules into a few long-lived chunks; everything else follows the dynamic imports. */
function manualChunks(id: string): string | undefined {
  if (!id.includes('node_modules')) return undefined;
  // react-router is shared by the login route and refine: keep it out of the refine chunk
  // (rolldown groups pull in their dependencies).
  if (/node_modules\/(react|react-dom|scheduler|react-router|cookie|set-cookie-parser)\//.test(id))
    return 'react';
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
