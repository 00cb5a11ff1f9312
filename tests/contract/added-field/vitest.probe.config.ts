/**
 * Copied to the root of the repository copy by server/test/added-field.test.ts: runs the UI probe
 * of the added field in jsdom with the app's aliases and DOM set-up.
 */
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

// Vitest's failure printer calls Map.groupBy (Node 21+); Node 20 lacks it.
if (!('groupBy' in Map)) {
  Object.defineProperty(Map, 'groupBy', {
    value<T, K>(items: Iterable<T>, key: (item: T, index: number) => K): Map<K, T[]> {
      const groups = new Map<K, T[]>();
      let index = 0;
      for (const item of items) {
        const k = key(item, index++);
        groups.set(k, [...(groups.get(k) ?? []), item]);
      }
      return groups;
    },
  });
}

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: {
      '@common': fileURLToPath(new URL('./common', import.meta.url)),
      '@': fileURLToPath(new URL('./src', import.meta.url)),
    },
  },
  test: {
    environment: 'jsdom',
    include: ['tests/contract/added-field/probe-ui.probe.tsx'],
    setupFiles: ['./tests/support/setup-dom.ts'],
    // refine's router bindings must share the app's (ESM) react-router, not load its CommonJS copy.
    server: { deps: { inline: [/@refinedev\//] } },
    reporters: ['default', './tests/support/plain-reporter.ts'],
    testTimeout: 30_000,
  },
});
