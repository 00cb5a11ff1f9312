import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const alias = {
  '@common': fileURLToPath(new URL('./common', import.meta.url)),
  '@': fileURLToPath(new URL('./src', import.meta.url)),
};

/** Test files run in parallel, one per core. */
const workers = availableParallelism();
/**
 * The server files that keep cores busy on their own: the ones that boot real QEMU (TCG) desktops
 * and the 1,000-request booking race. They run after the others, so their time limits hold: the
 * rest of the suite does not compete with them for the cores.
 */
const heavyFiles = [
  'server/src/domains/bookings/bookings-race.test.ts',
  'server/src/domains/bookings/bookings-scheduler.test.ts',
  'server/src/domains/desktops/consoles-hardening.test.ts',
  'server/src/domains/desktops/lifecycle.test.ts',
  'server/src/domains/desktops/videowall-access.test.ts',
  'server/src/domains/media/media-desktop.test.ts',
  'server/src/domains/templates/templates.test.ts',
  'server/test/fuzz.test.ts',
];
const serverProject = {
  environment: 'node' as const,
  // A worker imports the server once and runs its files one after the other: each file builds its
  // own app on its own database, and nothing in server/ uses vi.mock, so nothing leaks between
  // files, while the compiled schemas (server/src/platform/http/compilers.ts) are shared.
  isolate: false,
  // One PostgreSQL cluster per run; each file clones the migrated template database.
  globalSetup: ['./tests/support/postgres-global-setup.ts'],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

export default defineConfig({
  test: {
    reporters: ['default', './tests/support/plain-reporter.ts'],
    projects: [
      {
        plugins: [react()],
        resolve: { alias },
        test: {
          name: 'unit',
          environment: 'jsdom',
          include: ['src/**/*.test.{ts,tsx}', 'tests/conformance/**/*.test.{ts,tsx}'],
          setupFiles: ['./tests/support/setup-dom.ts'],
          maxWorkers: workers,
          // refine's router bindings must share the app's (ESM) react-router, not load its CommonJS copy.
          server: { deps: { inline: [/@refinedev\//] } },
          testTimeout: 20_000,
        },
      },
      {
        // Tests of plain code (codegen, scripts, shared rules, contracts over the source tree): no
        // DOM to set up for each file.
        resolve: { alias },
        test: {
          name: 'node',
          environment: 'node',
          include: ['common/**/*.test.ts', 'scripts/**/*.test.ts', 'tests/contract/**/*.test.ts'],
          maxWorkers: workers,
          // Some run codegen or eslint in a child process.
          testTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          ...serverProject,
          name: 'server',
          include: ['server/**/*.test.ts'],
          exclude: heavyFiles,
          maxWorkers: workers,
        },
      },
      {
        resolve: { alias },
        test: {
          ...serverProject,
          name: 'server-heavy',
          include: heavyFiles,
          maxWorkers: workers,
          // After the unit and plain server files (group 0), so these get the cores.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
