import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import LongestFirst from './tests/support/longest-first.ts';

const alias = {
  '@common': fileURLToPath(new URL('./common', import.meta.url)),
  '@': fileURLToPath(new URL('./src', import.meta.url)),
};

const root = fileURLToPath(new URL('.', import.meta.url));

/** The test files under `dir` (relative to the root). */
function testFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.test\.tsx?$/.test(file))
    .map((file) => relative(root, join(root, dir, file)));
}

/**
 * The DOM test files that replace modules (`vi.mock`, `vi.doMock`, `vi.resetModules`): each gets a
 * fresh module graph and window, since a replaced module would leak into the next file of a shared
 * graph. The others share one per worker, which spares a jsdom window and a fresh import of React,
 * Mantine and refine per file (about 3 CPU-seconds a file); `tests/support/setup-dom.ts` empties
 * the page after each test, and restores replaced globals and variables and empties the storage
 * after each file, so a file that stubs `fetch` or `IntersectionObserver` can share.
 */
const domFiles = [...testFiles('src'), ...testFiles('tests/conformance')];
const replacesModules = (file: string) =>
  /\bvi\.(mock|doMock|resetModules)\(/.test(readFileSync(join(root, file), 'utf8'));
const isolatedDomFiles = domFiles.filter(replacesModules);
const sharedDomFiles = domFiles.filter((file) => !replacesModules(file));
/**
 * The isolated files each run in a VM context of their own (`vmThreads`), not a process of their
 * own: 1 CPU-second a file instead of 2. A file whose modules `require()` an ES module needs Node's
 * own loader, which a VM context lacks, and keeps a process: the videowall's (its modules reach
 * get-intrinsic, which requires async-function's `require.mjs`).
 */
const needsProcess = new Set(['src/features/videowall/videowall-grid.test.tsx']);

/** The heavy files run in parallel, one per core. */
const workers = availableParallelism();
/**
 * The other files run one more than there are cores: the server files wait on PostgreSQL and on
 * sockets for part of their time (two workers left the cores 12 % idle across the run), and a third
 * fills that. One group of projects takes one worker count.
 */
const groupWorkers = workers + 1;
/**
 * The server files that keep cores busy on their own: the ones that boot real QEMU (TCG) desktops
 * (the libvirt driver's under a session daemon too) and the 1,000-request booking race. They run after the others, so their time limits hold: the
 * rest of the suite does not compete with them for the cores.
 */
const heavyFiles = [
  'server/src/domains/bookings/bookings-race.test.ts',
  'server/src/domains/bookings/bookings-scheduler.test.ts',
  'server/src/domains/desktops/consoles-hardening.test.ts',
  'server/src/domains/desktops/libvirt-desktops.test.ts',
  'server/src/domains/desktops/lifecycle.test.ts',
  'server/src/domains/desktops/networks.test.ts',
  'server/src/domains/desktops/rdp-console.test.ts',
  'server/src/domains/desktops/videowall-access.test.ts',
  'server/src/domains/media/media-desktop.test.ts',
  'server/src/domains/templates/templates.test.ts',
  'server/src/platform/hypervisor/libvirt-driver.test.ts',
  'server/test/fuzz.test.ts',
];
const domProject = {
  environment: 'jsdom' as const,
  setupFiles: ['./tests/support/setup-dom.ts'],
  maxWorkers: groupWorkers,
  // refine's router bindings must share the app's (ESM) react-router, not load its CommonJS copy.
  server: { deps: { inline: [/@refinedev\//] } },
  testTimeout: 20_000,
};
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
    // The files known to run longest start first in their project (tests/support/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        plugins: [react()],
        resolve: { alias },
        test: {
          ...domProject,
          name: 'unit',
          include: sharedDomFiles,
          isolate: false,
        },
      },
      {
        plugins: [react()],
        resolve: { alias },
        test: {
          ...domProject,
          name: 'unit-isolated',
          include: isolatedDomFiles.filter((file) => !needsProcess.has(file)),
          pool: 'vmThreads',
        },
      },
      {
        plugins: [react()],
        resolve: { alias },
        test: {
          ...domProject,
          name: 'unit-process',
          include: isolatedDomFiles.filter((file) => needsProcess.has(file)),
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
          maxWorkers: groupWorkers,
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
          maxWorkers: groupWorkers,
        },
      },
      {
        resolve: { alias },
        test: {
          ...serverProject,
          name: 'server-heavy',
          include: heavyFiles,
          // One more than there are cores: these files wait on their guests, libvirt and
          // PostgreSQL for much of their time (two workers kept 1.2 of the 2 cores busy).
          maxWorkers: groupWorkers,
          // After the unit and plain server files (group 0), so these get the cores.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
